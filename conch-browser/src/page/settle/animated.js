// A function called as (wait, animations, since, max, bound): `wait` gives quiet.js's
// promise, `animations` is the act's animations.js, `since` the ms since the act began
// when this was sent, `max` the most to wait for the transitions, `bound` the wait's own
// bound. Once the wait answers quiet, the transitions the act started are waited for in
// the same call (issue 32: one round trip less per act). Resolves with the wait's answer
// and `animated`: whether they were.
//
// A header the act flipped open (aria-expanded turned true) whose content has not come
// yet (what it controls is missing, hidden or of no height; without aria-controls, the
// act changed nothing but the header and the element after it is not shown) is waited
// for too (issue 30): Quasar's expansion
// starts its slide 100 ms after the flip, past the quiet window, and a NiceGUI app's
// content may come with its server's answer. The next change the page makes, within
// `reveal` ms, starts a new quiet window and transitions wait; at most until `bound` and
// `max` from now have passed. A header whose content shows costs nothing more.
(wait, animations, since, max, bound) => {
  const sent = performance.now();
  const reveal = 400;
  const deadline = sent + bound + max;
  const shown = (el) => {
    if (!el || !el.isConnected) return false;
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return false;
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (style.overflowY !== 'visible' && up.getBoundingClientRect().height < 2) return false;
    }
    return true;
  };
  // Whether a header the act flipped open still waits for its content.
  const pending = (header, beyond) => {
    if (!header.isConnected || header.getAttribute('aria-expanded') !== 'true') return false;
    const ids = (header.getAttribute('aria-controls') || '').split(/\s+/).filter(Boolean);
    if (ids.length) return ids.some((id) => !shown(document.getElementById(id)));
    // A disclosure's panel right after it, shown by a style on the flip, came with it.
    const next = header.nextElementSibling;
    return !beyond && !(next && !/^(SCRIPT|STYLE|TEMPLATE)$/.test(next.tagName) && shown(next));
  };
  // `look` run with what runs now set to its end, as snapshot.js reads a page
  // (at_their_end.js): a panel growing open is judged shown by where it ends.
  const atTheirEnd = AT_THEIR_END;
  const transitions = () => {
    try {
      return Promise.resolve(animations(since + (performance.now() - sent), max))
        .then(() => true, () => false);
    } catch (e) {
      return Promise.resolve(false);
    }
  };
  // The next change to the document, or null after `ms`.
  const change = (ms) => new Promise((resolve) => {
    const observer = new MutationObserver(() => { observer.disconnect(); clearTimeout(timer); resolve(true); });
    const timer = setTimeout(() => { observer.disconnect(); resolve(false); }, ms);
    observer.observe(document.documentElement || document, {subtree: true, childList: true, attributes: true, characterData: true});
  });
  const plain = (answer, animated) => ({ quiet: answer.quiet, churned: answer.churned, animated });
  const settle = (answer, rounds) => {
    if (!answer || !answer.quiet) return answer && plain(answer, false);
    const flips = answer.watch ? Array.from(answer.watch.flips) : [];
    const beyond = answer.watch ? answer.watch.beyond : true;
    return transitions().then((animated) => {
      const left = deadline - performance.now();
      if (!animated || rounds <= 0 || left <= 0 || !atTheirEnd(() => flips.some((h) => pending(h, beyond)))) {
        return plain(answer, animated);
      }
      return change(Math.min(reveal, left)).then((changed) => {
        if (!changed) return plain(answer, animated);
        return wait().then((next) => {
          if (!next || !next.quiet) return plain(answer, animated);
          // The headers flipped in the first window still count in the next.
          if (next.watch) for (const h of flips) next.watch.flips.add(h);
          const merged = Object.defineProperty(
            { quiet: true, churned: answer.churned || next.churned }, 'watch', { value: next.watch });
          return settle(merged, rounds - 1);
        });
      });
    });
  };
  // Never past the bound the caller waits for: then with what was found so far.
  let found = null;
  const bounded = new Promise((resolve) => setTimeout(() => resolve(found && plain(found, true)), deadline - sent));
  return Promise.race([wait().then((answer) => { found = answer; return settle(answer, 3); }), bounded]);
}
