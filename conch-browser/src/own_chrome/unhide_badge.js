// An expression, evaluated in the world hide_badge.js ran in, after the capture. Returns
// nothing: shows the badge again, if the page has one.
(() => {
  const b = document.querySelector('conch-badge');
  if (b) b.style.removeProperty('visibility');
})()
