// A function called as (watch, quiet, first, after, max, key, frame), watch being
// watch.js, times in ms. Returns a promise of {quiet, churned}: whether the DOM went quiet
// before `max` (`first` after the held watch's start when nothing changed, or with `frame`
// as soon as an animation frame and a task after it have run since this call, if
// sooner; `quiet` after the last fresh change; never sooner than `after` from now; true
// at once for a hidden page), and whether it kept changing on its own meanwhile (churn,
// which does not hold the window open; see watch.js).
(watch, quiet, first, after, max, key, frame) => new Promise(resolve => {
  const start = performance.now();
  const held = globalThis.__conchSettle && globalThis.__conchSettle.get(key);
  if (held) globalThis.__conchSettle.delete(key);
  const w = held || watch();
  if (!held) w.last = start;
  // Changes made but not yet delivered to the observer.
  w.take();
  const done = () => { w.stop(); };
  // The watch's flips ride along unserialised, for animated.js.
  const answer = (quiet) => Object.defineProperty({ quiet, churned: w.churned >= 0 }, 'watch', { value: w });
  // A page sent to the background (the act opened a tab in front of it) gets its timers
  // throttled to about one a second: there is nothing more to wait for on it.
  const hidden = () => { done(); resolve(answer(true)); };
  if (document.hidden) return hidden();
  document.addEventListener('visibilitychange', () => { if (document.hidden) hidden(); }, {once: true});
  // Whether a frame has passed: the page's own frame callbacks (queued during the act)
  // run before this one, and their changes reach the watch before the task after it.
  let framed = false;
  const unchanged = (now) => framed ? 0 : first - (now - w.start);
  const left = (now) => Math.max(after - (now - start), w.last >= 0 ? quiet - (now - w.last) : unchanged(now));
  let ended = false;
  const tick = () => {
    if (ended) return;
    w.take();
    const now = performance.now();
    if (left(now) <= 0 || now - start >= max) {
      ended = true;
      done();
      resolve(answer(left(now) <= 0));
    } else {
      setTimeout(tick, Math.max(5, left(now)));
    }
  };
  if (frame) requestAnimationFrame(() => setTimeout(() => { framed = true; tick(); }, 0));
  setTimeout(tick, Math.max(0, left(start)));
})
