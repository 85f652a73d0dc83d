// Called on an element of an out-of-process frame. Starts watching the element's window,
// in the capture phase, for the pointer (a trusted move, entry or press), and returns the
// watch: a function called with a bound in ms that ends it (its listeners removed) once
// the pointer came or the bound passed, and resolves to whether it came. Until the
// browser has drawn such a frame, it sends the frame no input: the pointer's move goes
// to the page around the frame (issue 31). A move can be answered before the frame's
// page has seen it, hence the bound.
function() {
  const win = this.ownerDocument && this.ownerDocument.defaultView;
  if (!win) return null;
  const kinds = ['pointermove', 'mousemove', 'pointerover', 'mouseover', 'pointerdown', 'mousedown'];
  let came = false;
  let wake = null;
  const seen = (e) => {
    if (!e.isTrusted) return;
    came = true;
    if (wake) wake();
  };
  for (const kind of kinds) win.addEventListener(kind, seen, true);
  return (within) => new Promise((resolve) => {
    const end = () => {
      for (const kind of kinds) win.removeEventListener(kind, seen, true);
      resolve(came);
    };
    if (came) return end();
    wake = end;
    setTimeout(end, within);
  });
}
