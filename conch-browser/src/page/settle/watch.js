// A function called as (learn), learn being learn.js, passed to hold.js or quiet.js.
// Starts watching the DOM and returns the watch: {start, last, churned} (the time of its
// last fresh change and of its last churn, -1 for none yet), its `take()`, which reads the
// changes made but not yet delivered, and `stop()`.
//
// A change is churn when the learner (learn.js) says its node was already changing on its
// own before the watch began and still is (issue 30): churn does not hold the quiet
// window open, so an act on a page that never goes quiet is judged by its own effects.
//
// It also keeps `flips`, the elements whose aria-expanded turned true, and `beyond`,
// whether a fresh change touched more than their own attributes: a header that flipped
// while what it reveals has not come yet (animated.js waits for it, issue 30).
(learn) => {
  const learner = learn();
  // Changes before the act came on their own.
  learner.take();
  learner.acting++;
  const watch = { start: performance.now(), last: -1, churned: -1, flips: new Set(), beyond: false };
  const seen = (records) => {
    learner.take();
    const now = performance.now();
    let fresh = false;
    for (const r of records) {
      if (r.type === 'attributes' && r.attributeName === 'aria-expanded' &&
          r.target.getAttribute && r.target.getAttribute('aria-expanded') === 'true') watch.flips.add(r.target);
    }
    const churning = new Set();
    for (const target of new Set(records.map(r => r.target))) {
      if (learner.churning(target, watch.start, now)) { watch.churned = now; churning.add(target); } else fresh = true;
    }
    for (const r of records) {
      if (!churning.has(r.target) && !(r.type === 'attributes' && watch.flips.has(r.target))) watch.beyond = true;
    }
    if (fresh) watch.last = now;
  };
  const observer = new MutationObserver(seen);
  watch.take = () => { const records = observer.takeRecords(); if (records.length) seen(records); };
  let stopped = false;
  watch.stop = () => { if (!stopped) { stopped = true; observer.disconnect(); learner.acting--; learner.watches.delete(watch.stop); } };
  learner.watches.add(watch.stop);
  observer.observe(document.documentElement || document, {subtree: true, childList: true, attributes: true, characterData: true});
  return watch;
}
