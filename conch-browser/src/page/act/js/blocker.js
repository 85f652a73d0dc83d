// Called on the node the pointer meets instead of the element, prelude pasted in.
// Returns describe() of what a person would close: the dialog or the fixed, sticky or
// absolute layer around the node, or the node itself.
function() {
  PRELUDE
  const hit = this.nodeType === 1 ? this : (this.parentElement || (this.parentNode && this.parentNode.host));
  if (!hit) return describe(this);
  const doc = hit.ownerDocument;
  const view = doc.defaultView;
  let b = null, fixed = null;
  for (let n = hit; n && n !== doc.body && n !== doc.documentElement;
       n = n.parentElement || (n.parentNode && n.parentNode.host) || null) {
    const role = n.getAttribute('role');
    if (n.localName === 'dialog' || role === 'dialog' || role === 'alertdialog' || n.getAttribute('aria-modal') === 'true') { b = n; break; }
    const pos = view.getComputedStyle(n).position;
    if (pos === 'fixed' || pos === 'sticky' || pos === 'absolute') fixed = n;
  }
  return describe(b || fixed || hit);
}
