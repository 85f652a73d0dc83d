//! The scripts acting runs in the page: describing an element (role, name, field facts),
//! actionability, scrolling it into view, whether the node the pointer meets is the
//! element and what covers it, the focused element, options of a select, and the panel
//! that scrolls. Each runs in the world of the object it is called on (Conch's isolated
//! world for an element reached by a ref), and reads the element's own document and
//! window, never the caller's globals: an element of a same-origin frame lives in the top
//! frame's world.
//!
//! Deliberately absent: anything left behind. Each script is a function called on one
//! element or one expression; none installs a global or a listener that outlives it.

/// `describe(el)`: role and accessible name as the snapshot computes them (the shared
/// `roles.js`, pasted before this prelude), tag, type, words, whether it is an editable
/// text field and whether it is disabled, and the facts the secrets rule reads.
/// `reachable(el)`: whether a person could reach it (visible, not inert, not collapsed
/// away or off the page). `revealer(el)`: the control that opens what hides it.
/// `composedContains(a, b)`: whether `b` is `a` or inside it, through shadow roots.
/// `frameFacts(el)`: for a frame element, whether its document is closed to this world.
pub(crate) const PRELUDE: &str = r#"
const __text = (s) => (s || '').replace(/\s+/g, ' ').trim();
const __attr = (el, n) => (el.getAttribute && el.getAttribute(n)) || '';
const describe = (el) => {
  const tag = el.localName || '';
  const type = __attr(el, 'type').toLowerCase();
  // The snapshot's role (roles.js), with the kinds it never lists given their own names.
  const EXTRA = {canvas: 'canvas', iframe: 'iframe', frame: 'iframe', option: 'option', img: 'img', dialog: 'dialog'};
  const own = roleOf(el, tag);
  const role = (own && own !== 'clickable') ? own : (EXTRA[tag] || (el.isContentEditable ? 'textbox' : 'generic'));
  let label = '';
  if (el.labels && el.labels.length) label = __text(Array.from(el.labels).map(l => l.innerText).join(' '));
  let name = nameOf(el, tag, own || role);
  if (!name && (role === 'dialog' || role === 'alertdialog')) {
    const h = el.querySelector('h1,h2,h3,h4,h5,h6,legend');
    if (h) name = __text(h.innerText);
  }
  if (name.length > 80) name = name.slice(0, 79) + '…';
  const nonText = ['button', 'submit', 'reset', 'image', 'checkbox', 'radio', 'file', 'range', 'color', 'hidden'];
  const field = tag === 'textarea' || (tag === 'input' && !nonText.includes(type)) || !!el.isContentEditable;
  const editable = field && !el.readOnly;
  const disabled = !!(el.disabled || (el.closest && el.closest('[aria-disabled="true"]')));
  let words = __text(el.innerText || '');
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
    }
    if (cs.position === 'fixed') { reach = viewportReach(view); break; }
  }
  if (outsideOf(r, reach)) return false;
  return panel ? reachable(panel) : true;
};
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
"#;

/// Called on an element with `frame`: `{gone}` or its description with `visible` and
/// `stable` (still over one animation frame when `frame` is true; unchecked otherwise).
pub(crate) const ACTIONABLE: &str = r#"function(frame) {
  PRELUDE
  const el = this;
  if (!el.isConnected) return {gone: true};
  const d = describe(el);
  const r1 = el.getBoundingClientRect();
  // A check box moved off the page behind its styled label is pressed through the label.
  const visible = reachable(el) || (!!el.labels && Array.from(el.labels).some(reachable));
  // Stillness unchecked: the caller proves it otherwise, or needs none.
  if (!frame) return Object.assign(d, {visible, stable: true});
  return new Promise(resolve => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const r2 = el.getBoundingClientRect();
      resolve(Object.assign(d, {visible, stable: r1.x === r2.x && r1.y === r2.y && r1.width === r2.width && r1.height === r2.height}));
    };
    requestAnimationFrame(finish);
    setTimeout(finish, 50);
  });
}"#;

/// Called on an element: the element the pointer presses, scrolled into view inside every
/// panel and frame that holds it when it is not in view: the element itself, or, when it
/// can't be reached but a label of it can (a styled check box), that label. Null when the
/// element left the document. One call for what were two (issue 11).
pub(crate) const PRESS_TARGET_IN_VIEW: &str = r#"function() {
  PRELUDE
  if (!this.isConnected) return null;
  const label = (reachable(this) || !this.labels) ? null : Array.from(this.labels).find(reachable);
  const target = label || this;
  if (target.scrollIntoViewIfNeeded) target.scrollIntoViewIfNeeded(true);
  else target.scrollIntoView({block: 'center', inline: 'center'});
  return target;
}"#;

/// Called on an element with the node the pointer meets: whether that node is the
/// element, inside it (shadow trees included) or inside one of its labels.
pub(crate) const LANDS_ON: &str = r#"function(hit) {
  PRELUDE
  const el = this;
  if (!hit || !el.isConnected) return false;
  if (composedContains(el, hit)) return true;
  if (el.labels) for (const l of el.labels) if (composedContains(l, hit)) return true;
  return false;
}"#;

/// Called on the node the pointer meets instead of the element: the dialog or the fixed,
/// sticky or absolute layer around it (what a person would close), or the node itself.
pub(crate) const BLOCKER: &str = r#"function() {
  PRELUDE
  const hit = this.nodeType === 1 ? this : (this.parentElement || (this.parentNode && this.parentNode.host));
  if (!hit) return describe(this);
  const doc = hit.ownerDocument;
  const view = doc.defaultView;
  let b = null, fixed = null;
  for (let n = hit; n && n !== doc.body && n !== doc.documentElement;
       n = n.parentElement || (n.parentNode && n.parentNode.host) || null) {
    const role = n.getAttribute('role');
    if (n.localName === 'dialog' || role === 'dialog' || role === 'alertdialog' || n.getAttribute('aria-modal') === 'true') { b = n; break; }
    const pos = view.getComputedStyle(n).position;
    if (pos === 'fixed' || pos === 'sticky' || pos === 'absolute') fixed = n;
  }
  return describe(b || fixed || hit);
}"#;

/// An expression: the focused element, through same-origin frames and shadow roots (a
/// cross-origin frame that holds the focus is returned as itself).
pub(crate) const FOCUSED: &str = r#"(() => {
  let a = document.activeElement;
  for (let i = 0; a && i < 16; i++) {
    if (a.shadowRoot && a.shadowRoot.activeElement) { a = a.shadowRoot.activeElement; continue; }
    if (a.tagName === 'IFRAME' || a.tagName === 'FRAME') {
      let cd = null;
      try { cd = a.contentDocument; } catch (e) { cd = null; }
      if (cd && cd.activeElement) { a = cd.activeElement; continue; }
    }
    break;
  }
  return a;
})()"#;

/// Called on an element (or a text node, for its element): its description plus, for a
/// frame, whether its document is closed to this world.
pub(crate) const DESCRIBE: &str = r#"function() {
  PRELUDE
  const el = this.nodeType === 1 ? this : (this.parentElement || this);
  return Object.assign(describe(el), frameFacts(el), {document: el.ownerDocument ? el.ownerDocument.URL : ''});
}"#;

/// Called on an element that can't be reached: the control that opens what it is inside,
/// described, with the ref a read gave it (`ref`, a number, or null); null when none is
/// found.
pub(crate) const REVEALER: &str = r#"function() {
  PRELUDE
  return revealer(this);
}"#;

/// Called on a `<select>`: picks the options matching `values` by value or label.
pub(crate) const SELECT: &str = r#"function(values) {
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
}"#;

/// Called on a listbox that is not a `<select>`: the options matching `values`, by their
/// words or `data-value`, as elements (an array).
pub(crate) const LISTBOX_OPTIONS: &str = r#"function(values) {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim().toLowerCase();
  const opts = Array.from(this.querySelectorAll('[role=option]'));
  return values.map(v => opts.find(o => norm(o.getAttribute('data-value')) === norm(v))
    || opts.find(o => norm(o.getAttribute('aria-label') || o.textContent) === norm(v)) || null);
}"#;

/// Called on an element: scrolls the nearest ancestor (or itself) that scrolls on the axis
/// by most of its size. `{scrolled: false}` when none does.
pub(crate) const SCROLL_PANEL: &str = r#"function(dx, dy) {
  const vertical = dy !== 0;
  for (let n = this; n; n = n.parentElement || (n.getRootNode && n.getRootNode().host) || null) {
    if (n === document.body || n === document.documentElement) break;
    const cs = getComputedStyle(n);
    const overflow = vertical ? cs.overflowY : cs.overflowX;
    const room = vertical ? n.scrollHeight - n.clientHeight : n.scrollWidth - n.clientWidth;
    if ((overflow === 'auto' || overflow === 'scroll' || overflow === 'overlay') && room > 1) {
      const before = vertical ? n.scrollTop : n.scrollLeft;
      n.scrollBy({left: Math.sign(dx) * n.clientWidth * 0.8, top: Math.sign(dy) * n.clientHeight * 0.8, behavior: 'instant'});
      const after = vertical ? n.scrollTop : n.scrollLeft;
      return {scrolled: true, moved: after !== before};
    }
  }
  return {scrolled: false};
}"#;

/// Called on a field: focuses it, and says whether it now holds the focus.
pub(crate) const FOCUS: &str = r#"function() {
  this.focus({preventScroll: true});
  return (FOCUS_HELD).call(this);
}"#;

/// Called on an element: whether it holds the keyboard focus now, its document's focus
/// included (read in the world of the call, where the page cannot redefine
/// `activeElement` or `hasFocus`).
pub(crate) const HAS_FOCUS: &str = r#"function() { return (FOCUS_HELD).call(this); }"#;

/// Whether `this` holds the focus: its document's active element, through shadow roots,
/// is it, and the document has the browser's focus.
const FOCUS_HELD: &str = r#"function() {
  const doc = this.ownerDocument;
  let a = doc.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a === this && doc.hasFocus();
}"#;

/// Inserts the prelude (with the shared roles and names, `roles.js`) into a script.
pub(crate) fn with_prelude(script: &str) -> String {
    script
        .replace(
            "PRELUDE",
            &format!("{}\n{PRELUDE}", crate::page::world::ROLES),
        )
        .replace("FOCUS_HELD", FOCUS_HELD)
}
