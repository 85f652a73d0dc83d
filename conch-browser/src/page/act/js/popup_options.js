// Called on a combobox (an input or a box that opens a list) with `values` (strings) and
// `words` (a boolean), prelude pasted in. With `words` false, returns an array with, for
// each value, the option a person could press for it in the list the combobox opened, or
// null; with `words` true, the words of the first 40 such options (for a sentence). The
// options are the [role=option] elements of what its aria-controls or aria-owns names,
// else the reachable ones of the whole document (a list in a portal at the end of body);
// a list of plain elements with no role=option (issue 30: a searchable select drawn from
// divs or list items) gives its items: the innermost elements with words of the named
// box, else of a box that floats (absolute or fixed: a dropdown, a portal). Matched by
// data-value, then by label or words, then, when only one does, by their start.
function(values, words) {
  PRELUDE
  const doc = this.ownerDocument;
  const low = (s) => norm(s || '').toLowerCase();
  const ids = (__attr(this, 'aria-controls') + ' ' + __attr(this, 'aria-owns')).split(/\s+/).filter(Boolean);
  let opts = [];
  for (const id of ids) {
    const box = doc.getElementById(id);
    if (box) opts.push(...(box.matches('[role=option]') ? [box] : box.querySelectorAll('[role=option]')));
  }
  if (!opts.length) opts = Array.from(doc.querySelectorAll('[role=option]'));
  const usable = (o) => o !== this && !o.contains(this) && __attr(o, 'aria-disabled') !== 'true' && reachable(o);
  opts = opts.filter(usable);
  if (!opts.length) {
    // Plain items: the innermost elements with words of the named boxes, else of the
    // floating boxes (a dropdown's menu, a portal) the document shows.
    const ITEM = 'li,[data-value],[role=menuitem],[class*="option" i],[class*="item" i]';
    const floats = (el) => {
      for (let up = el, n = 0; up && up !== doc.body && n < 6; up = up.parentElement, n++) {
        const position = getComputedStyle(up).position;
        if (position === 'absolute' || position === 'fixed') return true;
      }
      return false;
    };
    const boxes = ids.map((id) => doc.getElementById(id)).filter(Boolean);
    let items = boxes.length
      ? boxes.flatMap((box) => Array.from(box.querySelectorAll(ITEM)))
      : Array.from(doc.querySelectorAll(ITEM)).filter(floats);
    items = items.filter((o) => norm(o.textContent) !== '' && usable(o));
    opts = items.filter((o) => !items.some((other) => other !== o && o.contains(other)));
  }
  const label = (o) => norm(__attr(o, 'aria-label') || o.textContent);
  if (words) return opts.slice(0, 40).map(label);
  return values.map((v) => {
    const n = low(v);
    const starts = opts.filter((o) => low(label(o)).startsWith(n));
    return opts.find((o) => low(__attr(o, 'data-value')) === n)
      || opts.find((o) => low(label(o)) === n)
      || (starts.length === 1 ? starts[0] : null);
  });
}
