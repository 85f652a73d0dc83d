// A function of no arguments. Starts, once per document in Conch's world, the churn
// learner: a MutationObserver that keeps, for each node that changes, its streak of
// changes less than two seconds apart in a WeakMap ({n, since, last}: how many of them came
// on their own, while no act was being settled, when the streak began, its last change),
// and returns it as {take(), churning(node, before, now), acting} (issue 30). A node
// churns when it changed on its own four times or more in a streak that began before
// `before` (the act) and is still going: a clock, a chart a timer redraws, a progress
// bar, an animation. The act's own changes come while it is settled and its burst begins
// after it, so they are never churn, however long they last; nor is a node the agent's
// acts change one after another. A node below a churning one churns too (a chart's new
// bars), except below <body> itself. `acting` counts the watches (watch.js) running;
// `release()` stops them all.
() => {
  const existing = globalThis.__conchChurn;
  if (existing && existing.doc === document) return existing;
  const AGAIN = 2000, TIMES = 4;
  const known = new WeakMap();
  const learner = { doc: document, acting: 0, watches: new Set() };
  // Stops every watch still running: one whose wait was given up (a load ended it).
  learner.release = () => { for (const stop of [...learner.watches]) stop(); return true; };
  const seen = (records) => {
    const now = performance.now();
    for (const target of new Set(records.map(r => r.target))) {
      let rec = known.get(target);
      if (!rec || now - rec.last >= AGAIN) { rec = { n: 0, since: now }; known.set(target, rec); }
      if (learner.acting === 0) rec.n++;
      rec.last = now;
    }
  };
  const observer = new MutationObserver(seen);
  observer.observe(document.documentElement || document, {subtree: true, childList: true, attributes: true, characterData: true});
  const root = [document, document.documentElement, document.body, document.head];
  learner.take = () => { const records = observer.takeRecords(); if (records.length) seen(records); };
  learner.churning = (node, before, now) => {
    for (let n = node, depth = 0; n && depth < 64; n = n.parentNode, depth++) {
      if (root.includes(n)) return false;
      const rec = known.get(n);
      if (rec && rec.n >= TIMES && rec.since < before && now - rec.last < AGAIN) return true;
    }
    return false;
  };
  globalThis.__conchChurn = learner;
  return learner;
}
