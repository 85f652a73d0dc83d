// Called with `since` (ms: how long ago the act began) and `max` (ms). Returns a promise
// of how many CSS transitions and animations it waited for: those of the document that
// started since the act (or are about to) and end on their own within `max` (an opening
// panel's slide or fade, issue 30), never a spinner that runs for ever. Waits at most
// `max` ms, and one animation frame more for what their end changes.
function(since, max) {
  const now = document.timeline ? document.timeline.currentTime : null;
  if (now === null || document.hidden || !document.getAnimations) return 0;
  const started = now - since - 20;
  const waiting = document.getAnimations().filter((a) => {
    if (a.playState !== 'running' && !a.pending) return false;
    if (a.startTime !== null && a.startTime < started) return false;
    const timing = a.effect ? a.effect.getComputedTiming() : null;
    if (!timing || !Number.isFinite(timing.endTime)) return false;
    const left = timing.endTime - (timing.localTime || 0);
    return left > 0 && left <= max;
  });
  if (!waiting.length) return 0;
  const ended = Promise.all(waiting.map((a) => a.finished.catch(() => null)));
  const bound = new Promise((resolve) => setTimeout(resolve, max));
  return Promise.race([ended, bound])
    .then(() => new Promise((resolve) => requestAnimationFrame(() => resolve(waiting.length))));
}
