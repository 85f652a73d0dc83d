// An expression. The page's words as its documents hold them, lower case and with no
// whitespace, read without laying the page out (issue 30): the text of the document's
// body, of every open shadow root and of every same-origin frame, as `page_text.js`
// walks them. A quick look for words a wait wants: what the rendered text holds is in
// here too, unless a hidden node splits it (the wait then reads the rendered text now
// and then all the same).
(() => {
  const parts = [];
  const walk = (root, depth) => {
    if (depth > 8) return;
    if (root.body) parts.push(root.body.textContent);
    else for (const el of root.children) parts.push(el.textContent || '');
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
  return parts.join('').replace(/\s+/g, '').toLowerCase();
})()
