// An expression. The page's text as a wait looks for words in it (TOOL-20, issue 30): the
// rendered text of the document's body, of every open shadow root and of every
// same-origin frame, each in turn, so a wait sees what browser_read and find see.
(() => {
  const parts = [];
  const walk = (root, depth) => {
    if (depth > 8) return;
    if (root.body) parts.push(root.body.innerText);
    else for (const el of root.children) parts.push(el.innerText || el.textContent || '');
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot, depth + 1);
      if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') {
        let inner = null;
        try { inner = el.contentDocument; } catch (e) { inner = null; }
        if (inner) walk(inner, depth + 1);
      }
    }
  };
  if (document.body) walk(document, 0);
  return parts.join('\n');
})()
