// A function called as (look). Runs `look` with the running animations that end within a
// second (a drawer sliding in, a panel growing open, an item scaling into place: issue
// 30) set to their end, and puts each back where it was in the same task, so no frame
// shows it and no event fires. One not started yet (pending) is left as it stands.
// Returns what `look` returns. The snapshot reads a page through it, and so does the
// act's check that a header it flipped open shows its content.
(look) => {
  const moved = [];
  if (!document.hidden && typeof document.getAnimations === 'function') {
    for (const a of document.getAnimations()) {
      if (a.playState !== 'running' || a.pending || !a.effect) continue;
      const timing = a.effect.getComputedTiming();
      if (!Number.isFinite(timing.endTime) || timing.localTime === null) continue;
      const left = timing.endTime - timing.localTime;
      if (!(left > 0 && left <= 1000)) continue;
      const was = a.currentTime;
      try {
        a.currentTime = timing.endTime;
        moved.push([a, was]);
      } catch (e) { /* an animation that cannot be set is read as it stands */ }
    }
  }
  try {
    return look();
  } finally {
    for (const [a, was] of moved) {
      try { a.currentTime = was; } catch (e) { /* it ends as it would have */ }
    }
  }
}
