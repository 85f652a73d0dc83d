// Called on a field, with the focus check pasted in (with_prelude). Focuses it without
// scrolling. Returns whether it now holds the focus.
function() {
  this.focus({preventScroll: true});
  return (FOCUS_HELD).call(this);
}
