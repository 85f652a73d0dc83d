// Pasted into focus.js and has_focus.js, called there on an element. Returns whether its
// document's active element, through shadow roots, is it and the document has the
// browser's focus.
function() {
  const doc = this.ownerDocument;
  let a = doc.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a === this && doc.hasFocus();
}
