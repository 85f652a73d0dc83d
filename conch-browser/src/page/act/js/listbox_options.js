// Called on a listbox that is not a <select> with `values` (strings). Returns an array
// with, for each value, the [role=option] element matching it by data-value or words, or
// null.
function(values) {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim().toLowerCase();
  const opts = Array.from(this.querySelectorAll('[role=option]'));
  return values.map(v => opts.find(o => norm(o.getAttribute('data-value')) === norm(v))
    || opts.find(o => norm(o.getAttribute('aria-label') || o.textContent) === norm(v)) || null);
}
