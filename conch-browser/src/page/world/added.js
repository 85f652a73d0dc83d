// An expression. Whether elements were added to the document since the last time it was
// asked (issue 30: the listener marks are asked of DevTools only then): true the first
// time for a document, which starts the watch (a MutationObserver in Conch's world that
// only notes an added element), and then whether one was added since.
(() => {
  const was = globalThis.__conchAdded;
  if (was && was.doc === document) { const added = was.added; was.added = false; return added; }
  const watch = { doc: document, added: false };
  const seen = (records) => {
    if (watch.added) return;
    for (const r of records) for (const n of r.addedNodes) if (n.nodeType === 1) { watch.added = true; return; }
  };
  const observer = new MutationObserver(seen);
  observer.observe(document, {subtree: true, childList: true});
  globalThis.__conchAdded = watch;
  return true;
})()
