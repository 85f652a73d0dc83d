// An expression, evaluated in an isolated world of its own before a screenshot the model
// sees. Returns false when the page has no badge; else hides it and returns a promise of
// true once two frames were drawn without it (or after 200 ms).
(() => {
  const b = document.querySelector('conch-badge');
  if (!b) return false;
  b.style.setProperty('visibility', 'hidden', 'important');
  return new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(() => r(true))); setTimeout(() => r(true), 200); });
})()
