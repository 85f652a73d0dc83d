// Called on an element, submitter_of.js pasted in. Returns its submitter (submitterOf),
// or null.
function() {
  SUBMITTER_OF
  return submitterOf(this);
}
