// A function called with `banners` ([[platform, selector]]). Returns null when no visible
// banner holds a visible control, else [elements, [{platform, words}]]: the controls and,
// for each, its banner's platform and its words.
(banners) => {
  const visible = (el) => { const r = el.getBoundingClientRect(); const cs = getComputedStyle(el); return r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none'; };
  const text = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const elements = [], info = [], seen = new Set();
  for (const [platform, selector] of banners) {
    let found = [];
    try { found = Array.from(document.querySelectorAll(selector)); } catch (e) { found = []; }
    for (const banner of found) {
      if (!visible(banner)) continue;
      for (const c of banner.querySelectorAll('button, [role=button], a, input[type=button], input[type=submit]')) {
        if (seen.has(c) || !visible(c)) continue;
        seen.add(c);
        elements.push(c);
        info.push({platform, words: text(c.innerText || c.value || c.getAttribute('aria-label'))});
      }
    }
  }
  return info.length ? [elements, info] : null;
}
