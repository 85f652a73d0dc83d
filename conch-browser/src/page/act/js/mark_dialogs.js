// An expression, evaluated in Conch's isolated world of the top frame. Marks the dialogs
// open now (a <dialog> that is open, an element of role dialog or alertdialog, or an
// aria-modal one, that is rendered), so a description can tell a dialog that opens later
// (`dialogFresh`, issue 30). Returns how many it marked.
(() => {
  const seen = new WeakSet();
  let n = 0;
  for (const d of document.querySelectorAll('dialog,[role=dialog],[role=alertdialog],[aria-modal=true]')) {
    const shown = d.localName === 'dialog' ? d.open : true;
    const rendered = d.checkVisibility ? d.checkVisibility({visibilityProperty: true}) : true;
    if (shown && rendered) { seen.add(d); n++; }
  }
  globalThis.__conchDialogs = seen;
  return n;
})()
