// An expression, evaluated in Conch's isolated world of a frame. Returns the focused
// element, through same-origin frames and shadow roots (a cross-origin frame that holds
// the focus is returned as itself).
(() => {
  let a = document.activeElement;
  for (let i = 0; a && i < 16; i++) {
    if (a.shadowRoot && a.shadowRoot.activeElement) { a = a.shadowRoot.activeElement; continue; }
    if (a.tagName === 'IFRAME' || a.tagName === 'FRAME') {
      let cd = null;
      try { cd = a.contentDocument; } catch (e) { cd = null; }
      if (cd && cd.activeElement) { a = cd.activeElement; continue; }
    }
    break;
  }
  return a;
})()
