// An expression, with __PLENTY__ replaced by a number of characters. Returns {status,
// title, text, markup, formControls}: the navigation's status, the title, the visible text
// (its first __PLENTY__ characters and no markup when it has that many) and the markup
// that carries markers.
(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const status = nav && nav.responseStatus ? nav.responseStatus : null;
  const body = document.body;
  const text = body ? (body.innerText || '') : '';
  const controls = document.querySelectorAll('input:not([type=hidden]), select, textarea').length;
  const title = document.title || '';
  const trimmed = text.trim();
  if (trimmed.length >= __PLENTY__) {
    return {status, title, text: trimmed.slice(0, __PLENTY__), markup: '', formControls: controls};
  }
  const parts = [];
  let size = 0;
  const add = (part) => {
    if (!part || size >= 300000) return;
    const kept = String(part).slice(0, 300000 - size);
    parts.push(kept);
    size += kept.length + 1;
  };
  for (const el of document.getElementsByTagName('*')) {
    for (const attribute of el.attributes) add(attribute.value);
    if (el.localName === 'script' && !el.src) add(el.text.slice(0, 20000));
    if (size >= 300000) break;
  }
  return {status, title, text: text.slice(0, 20000), markup: parts.join(' '), formControls: controls};
})()
