// Called on an element that can't be reached, prelude pasted in. Returns the control that
// opens what it is inside, described, with the ref a read gave it (`ref`, a number, or
// null); null when none is found.
function() {
  PRELUDE
  return revealer(this);
}
