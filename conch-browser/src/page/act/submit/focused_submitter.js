// An expression, submitter_of.js pasted in place of SUBMITTER_OF and act/js/focused.js in
// place of FOCUSED. Returns the submitter of the focused element, through same-origin
// frames and shadow roots; a cross-origin frame that holds the focus is returned as
// itself, so the walk goes on inside it.
(() => {
  SUBMITTER_OF
  const a = FOCUSED;
  if (a && (a.tagName === 'IFRAME' || a.tagName === 'FRAME')) return a;
  return submitterOf(a);
})()
