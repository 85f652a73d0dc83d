// Called with `since` (ms: how long ago the act began) and `max` (ms). Returns a promise
// of how many CSS transitions and animations it waited for: those of the document that
// started since the act (or are about to) and end on their own within `max` (an opening
// panel's slide or fade, issue 30), never a spinner that runs for ever. Only those the
// snapshot would misread while they run count: a box that grows, slides, scales or fades
// and holds words or controls. Not a colour, a shadow, an outline or a filter (a hover, a
// focus ring, a tab's label turning dark), not a pseudo-element (a tab's underline
// indicator), not an empty box (a ripple, a spinner's dot), not a slide, fade or margin
// change of a box already laid out within the viewport that does not fade out (a menu or
// a dialog scaling in, even from nothing: the snapshot reads a box whatever its opacity;
// a story's new item whose margin grows as it fades in, a sidebar item scaling down into
// place over the viewport's edge), nor a box of words alone (no element inside) readable
// now and at its end, whatever its size and place do (a field's floating label: Quasar's
// took 360 ms of every typed field): the snapshot reads them the same
// mid-way as at their end (a MkDocs content tab's click waited 320 ms for its indicator
// and its labels' colour, a Quasar dialog's 300 ms and a TiddlyWiki tiddler's 400 ms for
// their fade in). Of those, a slide that ends shown (a drawer sliding in, TiddlyWiki's
// sidebar item scaling into place) is waited for only until it has started, as the
// snapshot reads a running animation as at its end (at_their_end.js); one that ends with
// its box hidden or gone, or that grows or folds a box, to its end.
// Waits at most `max` ms, and one animation frame more for what their end changes.
function(since, max) {
  const now = document.timeline ? document.timeline.currentTime : null;
  if (now === null || document.hidden || !document.getAnimations) return 0;
  const started = now - since - 20;
  // Properties whose change the snapshot never sees: paint, not box, place or visibility.
  const paint = /color|shadow|^background|^outline|^filter|^backdropfilter|^fill|^stroke|^textdecoration|^cursor|^borderradius|^mask/;
  const keyOf = (name) => name.toLowerCase().replace(/[^a-z]/g, '');
  const properties = (a) => {
    if (typeof a.transitionProperty === 'string') return [a.transitionProperty];
    const names = new Set();
    let frames = [];
    try { frames = a.effect.getKeyframes(); } catch (e) { frames = []; }
    for (const frame of frames) {
      for (const name of Object.keys(frame)) {
        if (!['offset', 'computedOffset', 'easing', 'composite'].includes(name)) names.add(name);
      }
    }
    return Array.from(names);
  };
  // Words or a control inside: what the snapshot shows of a box.
  const holdsContent = (el) =>
    (el.textContent || '').trim() !== '' ||
    !!el.querySelector('input,select,textarea,button,a[href],img,[role],[tabindex],[aria-label],[contenteditable]');
  // Properties that move or fade a box, or change only the space around it: its own
  // words and controls stay as they are read.
  const motion = /^(opacity|transform|translate|scale|rotate)$|^margin/;
  // The opacity the animation ends at, when it names one.
  const endOpacity = (a) => {
    let frames = [];
    try { frames = a.effect.getKeyframes(); } catch (e) { frames = []; }
    const last = frames.length ? frames[frames.length - 1] : null;
    const value = last && last.opacity !== undefined ? parseFloat(last.opacity) : NaN;
    return Number.isFinite(value) ? value : null;
  };
  // A box the snapshot reads now as it will at the end of a slide or fade in: laid out,
  // of some size, and within the viewport's width (a drawer still sliding in from the
  // side is not). Its opacity does not count: the snapshot reads a box fading in from
  // nothing as it reads it at the end (a fade out is told by where it ends).
  const readableNow = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return false;
    return !(r.left < -1 || r.right > innerWidth + 1);
  };
  // What the snapshot leaves out: a box wholly off the sides of the viewport or of a box
  // that clips it, across (`clip` is [left, right]).
  const off = (r, clip) => r.width > 0 && r.height > 0 && (r.right <= clip[0] || r.left >= clip[1]);
  const clipOf = (el) => {
    let clip = [0, innerWidth];
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflowX === 'visible') continue;
      const r = up.getBoundingClientRect();
      clip = [Math.max(clip[0], r.left), Math.min(clip[1], r.right)];
    }
    return clip;
  };
  const identity = (transform) => {
    if (!transform || transform === 'none') return true;
    try { return new DOMMatrixReadOnly(transform).isIdentity; } catch (e) { return false; }
  };
  // A box that scales or moves into place (its own transform running to none, only a
  // scale and a move, no transformed box around it), read now as at its end: neither it
  // nor anything in it (at most `MOST_INSIDE` elements) is left out now and shown at the
  // end, or shown now and left out at the end (a sidebar item scaling down from twice its
  // size over the viewport's edge; TiddlyWiki's is still waited for, as its close button
  // starts outside the sidebar's scrolling box; a carousel's track sliding to its next
  // slide ends moved, so it is not one).
  const MOST_INSIDE = 200;
  const readableAsAtEnd = (el) => {
    const moving = el.getAnimations().filter((a) => properties(a).map(keyOf).includes('transform'));
    if (!moving.length) return null;
    for (const a of moving) {
      let frames = [];
      try { frames = a.effect.getKeyframes(); } catch (e) { return null; }
      const last = frames.length ? frames[frames.length - 1] : null;
      if (!last || !identity(last.transform)) return null;
    }
    for (let up = el.parentElement; up; up = up.parentElement) {
      if (!identity(getComputedStyle(up).transform)) return null;
    }
    const style = getComputedStyle(el);
    let m;
    try { m = new DOMMatrixReadOnly(style.transform === 'none' ? undefined : style.transform); } catch (e) { return null; }
    if (!m.is2D || m.b !== 0 || m.c !== 0 || !(m.a > 0) || !(m.d > 0)) return null;
    const [ox] = style.transformOrigin.split(' ').map(parseFloat);
    if (!Number.isFinite(ox)) return null;
    const r = el.getBoundingClientRect();
    // Its box's left without the transform, and the origin the transform is around.
    const origin = r.left - ox * (1 - m.a) - m.e + ox;
    const atEnd = (q) => {
      const left = origin + (q.left - m.e - origin) / m.a;
      const right = origin + (q.right - m.e - origin) / m.a;
      return { left, right, width: right - left, height: q.height / m.d };
    };
    const clip = clipOf(el);
    const inside = el.getElementsByTagName('*');
    if (inside.length > MOST_INSIDE) return null;
    if (off(atEnd(r), clip)) return false;
    for (const box of [el, ...inside]) {
      const now = box.getBoundingClientRect();
      if (off(now, clip) !== off(atEnd(now), clip)) return false;
    }
    return true;
  };
  // Words and nothing else: the snapshot reads them whole while the box is laid out.
  const wordsOnly = (el) => !el.firstElementChild && (el.textContent || '').trim() !== '';
  // A length the box ends at that still shows its words: none or auto, a share of its
  // container's, or 2 px and more.
  const showsAt = (length) => {
    if (/^(auto|none)$/.test(length)) return true;
    const n = parseFloat(length);
    return /%$/.test(length) ? n > 0 : /px$/.test(length) && n >= 2;
  };
  // A transform that leaves `el` about where it is: moved by at most half its size,
  // scaled by a quarter or more, turned not at all (a floating label's rise and shrink).
  const staysNear = (transform, el) => {
    if (!transform || transform === 'none') return true;
    const w = el.offsetWidth, h = el.offsetHeight;
    const length = (v, of) => /%$/.test(v) ? parseFloat(v) / 100 * of
      : (/px$/.test(v) || /^-?[\d.]+$/.test(v) ? parseFloat(v) : NaN);
    const parts = transform.match(/[a-zA-Z0-9]+\([^)]*\)/g) || [];
    if (parts.join('').replace(/\s/g, '') !== transform.replace(/\s/g, '')) return false;
    let tx = 0, ty = 0, sx = 1, sy = 1;
    for (const part of parts) {
      const [, name, body] = part.match(/^(\w+)\((.*)\)$/);
      const args = body.split(',').map((v) => v.trim());
      if (name === 'translate' || name === 'translate3d') {
        tx += length(args[0], w);
        ty += args[1] === undefined ? 0 : length(args[1], h);
      } else if (name === 'translateX') tx += length(args[0], w);
      else if (name === 'translateY') ty += length(args[0], h);
      else if (name === 'scale' || name === 'scale3d') {
        sx *= parseFloat(args[0]);
        sy *= parseFloat(args[1] === undefined ? args[0] : args[1]);
      } else if (name === 'scaleX') sx *= parseFloat(args[0]);
      else if (name === 'scaleY') sy *= parseFloat(args[0]);
      else if (name === 'matrix') {
        let m;
        try { m = new DOMMatrixReadOnly(part); } catch (e) { return false; }
        if (m.b !== 0 || m.c !== 0) return false;
        tx += m.e; ty += m.f; sx *= m.a; sy *= m.d;
      } else return false;
    }
    return [tx, ty, sx, sy].every(Number.isFinite) && sx >= 0.25 && sy >= 0.25
      && Math.abs(tx) <= w / 2 + 1 && Math.abs(ty) <= h / 2 + 1;
  };
  // Whether `a` ends with its box hidden or gone: faded out, hidden, folded or shrunk to
  // nothing. The page often takes such a box out once it ends (a dialog closing), so it
  // is waited for to its end.
  const hidesAtEnd = (a) => {
    let frames = [];
    try { frames = a.effect.getKeyframes(); } catch (e) { return true; }
    const last = frames.length ? frames[frames.length - 1] : null;
    if (!last) return true;
    const end = endOpacity(a);
    if (end !== null && end < 0.05) return true;
    if (last.visibility === 'hidden' || last.display === 'none') return true;
    for (const side of ['height', 'maxHeight', 'width', 'maxWidth']) {
      if (last[side] !== undefined && !showsAt(String(last[side]))) return true;
    }
    const small = (text) => String(text).split(/[\s,]+/).map(parseFloat)
      .some((n) => Number.isFinite(n) && Math.abs(n) < 0.25);
    if (last.scale !== undefined && last.scale !== 'none' && small(last.scale)) return true;
    const transform = String(last.transform || '');
    for (const [, name, body] of transform.matchAll(/(scale[XYZ3d]*|matrix)\(([^)]*)\)/g)) {
      const args = body.split(',').map(parseFloat);
      const factors = name === 'matrix' ? [args[0], args[3]] : args.slice(0, 2);
      if (factors.some((n) => Number.isFinite(n) && Math.abs(n) < 0.25)) return true;
    }
    return false;
  };
  // Whether `el` still shows its words where it is when `a` ends: not faded out, hidden,
  // shrunk to nothing or moved away.
  const endsReadable = (a, el) => {
    if (hidesAtEnd(a)) return false;
    const frames = a.effect.getKeyframes();
    const last = frames[frames.length - 1];
    for (const own of ['translate', 'scale', 'rotate']) {
      if (last[own] !== undefined && last[own] !== 'none') return false;
    }
    return staysNear(last.transform, el);
  };
  // Whether `a` only moves, scales or fades its box (and paints it): its words and
  // controls are the same at every step, only where they stand changes.
  const slides = (a) => {
    const names = properties(a).map(keyOf);
    return names.length > 0 && names.every((name) => paint.test(name) || motion.test(name));
  };
  const matters = (a) => {
    const effect = a.effect;
    if (!effect || effect.pseudoElement) return false;
    const target = effect.target;
    if (!target || target.nodeType !== 1) return false;
    const names = properties(a).map(keyOf);
    // A property the page animates that is not named (a script's own keyframes) counts.
    if (names.length && names.every((name) => paint.test(name))) return false;
    if (!holdsContent(target)) return false;
    if (wordsOnly(target) && readableNow(target) && endsReadable(a, target)) return false;
    // A slide or fade of a box already readable, that does not end hidden (a menu or a
    // dialog scaling and fading in), is read now: only its place and shade change.
    if (slides(a)) {
      const end = endOpacity(a);
      if (end !== null && end < 0.05) return true;
      const asAtEnd = readableAsAtEnd(target);
      if (asAtEnd !== null ? asAtEnd : readableNow(target)) return false;
    }
    return true;
  };
  const candidates = document.getAnimations().filter((a) => {
    if (a.playState !== 'running' && !a.pending) return false;
    if (a.startTime !== null && a.startTime < started) return false;
    const timing = a.effect ? a.effect.getComputedTiming() : null;
    if (!timing || !Number.isFinite(timing.endTime)) return false;
    const left = timing.endTime - (timing.localTime || 0);
    return left > 0 && left <= max && matters(a);
  });
  // A slide that ends shown (a drawer sliding in, TiddlyWiki's sidebar item scaling into
  // place) is waited for only until it has started (the snapshot leaves a pending one as
  // it stands); one that ends hidden, or that grows or folds a box, to its end (an
  // accordion's content may still be coming from its server while it grows).
  const waiting = candidates.filter((a) => hidesAtEnd(a) || a.pending || !slides(a));
  const toItsEnd = (a) => hidesAtEnd(a) || !slides(a);
  if (!waiting.length) return 0;
  const ended = Promise.all(waiting.map((a) => (toItsEnd(a) ? a.finished : a.ready).catch(() => null)));
  const bound = new Promise((resolve) => setTimeout(resolve, max));
  return Promise.race([ended, bound])
    .then(() => new Promise((resolve) => requestAnimationFrame(() => resolve(waiting.length))));
}
