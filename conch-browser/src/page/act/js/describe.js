// Called on an element (or a text node, for its element), prelude pasted in. Returns
// describe(el) plus frameFacts(el) and `document`, the address of its own document.
function() {
  PRELUDE
  const el = this.nodeType === 1 ? this : (this.parentElement || this);
  return Object.assign(describe(el), frameFacts(el), {document: el.ownerDocument ? el.ownerDocument.URL : ''});
}
