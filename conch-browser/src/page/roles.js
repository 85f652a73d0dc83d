// Roles, accessible names, page text and what a person can reach, as Conch reads them:
// one computation shared by the snapshot script (snapshot.js) and the act scripts
// (act/js.rs), so that an element is the same thing in both (a number field is a
// spinbutton in each, and what the snapshot leaves out as unreachable an act finds
// unreachable too, issue 11). Pasted
// into each at its /*ROLES*/ or PRELUDE: plain declarations, no globals.
const INLINE = new Set(['span', 'b', 'i', 'em', 'strong', 'small', 'code', 'label', 'abbr', 'sub', 'sup', 'mark', 's', 'u', 'time', 'bdi', 'bdo', 'q', 'cite', 'font', 'kbd', 'samp', 'var', 'dfn', 'del', 'ins', 'wbr', 'data', 'tt', 'big', 'nobr', 'tspan', 'textPath']);
// What is never drawn as words: scripts and styles, and SVG's definitions, descriptions
// and tooltips (an SVG <title> names its parent instead, see textOf).
const UNSHOWN = new Set(['script', 'style', 'template', 'title', 'desc', 'metadata', 'defs', 'clipPath', 'mask', 'marker', 'pattern', 'symbol', 'linearGradient', 'radialGradient', 'filter']);
const SVG_NS = 'http://www.w3.org/2000/svg';
// An SVG element's <title> child: its tooltip, which names it when it draws no words.
const svgTitle = (el) => {
  if (el.namespaceURI !== SVG_NS) return '';
  for (let c = el.firstElementChild; c; c = c.nextElementSibling) if (c.localName === 'title') return norm(c.textContent || '');
  return '';
};
// Roles whose accessible name comes from their content: their subtree is not walked
// unless it holds something actionable.
const FROM_CONTENT = new Set(['button', 'link', 'heading', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'cell', 'columnheader', 'rowheader', 'checkbox', 'radio', 'switch', 'treeitem', 'tooltip']);

// Page text never carries control characters (the reader's own markers are \u0001 to
// \u0004: page text must not cut or splice lines with them, issue 11) and never looks
// like a ref: "[ref=" in it becomes "[ref =".
const CONTROLS = /[\u0000-\u0008\u000e-\u001f\u007f-\u009f]/g;
const clean = (s) => s.replace(CONTROLS, '');
const norm = (s) => {
  const t = clean(s).replace(/\s+/g, ' ').trim();
  return t.indexOf('[') < 0 ? t : t.replace(/\[ref=/gi, '[ref =');
};
const cap = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
const quote = (s) => '"' + s.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"';

function inputRole(el) {
  const type = (el.getAttribute('type') || 'text').toLowerCase();
  switch (type) {
    case 'hidden': return null;
    case 'checkbox': return 'checkbox';
    case 'radio': return 'radio';
    case 'range': return 'slider';
    case 'number': return 'spinbutton';
    case 'search': return el.hasAttribute('list') ? 'combobox' : 'searchbox';
    case 'button': case 'submit': case 'reset': case 'image': case 'file': case 'color': return 'button';
    default: return el.hasAttribute('list') ? 'combobox' : 'textbox';
  }
}

function roleOf(el, tag) {
  const explicit = el.getAttribute('role');
  if (explicit) {
    const first = explicit.trim().split(/\s+/)[0].toLowerCase();
    if (first && first !== 'none' && first !== 'presentation') return first;
    if (first) return null;
  }
  switch (tag) {
    case 'a': return el.hasAttribute('href') ? 'link' : null;
    case 'area': return el.hasAttribute('href') ? 'link' : null;
    case 'button': return 'button';
    case 'input': return inputRole(el);
    case 'textarea': return 'textbox';
    case 'select': return (el.multiple || el.size > 1) ? 'listbox' : 'combobox';
    case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
    case 'img': return (el.getAttribute('alt') === '' ? null : 'img');
    case 'ul': case 'ol': case 'menu': return 'list';
    case 'li': return 'listitem';
    case 'dl': return 'list';
    case 'dt': case 'dd': return 'listitem';
    case 'table': return 'table';
    case 'tr': return 'row';
    case 'td': return 'cell';
    case 'th': return headerRole(el);
    case 'nav': return 'navigation';
    case 'main': return 'main';
    case 'aside': return 'complementary';
    case 'header': return el.closest('article,aside,main,nav,section') ? null : 'banner';
    case 'footer': return el.closest('article,aside,main,nav,section') ? null : 'contentinfo';
    case 'form': return 'form';
    case 'section': return 'region';
    case 'article': return 'article';
    case 'dialog': return 'dialog';
    case 'p': return 'paragraph';
    case 'blockquote': return 'blockquote';
    case 'fieldset': return 'group';
    case 'figure': return 'figure';
    case 'summary': return 'button';
    case 'progress': return 'progressbar';
    case 'meter': return 'meter';
    case 'output': return 'status';
    case 'pre': return 'code';
    case 'hr': return null;
    case 'caption': return 'caption';
    case 'legend': return null;
    default:
      // The top of an editable region carries the attribute (designMode aside).
      if (el.hasAttribute('contenteditable') && el.isContentEditable && (!el.parentElement || !el.parentElement.isContentEditable)) return 'textbox';
      if (el.hasAttribute('onclick') || (el.hasAttribute('tabindex') && el.tabIndex >= 0)) return 'clickable';
      return null;
  }
}

// Whether the last textOf saw something actionable inside (then the subtree is walked).
let actionableInside = false;
const ACTIONABLE_TAGS = new Set(['a', 'button', 'input', 'select', 'textarea', 'iframe', 'frame', 'details', 'summary']);

// Controls only by script (issue 11, class 4): an element whose own style (not its
// parent's, which it would inherit) gives the pointer a hand or a grip, and the classes
// jQuery UI puts on what it drags, sorts or drops onto.
const HAND = new Set(['pointer', 'grab', 'move', 'grabbing']);
const SCRIPTED_CLASSES = ['ui-draggable', 'ui-draggable-handle', 'ui-sortable-handle', 'ui-droppable'];
const byScript = (el, cursor, parentCursor) => (HAND.has(cursor) && cursor !== parentCursor)
  || SCRIPTED_CLASSES.some((c) => el.classList.contains(c));
const cursorOf = (el) => {
  const view = el.ownerDocument.defaultView;
  return el.nodeType === 1 ? view.getComputedStyle(el).cursor : '';
};

function textOf(el, skip) {
  // The text an element shows, with images' alt text, for names from content. `skip`, a
  // control inside a label, is left out of the label's words (a select's options are not
  // its name).
  let out = '';
  actionableInside = false;
  const visit = (n, parentCursor) => {
    const before = out.length;
    for (let c = n.firstChild; c; c = c.nextSibling) {
      const type = c.nodeType;
      if (type === 3) out += c.data;
      else if (type === 1) {
        const t = c.localName;
        if (UNSHOWN.has(t) || c === skip) continue;
        let cursor = parentCursor;
        if (!actionableInside) {
          if (ACTIONABLE_TAGS.has(t) || c.hasAttribute('tabindex') || c.hasAttribute('onclick') || c.hasAttribute('role') || c.hasAttribute('contenteditable')) actionableInside = true;
          else {
            cursor = cursorOf(c);
            if (byScript(c, cursor, parentCursor)) actionableInside = true;
          }
        }
        if (c.getAttribute('aria-hidden') === 'true') continue;
        if (t === 'img') { out += ' ' + (c.getAttribute('alt') || '') + ' '; continue; }
        if (t === 'input' && (c.type === 'submit' || c.type === 'button')) { out += ' ' + c.value + ' '; continue; }
        if (INLINE.has(t)) visit(c, cursor); else { out += ' '; visit(c, cursor); out += ' '; }
      }
    }
    // An SVG shape or icon that draws no words is named by its <title> (a chart mark's
    // tooltip, an icon's label).
    if (n.namespaceURI === SVG_NS && !out.slice(before).trim()) {
      const tip = svgTitle(n);
      if (tip) out += ' ' + tip + ' ';
    }
  };
  visit(el, cursorOf(el));
  return norm(out);
}

function byIds(el, ids) {
  const doc = el.getRootNode();
  return norm(ids.split(/\s+/).map((id) => {
    const t = doc.getElementById ? doc.getElementById(id) : el.ownerDocument.getElementById(id);
    return t ? (t.getAttribute('aria-label') || textOf(t)) : '';
  }).join(' '));
}

function labelsOf(el) {
  const labels = el.labels;
  if (!labels || !labels.length) return '';
  return norm(Array.from(labels, (l) => textOf(l, el)).join(' '));
}

function nameOf(el, tag, role, content) {
  const labelledby = el.getAttribute('aria-labelledby');
  if (labelledby) { const n = byIds(el, labelledby); if (n) return n; }
  const aria = el.getAttribute('aria-label');
  if (aria && aria.trim()) return norm(aria);
  if (tag === 'input' || tag === 'textarea' || tag === 'select' || tag === 'meter' || tag === 'progress' || tag === 'output') {
    const type = (el.type || '').toLowerCase();
    if (tag === 'input' && (type === 'submit' || type === 'reset' || type === 'button')) {
      return norm(el.value || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : ''));
    }
    if (tag === 'input' && type === 'image') return norm(el.getAttribute('alt') || el.value || 'Submit');
    const l = labelsOf(el);
    if (l) return l;
    return norm(el.getAttribute('title') || el.getAttribute('placeholder') || '');
  }
  if (tag === 'img') return norm(el.getAttribute('alt') || el.getAttribute('title') || '');
  if (tag === 'fieldset') { const lg = el.querySelector(':scope > legend'); if (lg) return textOf(lg); }
  if (tag === 'table') { const c = el.querySelector(':scope > caption'); if (c) return textOf(c); }
  if (tag === 'figure') { const c = el.querySelector(':scope > figcaption'); if (c) return textOf(c); }
  if (tag === 'iframe' || tag === 'frame') return norm(el.getAttribute('title') || el.getAttribute('name') || '');
  // A button is labelable: a label for it names it before its own text (HTML-AAM).
  if (tag === 'button') { const l = labelsOf(el); if (l) return l; }
  if (FROM_CONTENT.has(role) || role === 'clickable') {
    const t = content === undefined ? textOf(el) : content;
    if (t) return t;
  }
  return norm(el.getAttribute('title') || '') || svgTitle(el);
}

// What a person's pointer can reach (issue 11, class 2), in a viewport's coordinates: the
// document's scrollable area; the viewport inside a fixed element; a scrolling panel's
// whole scrollable area inside it. A box collapsed to no width or height that clips its
// overflow (a closed accordion) shows nothing of its inside.
const CLIPS = new Set(['hidden', 'clip']);
const SCROLLS = new Set(['auto', 'scroll']);
const pageReach = (doc) => {
  const w = doc.defaultView;
  const se = doc.scrollingElement || doc.documentElement;
  return {
    l: -w.scrollX, t: -w.scrollY,
    r: -w.scrollX + Math.max(se.scrollWidth, w.innerWidth), b: -w.scrollY + Math.max(se.scrollHeight, w.innerHeight),
  };
};
const viewportReach = (view) => ({ l: 0, t: 0, r: view.innerWidth, b: view.innerHeight });
const panelReach = (el, r) => {
  const l = r.left + el.clientLeft - el.scrollLeft, t = r.top + el.clientTop - el.scrollTop;
  return { l, t, r: l + el.scrollWidth, b: t + el.scrollHeight };
};
const scrollsPanel = (cs) => SCROLLS.has(cs.overflowX) || SCROLLS.has(cs.overflowY);
const collapsedAway = (cs, r) => (r.width === 0 && CLIPS.has(cs.overflowX)) || (r.height === 0 && CLIPS.has(cs.overflowY));
// A box that clips its overflow on an axis without scrolling it (overflow: hidden or
// clip; a carousel): what lies wholly outside it on that axis is out of reach. The reach
// it makes remembers its owner and the reach outside it, for an absolute box hung from
// outside the owner.
const clipsBox = (cs) => CLIPS.has(cs.overflowX) || CLIPS.has(cs.overflowY);
const clipReach = (el, cs, r, outer) => {
  const x = CLIPS.has(cs.overflowX), y = CLIPS.has(cs.overflowY);
  return {
    l: x ? Math.max(outer.l, r.left) : outer.l, r: x ? Math.min(outer.r, r.right) : outer.r,
    t: y ? Math.max(outer.t, r.top) : outer.t, b: y ? Math.min(outer.b, r.bottom) : outer.b,
    owner: el, outer,
  };
};
const outsideOf = (r, reach) => r.right <= reach.l || r.left >= reach.r || r.bottom <= reach.t || r.top >= reach.b;

// A hint for a control the page gave no name (issue 30): an icon-only button or link, a
// clickable box with no words. Taken from, in turn, a tooltip attribute, the class of its
// icon (fa-bars, bi-search, icon-side-menu, an SVG <use href="#icon-x">), its id, and the
// nearest words before it (a sort arrow's column). Only letters, digits and spaces, at
// most 40 characters: it is shown as "(hint: …)", never as the control's name, and no
// rule that reads names (high stakes) ever sees it.
const TIP_ATTRS = ['title', 'data-tooltip', 'data-tip', 'data-title', 'data-original-title', 'data-bs-original-title', 'aria-description', 'tooltip', 'mattooltip', 'data-balloon', 'data-hint'];
const ICON_PREFIX = /^(?:fa|fas|far|fal|fab|fad|bi|icon|icons|glyphicon|mdi|ti|ri|la|las|lar|octicon|lucide|feather|ion|ionicons|material-icons|material-symbols|pi|el-icon|anticon|i|ico)(?:-|$)/i;
const ICON_NOISE = /^(?:fa|fas|far|fal|fab|fad|fa-solid|fa-regular|fa-light|fa-brands|fa-duotone|fa-fw|fa-lg|fa-xs|fa-sm|fa-\dx|fa-spin|fa-pulse|bi|icon|icons|mdi|ti|ri|la|las|lar|octicon|lucide|feather|ion|pi|anticon|glyphicon|i|ico|material-icons|material-symbols|material-symbols-outlined|material-icons-outlined|icon-sm|icon-lg)$/i;
const hintText = (s) => s.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[^\p{L}\p{N}]+/gu, ' ').trim().toLowerCase();
const hintWords = (s) => cap(hintText(s), 40);
function iconClass(el) {
  const pick = (e) => {
    const list = e.getAttribute && e.getAttribute('class');
    if (!list) return '';
    for (const c of list.split(/\s+/)) {
      if (!c || ICON_NOISE.test(c) || !ICON_PREFIX.test(c)) continue;
      const rest = c.replace(ICON_PREFIX, '');
      if (rest) return rest;
    }
    return '';
  };
  const own = pick(el);
  if (own) return own;
  const icons = el.querySelectorAll('i, span, svg, use, img');
  for (let k = 0; k < icons.length && k < 8; k++) {
    const e = icons[k];
    const c = pick(e);
    if (c) return c;
    if (e.localName === 'use') {
      const ref = e.getAttribute('href') || e.getAttribute('xlink:href') || '';
      const at = ref.lastIndexOf('#');
      if (at >= 0 && ref.length > at + 1) return ref.slice(at + 1).replace(ICON_PREFIX, '');
    }
    if (e.localName === 'img') {
      const src = (e.getAttribute('src') || '').split(/[?#]/)[0];
      const file = src.slice(src.lastIndexOf('/') + 1).replace(/\.[a-z0-9]+$/i, '');
      if (file && !src.startsWith('data:')) return file.replace(ICON_PREFIX, '');
    }
  }
  return '';
}
function nearestWords(el) {
  // The words of the closest ancestor that shows some (at most three levels up).
  let up = el.parentElement;
  for (let k = 0; up && k < 3 && up.localName !== 'body'; k++, up = up.parentElement) {
    const t = textOf(up);
    if (t) return t;
  }
  return '';
}
function hintOf(el) {
  for (const a of TIP_ATTRS) {
    const v = el.getAttribute(a);
    if (v && v.trim()) { const h = hintWords(v); if (h) return h; }
  }
  const icon = hintWords(iconClass(el));
  if (icon) return icon;
  if (el.id) { const h = hintWords(el.id); if (h && !/^\d/.test(h)) return h; }
  return hintWords(nearestWords(el));
}

// A header cell's role as Chromium computes it: `scope` decides; without one, a header
// cell in a body row that also holds data cells heads its row (Django admin's change
// list), and any other heads its column.
function headerRole(th) {
  const scope = (th.getAttribute('scope') || '').toLowerCase();
  if (scope === 'row' || scope === 'rowgroup') return 'rowheader';
  if (scope === 'col' || scope === 'colgroup') return 'columnheader';
  const row = th.parentElement;
  if (!row || th.closest('thead')) return 'columnheader';
  for (const cell of row.children) if (cell.localName === 'td') return 'rowheader';
  return 'columnheader';
}
