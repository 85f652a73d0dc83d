// A function called with `tokenNames` (captcha token field names), in Conch's isolated
// world. Returns {href, fields, frames, token}: visible text fields' facts (never values),
// visible frames' addresses, and whether a captcha token field holds a value.
((tokenNames) => {
  const out = { href: location.href, fields: [], frames: [], token: false };
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return false;
    const s = getComputedStyle(el);
    return s.visibility !== 'hidden' && s.display !== 'none' && Number(s.opacity) > 0;
  };
  const attr = (el, name) => (el.getAttribute(name) || '').slice(0, 200);
  const walk = (doc, depth) => {
    for (const el of doc.querySelectorAll('input, textarea')) {
      const name = attr(el, 'name');
      if (tokenNames.includes(name) && el.value && el.value.trim() !== '') out.token = true;
      const type = el.tagName === 'INPUT' ? (attr(el, 'type') || 'text').toLowerCase() : '';
      if (type === 'hidden' || !shown(el)) continue;
      const label = (el.labels && el.labels[0] ? el.labels[0].textContent : attr(el, 'aria-label')) || '';
      out.fields.push({ inputType: type, autocomplete: attr(el, 'autocomplete'), label: label.trim().slice(0, 200),
        name, id: el.id || '', placeholder: attr(el, 'placeholder') });
    }
    for (const f of doc.querySelectorAll('iframe, frame')) {
      if (shown(f) && f.src) out.frames.push(f.src);
      let inner = null;
      try { inner = f.contentDocument; } catch (e) { inner = null; }
      if (inner && depth < 8) walk(inner, depth + 1);
    }
  };
  walk(document, 0);
  return out;
})
