// Called on an element with `hit` (the node the pointer meets), prelude pasted in.
// Returns whether `hit` is the element, inside it (shadow trees included) or inside one
// of its labels.
function(hit) {
  PRELUDE
  const el = this;
  if (!hit || !el.isConnected) return false;
  if (composedContains(el, hit)) return true;
  if (el.labels) for (const l of el.labels) if (composedContains(l, hit)) return true;
  return false;
}
