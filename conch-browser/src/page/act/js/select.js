// Called on a <select> with `values` (strings). Picks the options matching them by value
// or label and fires input and change. Returns {picked: [labels]}, or {missing, choices}
// or {tooMany: true, choices} (choices: the first 40 option labels) and picks nothing.
function(values) {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim().toLowerCase();
  const opts = Array.from(this.options || []);
  const picked = [], missing = [];
  for (const v of values) {
    const o = opts.find(o => o.value === v) || opts.find(o => norm(o.label) === norm(v))
      || opts.find(o => norm(o.value) === norm(v)) || opts.find(o => norm(o.textContent) === norm(v));
    if (o) picked.push(o); else missing.push(v);
  }
  const choices = opts.map(o => o.label).slice(0, 40);
  if (missing.length) return {missing, choices};
  if (!this.multiple && picked.length > 1) return {tooMany: true, choices};
  this.focus();
  for (const o of opts) o.selected = picked.includes(o);
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {picked: picked.map(o => o.label)};
}
