// Called on an element, with the focus check pasted in (with_prelude). Returns whether it
// holds the keyboard focus now, its document's focus included.
function() { return (FOCUS_HELD).call(this); }
