// Called on an element, prelude pasted in. Scrolls into view, inside every panel and
// frame that holds it, what the pointer presses, and returns it: the element itself, or
// the reachable label of an unreachable one (a styled check box). Null when the element
// left the document.
function() {
  PRELUDE
  if (!this.isConnected) return null;
  return pressTargetInView(this);
}
