// An expression for a document still being parsed: a promise that resolves to true at
// DOMContentLoaded, or after 10 s, whichever comes first (AMB-22's bound for a document).
new Promise((resolve) => {
  if (document.readyState !== 'loading') return resolve(true);
  document.addEventListener('DOMContentLoaded', () => resolve(true), { once: true });
  setTimeout(() => resolve(true), 10000);
})
