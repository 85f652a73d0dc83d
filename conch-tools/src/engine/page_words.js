// An expression. The page's words as its documents hold them, lower case and with no
// whitespace, read without laying the page out (issue 30): the text of the document's
// body, of every open shadow root and of every same-origin frame, as `page_text.js`
// walks them, without the text of a long script, style, noscript or template, which is
// never shown (TiddlyWiki keeps its 2.6 MB of tiddlers in a script: reading it made each
// look cost 35 ms, more than the 25 ms between looks). A quick look for words a wait
// wants: what the rendered text holds is in here too, unless a hidden node splits it
// (the wait then reads the rendered text now and then all the same).
(() => {
  const parts = [];
  // The text of `el`, less that of the `unshown` nodes inside it: whole when none is
  // (one native read), else node by node along the way to them only.
  const text = (el, unshown) => {
    if (unshown.includes(el)) return;
    if (!unshown.some((u) => el.contains(u))) return parts.push(el.textContent || '');
    for (const node of el.childNodes) {
      if (node.nodeType === 3) parts.push(node.data);
      else if (node.nodeType === 1) text(node, unshown);
    }
  };
  const walk = (root, depth) => {
    if (depth > 8) return;
    // A document keeps its lists by tag name between looks; a shadow root has none.
    const unshown = [];
    for (const tag of ['script', 'style', 'noscript', 'template']) {
      const found = root.getElementsByTagName ? root.getElementsByTagName(tag) : root.querySelectorAll(tag);
      for (const el of found) if ((el.textContent || '').length > 4096) unshown.push(el);
    }
    if (root.body) text(root.body, unshown);
    else for (const el of root.children) text(el, unshown);
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
