// Pasted (after roles.js) into the act scripts in place of their PRELUDE line: no call,
// no value of its own. Defines describe(el) (role and name as the snapshot computes them,
// tag, type, words, editable, disabled, the facts the secrets rule reads), reachable(el)
// (whether a person could reach it), revealer(el) (the control that opens what hides it),
// composedContains(a, b) (b is a or inside it, through shadow roots), frameFacts(el)
// (for a frame element, whether its document is closed to this world) and
// pressTargetInView(el) (what the pointer presses, scrolled into view).
const __text = (s) => (s || '').replace(/\s+/g, ' ').trim();
const __attr = (el, n) => (el.getAttribute && el.getAttribute(n)) || '';
// Whether the snapshot lists el as a control only by script (roles.js's byScript, or
// the walk's click listeners, snapshot.js).
const __scripted = (el, own) => {
  if (own === 'clickable') return true;
  if (own || el.nodeType !== 1) return false;
  const up = el.parentElement;
  if (byScript(el, cursorOf(el), up ? cursorOf(up) : '')) return true;
  try { return !!(globalThis.__conch && globalThis.__conch.heard && globalThis.__conch.heard(el)); } catch (e) { return false; }
};
const describe = (el) => {
  const tag = el.localName || '';
  const type = __attr(el, 'type').toLowerCase();
  // The snapshot's role (roles.js), with the kinds it never lists given their own names.
  const EXTRA = {canvas: 'canvas', iframe: 'iframe', frame: 'iframe', option: 'option', img: 'img', dialog: 'dialog'};
  const own = roleOf(el, tag);
  const role = (own && own !== 'clickable') ? own : (EXTRA[tag] || (el.isContentEditable ? 'textbox' : 'generic'));
  let label = '';
  if (el.labels && el.labels.length) label = __text(Array.from(el.labels).map(l => l.innerText).join(' '));
  let name;
  if (role === 'generic' && __scripted(el, own)) {
    // A control only by script (a hand cursor, its own click listener) is named as the
    // snapshot names it: by its words, or, around other controls, by its label only.
    textOf(el);
    name = actionableInside ? norm(__attr(el, 'aria-label') || __attr(el, 'title')) : nameOf(el, tag, 'clickable');
  } else name = nameOf(el, tag, own || role);
  if (!name && (role === 'dialog' || role === 'alertdialog')) {
    const h = el.querySelector('h1,h2,h3,h4,h5,h6,legend');
    if (h) name = __text(h.innerText);
  }
  if (name.length > 80) name = name.slice(0, 79) + '…';
  const nonText = ['button', 'submit', 'reset', 'image', 'checkbox', 'radio', 'file', 'range', 'color', 'hidden'];
  const field = tag === 'textarea' || (tag === 'input' && !nonText.includes(type)) || !!el.isContentEditable;
  const editable = field && !el.readOnly;
  const disabled = !!(el.disabled || (el.closest && el.closest('[aria-disabled="true"]')));
  // SVG elements have no innerText: their words are what they draw (<text>, <tspan>).
  const drawn = (e) => (e.localName === 'text' ? e.textContent
    : Array.from(e.querySelectorAll('text')).map(t => t.textContent).join(' '));
  let words = __text(typeof el.innerText === 'string' ? el.innerText
    : (typeof SVGElement === 'function' && el instanceof SVGElement ? drawn(el) : ''));
  if (!words && typeof el.value === 'string' && !(tag === 'input' && type === 'password')) words = __text(el.value);
  return {
    role, name, tag, type, field, editable, disabled, words: words.slice(0, 200),
    checked: typeof el.checked === 'boolean' ? el.checked : null,
    facts: {
      inputType: tag === 'input' ? (type || 'text') : '',
      autocomplete: __attr(el, 'autocomplete'), label: label || __text(__attr(el, 'aria-label')),
      name: __attr(el, 'name'), id: el.id || '', placeholder: __attr(el, 'placeholder'),
    },
  };
};
const reachable = (el) => {
  // Whether a person could reach it, by the snapshot's rules (roles.js): rendered and
  // visible, not inert, with a box, not inside a box collapsed to nothing, and not wholly
  // outside what can be scrolled to (an off-canvas panel is).
  if (!el.isConnected) return false;
  if (el.checkVisibility && !el.checkVisibility({visibilityProperty: true})) return false;
  if (el.closest('[inert]')) return false;
  const doc = el.ownerDocument, view = doc.defaultView;
  const r = el.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0) return false;
  let reach = pageReach(doc);
  let panel = null;
  for (let n = el; n && n !== doc.body && n !== doc.documentElement; n = n.parentElement) {
    const cs = view.getComputedStyle(n);
    if (n !== el) {
      const b = n.getBoundingClientRect();
      if (collapsedAway(cs, b)) return false;
      if (scrollsPanel(cs)) { reach = panelReach(n, b); panel = n; break; }
      // Wholly outside a box that clips it (a carousel's other slides), unless hung by
      // position: absolute from outside that box.
      if (clipsBox(cs) && outsideOf(r, clipReach(n, cs, b, pageReach(doc)))) {
        const hung = Array.from(ancestorsTo(el, n)).some((a) => view.getComputedStyle(a).position === 'absolute' && !n.contains(a.offsetParent));
        if (!hung) return false;
      }
    }
    if (cs.position === 'fixed') { reach = viewportReach(view); break; }
  }
  if (outsideOf(r, reach)) return false;
  return panel ? reachable(panel) : true;
};
// el and its ancestors below `top`.
function* ancestorsTo(el, top) {
  for (let a = el; a && a !== top; a = a.parentElement) yield a;
}
const revealer = (el) => {
  // What opens the closed thing el is inside: a closed <details>' summary, a control
  // whose aria-controls names a box around it (a collapsed one first), or the collapsed
  // control just before the hidden box around it.
  const doc = el.ownerDocument;
  const out = (c) => {
    let ref = null;
    try { ref = globalThis.__conch && globalThis.__conch.known ? globalThis.__conch.known(c) : null; } catch (e) { ref = null; }
    return Object.assign(describe(c), {ref});
  };
  for (let n = el.parentElement; n; n = n.parentElement) {
    if (n.localName === 'details' && !n.open) {
      const s = n.querySelector(':scope > summary');
      if (s && !s.contains(el)) return out(s);
    }
  }
  const ids = new Set();
  let hidden = el;
  for (let n = el; n && n !== doc.body; n = n.parentElement) {
    if (n.id) ids.add(n.id);
    if (!reachable(n)) hidden = n;
  }
  let named = null;
  for (const c of doc.querySelectorAll('[aria-controls]')) {
    if (c === el || el.contains(c) || hidden.contains(c)) continue;
    if (!__attr(c, 'aria-controls').split(/\s+/).some((id) => ids.has(id))) continue;
    if (__attr(c, 'aria-expanded') === 'false' || __attr(c, 'aria-selected') === 'false') return out(c);
    named = named || c;
  }
  if (named) return out(named);
  for (let s = hidden.previousElementSibling; s; s = s.previousElementSibling) {
    const c = s.matches('[aria-expanded="false"]') ? s : s.querySelector('[aria-expanded="false"]');
    if (c) return out(c);
  }
  return null;
};
const composedContains = (a, b) => {
  for (let n = b; n; n = n.parentNode || (n.nodeType === 11 && n.host) || null) if (n === a) return true;
  return false;
};
const frameFacts = (el) => {
  const tag = el.localName || '';
  if (tag !== 'iframe' && tag !== 'frame') return {crossFrame: false};
  let cd = null;
  try { cd = el.contentDocument; } catch (e) { cd = null; }
  return {crossFrame: !cd};
};
// What the pointer presses for el, scrolled into view inside every panel and frame that
// holds it: el itself, or the reachable label of an unreachable el (a styled check box).
const pressTargetInView = (el) => {
  const label = (reachable(el) || !el.labels) ? null : Array.from(el.labels).find(reachable);
  const target = label || el;
  if (target.scrollIntoViewIfNeeded) target.scrollIntoViewIfNeeded(true);
  else target.scrollIntoView({block: 'center', inline: 'center'});
  return target;
};
