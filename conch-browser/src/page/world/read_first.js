// An expression for the reader's world, with world/added.js pasted in place of
// ADDED_WATCH. Returns [document.readyState, whether elements were added since the
// listener marks were last asked, the snapshot or null]: the snapshot is taken at once
// when the document is parsed and no element was added (nothing to mark first), so a read
// of a page an act changed only the words of is one round trip (issue 32).
(() => {
  const state = document.readyState;
  const added = ADDED_WATCH;
  return [state, added, state !== 'loading' && added === false ? __conch.snapshot() : null];
})()
