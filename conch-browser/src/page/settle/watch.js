// A function of no arguments, passed to hold.js or quiet.js. Starts watching the DOM and
// returns the watch: {start, last} (the time of its last change, -1 for none yet) and its
// MutationObserver `observer`.
() => {
  const watch = { start: performance.now(), last: -1 };
  watch.observer = new MutationObserver(() => { watch.last = performance.now(); });
  watch.observer.observe(document.documentElement || document, {subtree: true, childList: true, attributes: true, characterData: true});
  return watch;
}
