// Conch's page reader, installed once per document in the isolated world "conch" (AMB-4).
// The page cannot see this world's globals, so it can neither read the refs nor forge them.
// Evaluated as an expression with BASE replaced by the first ref number for this document,
// and FRAME_BASE by the first frame handle's: neither ever names an earlier document's.
(() => {
  const BASE = __BASE__;
  const FRAME_BASE = __FRAME_BASE__;
  const refOfEl = new WeakMap();
  // Elements with a click listener of the page's own, as DevTools told (issue 30): the
  // listeners on the document, <html> and <body> are a framework's delegation, not theirs.
  // Each read tells only the elements not told before: the marks add up.
  const listened = new WeakSet();
  const LISTENED_MOST_INSIDE = 40;
  const listen = (els) => {
    for (const el of els) {
      if (el && el.nodeType === 1 && el !== document.documentElement && el !== document.body) listened.add(el);
    }
  };
  const elOfRef = new Map();
  const frameOfEl = new WeakMap();
  const elOfFrame = new Map();
  let nextRef = BASE;
  let nextFrame = FRAME_BASE;
  let reads = 0;
  const token = Math.random().toString(36).slice(2) + Date.now().toString(36);

  const SKIP = new Set(['script', 'style', 'template', 'noscript', 'head', 'meta', 'link', 'title', 'base', 'math', 'desc', 'metadata', 'defs', 'clipPath', 'mask', 'marker', 'pattern', 'symbol', 'linearGradient', 'radialGradient', 'filter', 'canvas', 'object', 'embed', 'audio', 'source', 'track', 'datalist', 'map', 'area', 'slot-fallback']);
  /*ROLES*/
  const ACTIONABLE = new Set(['link', 'button', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'listbox', 'slider', 'spinbutton', 'switch', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem', 'option', 'clickable']);
  // Containers that, when the page names them, are likely drop targets.
  const DROP_TARGETS = new Set(['list', 'region', 'group', 'generic', 'grid', 'table', 'tree']);
  // Roles shown only when named (otherwise their children stand in their place).
  const NAMED_ONLY = new Set(['region', 'form', 'group', 'generic', 'none', 'presentation', 'figure']);
  // Unnamed wrappers that give way to their only child.
  const HOIST = new Set(['paragraph', 'blockquote', 'code', 'caption', 'figure']);
  // What a label's words may hold that is more than its control's name.
  const LABEL_KEEPS = 'a,button,input,select,textarea,iframe,[role],[tabindex],[onclick],[contenteditable]';
  // Widgets that hold their options or items, each a control of its own.
  const COMPOSITE = new Set(['listbox', 'menu', 'menubar', 'tablist', 'tree', 'treegrid', 'grid', 'radiogroup', 'toolbar', 'list', 'table', 'row', 'rowgroup']);
  // Roles whose value ARIA carries when they are not inputs.
  const VALUED = new Set(['slider', 'spinbutton', 'progressbar', 'meter', 'scrollbar']);
  const FOLDS = new Set(['heading', 'cell', 'columnheader', 'rowheader']);
  const NOT_TYPED = new Set(['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'hidden', 'range', 'color']);
  const SECRET_AUTOCOMPLETE = /(^|\s)(current-password|new-password|one-time-code|cc-number|cc-csc|cc-exp|cc-exp-month|cc-exp-year)(\s|$)/i;

  function refOf(el) {
    let n = refOfEl.get(el);
    if (n === undefined) {
      n = ++nextRef;
      refOfEl.set(el, n);
      elOfRef.set(n, new WeakRef(el));
    }
    return n;
  }
  function frameOf(el) {
    let n = frameOfEl.get(el);
    if (n === undefined) {
      n = ++nextFrame;
      frameOfEl.set(el, n);
      elOfFrame.set(n, new WeakRef(el));
    }
    return n;
  }

  function visible(el) {
    if (el.checkVisibility({ visibilityProperty: true })) return 'yes';
    // display: contents has no box but its children do.
    if (getComputedStyle(el).display === 'contents') return 'contents';
    return 'no';
  }

  // Whether a box has a sibling of the same tag and class next to it.
  function alike(el) {
    const sib = el.previousElementSibling || el.nextElementSibling;
    return !!sib && sib.localName === el.localName && sib.getAttribute('class') === el.getAttribute('class');
  }

  function children(node) {
    if (node.shadowRoot) return node.shadowRoot.childNodes;
    if (node.localName === 'slot') {
      const assigned = node.assignedNodes();
      if (assigned.length) return assigned;
    }
    return node.childNodes;
  }

  // A read sees what runs now as it will stand at its end (at_their_end.js, pasted
  // here), so an act need not wait for a drawer, a panel or an item moving into place.
  const atTheirEnd = /*AT_THEIR_END*/;
  function snapshot() {
    return atTheirEnd(walkedSnapshot);
  }

  // One walk: lines (strings), fields (facts for the marker \u0002N at a line's end),
  // and frames (\u0001N lines where a frame's own walk goes).
  function walkedSnapshot() {
    reads++;
    const fields = [];
    const out = { lines: [], text: '', onlyText: true };

    // Text of sibling blocks with nothing between them shares one line, joined by " · ".
    const flush = (o, depth) => {
      const t = norm(o.text);
      o.text = '';
      if (!t) return;
      const last = o.lines.length - 1;
      if (o.textAt === last && last >= 0 && o.lines[last].length < 300) {
        o.lines[last] += ' · ' + cap(t, 2000);
        return;
      }
      o.lines.push('  '.repeat(depth) + '- text: ' + cap(t, 2000));
      o.textAt = o.lines.length - 1;
    };

    const fieldMarker = (el, tag, name) => {
      const type = tag === 'input' ? (el.getAttribute('type') || 'text').toLowerCase() : (tag === 'select' ? 'select' : '');
      const autocomplete = el.getAttribute('autocomplete') || '';
      const obvious = type === 'password' || SECRET_AUTOCOMPLETE.test(autocomplete);
      let value = '';
      if (!obvious) {
        if (tag === 'select') value = Array.from(el.selectedOptions, (o) => norm(o.label || o.text)).join(', ');
        else if (tag === 'input' || tag === 'textarea') value = el.value;
        else value = el.innerText || '';
      } else {
        value = (tag === 'input' || tag === 'textarea') ? (el.value ? '1' : '') : '';
      }
      fields.push({
        inputType: type, autocomplete, label: name, name: el.getAttribute('name') || '',
        id: el.id || '', placeholder: el.getAttribute('placeholder') || '',
        value: cap(clean(value).replace(/\r?\n/g, '\\n').replace(/\r/g, ''), 500), obvious,
      });
      return '\u0002' + (fields.length - 1);
    };

    // What a person's pointer can reach in the document being walked (roles.js's reach
    // rules, kept as the walk goes down): an element wholly outside it (an off-canvas
    // panel) and the inside of a box collapsed to nothing are left out, as are inert and
    // aria-hidden subtrees (issue 11, class 2).
    let reach = null;
    // The cursor the parent shows, and whether an element above already has a ref (its
    // children are then part of that control, not controls of their own).
    let parentCursor = '';
    let inControl = false;
    const visit = (el, depth, o) => {
      const tag = el.localName;
      if (SKIP.has(tag)) return;
      if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return;
      const vis = visible(el);
      if (vis === 'no') return;
      const saved = reach, savedCursor = parentCursor, savedControl = inControl;
      let scripted = false;
      if (vis === 'yes' && tag !== 'body' && tag !== 'html') {
        const view = el.ownerDocument.defaultView;
        const cs = view.getComputedStyle(el);
        // A listened box that holds much (a framework's root container delegating every
        // click) is no one control.
        // A drawing (<svg>) listened on as a whole is a canvas, not one control. What has
        // a ref only because it is listened on leaves its inside's hand cursors their
        // own refs: it may be a small delegating container (scripted = 'heard').
        scripted = !inControl && (byScript(el, cs.cursor, parentCursor)
          || (listened.has(el) && tag !== 'svg' && el.getElementsByTagName('*').length <= LISTENED_MOST_INSIDE && 'heard'));
        parentCursor = cs.cursor;
        const r = el.getBoundingClientRect();
        if (cs.position === 'fixed') reach = viewportReach(view);
        // An absolute box whose containing block is outside the box that clips is not
        // clipped by it (a menu hung from a toolbar over a card).
        else if (cs.position === 'absolute' && reach.owner && !reach.owner.contains(el.offsetParent)) reach = reach.outer;
        // A box moved away whose children overflow it (a carousel's track) is judged
        // by them.
        const outside = r.width > 0 && r.height > 0 && outsideOf(r, reach)
          && !(el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1);
        // A check box moved off the page behind its styled label is still ticked by it.
        const labelled = tag === 'input' && el.labels && el.labels.length > 0;
        if ((outside && !labelled) || (collapsedAway(cs, r) && el.firstChild)) { reach = saved; parentCursor = savedCursor; return; }
        if (scrollsPanel(cs)) reach = panelReach(el, r);
        // What a box clips (a carousel's track, the slides off its sides) is out of reach.
        else if (clipsBox(cs)) reach = clipReach(el, cs, r, reach);
      }
      try { shown(el, tag, vis, scripted, depth, o); } finally { reach = saved; parentCursor = savedCursor; inControl = savedControl; }
    };

    const shown = (el, tag, vis, scripted, depth, o) => {
      let role = vis === 'contents' ? null : roleOf(el, tag);
      if (scripted && (!role || role === 'generic')) role = 'clickable';
      if (tag === 'iframe' || tag === 'frame') {
        flush(o, depth);
        o.onlyText = false;
        const name = nameOf(el, tag, 'iframe');
        const head = '  '.repeat(depth) + '- iframe' + (name ? ' ' + quote(cap(name, 150)) : '');
        let doc = null;
        try { doc = el.contentDocument; } catch (e) { doc = null; }
        if (doc && doc.body) {
          const sub = { lines: [], text: '', onlyText: true };
          reach = pageReach(doc);
          walk(doc.body, depth + 1, sub);
          flush(sub, depth + 1);
          if (sub.lines.length) { o.lines.push(head + ':'); o.lines.push(...sub.lines); }
        } else {
          o.lines.push(head + ':');
          o.lines.push('  '.repeat(depth + 1) + '\u0001' + frameOf(el));
        }
        return;
      }
      if ((tag === 'legend' || tag === 'caption' || tag === 'figcaption') && el.parentElement
          && !el.parentElement.hasAttribute('aria-label') && !el.parentElement.hasAttribute('aria-labelledby')) {
        // Already its group's, table's or figure's name.
        return;
      }
      if (tag === 'label' && el.control) {
        // The label's text is its control's name: keep only its elements that hold the
        // control or another control (a link in "I agree to the terms"), not the words.
        flush(o, depth);
        const control = el.control;
        for (const c of children(el)) {
          if (c.nodeType !== 1) continue;
          if (c === control || c.contains(control) || c.matches(LABEL_KEEPS) || c.querySelector(LABEL_KEEPS)) visit(c, depth, o);
        }
        return;
      }
      let inside = true;
      let content;
      if (FROM_CONTENT.has(role) || role === 'clickable' || role === 'img') {
        content = textOf(el);
        inside = actionableInside;
      }
      let name = role ? nameOf(el, tag, role, content) : '';
      // A clickable box around other controls is named by its label only: its children
      // speak for themselves.
      if (role === 'clickable' && inside) name = norm(el.getAttribute('aria-label') || el.getAttribute('title') || '');
      if (role && NAMED_ONLY.has(role) && !name) role = null;
      if (role === 'none' || role === 'presentation' || role === 'generic') role = null;
      if (!role) {
        const block = !INLINE.has(tag);
        if (block) flush(o, depth);
        // One of a run of alike boxes (a product card in a grid) is an item: its lines are
        // bracketed by \u0003 and \u0004 lines, which reading takes out and keeps for
        // find's neighbourhoods (issue 11, class 7). A disclosure (<details>) is one item
        // of its own, its summary with what it shows: a filter's title brings its links.
        const item = block && (tag === 'details' || alike(el));
        const start = o.lines.length;
        if (item) o.lines.push('\u0003');
        walk(el, depth, o);
        if (block) flush(o, depth);
        if (item) {
          if (o.lines.length - start > 2) o.lines.push('\u0004');
          else {
            o.lines.splice(start, 1);
            if (o.textAt !== undefined && o.textAt > start) o.textAt--;
          }
        }
        return;
      }
      flush(o, depth);
      o.onlyText = false;
      let line = '  '.repeat(depth) + '- ' + (role === 'clickable' ? 'generic' : role);
      if (name) line += ' ' + quote(cap(name, 150));
      // States.
      const aria = (a) => el.getAttribute(a);
      if (role === 'heading') {
        const lv = aria('aria-level') || (/^h[1-6]$/.test(tag) ? tag[1] : '2');
        line += ' [level=' + lv + ']';
      }
      if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
        if (el.indeterminate) line += ' [checked=mixed]';
        else if (el.checked) line += ' [checked]';
      } else if (aria('aria-checked') === 'true') line += ' [checked]';
      else if (aria('aria-checked') === 'mixed') line += ' [checked=mixed]';
      if (el.disabled || aria('aria-disabled') === 'true') line += ' [disabled]';
      if (aria('aria-expanded') === 'true' || (tag === 'summary' && el.parentElement && el.parentElement.open)) line += ' [expanded]';
      if (aria('aria-pressed') === 'true') line += ' [pressed]';
      if (aria('aria-selected') === 'true') line += ' [selected]';
      if (tag === 'input' && el.type === 'file') line += ' [file]';
      // Draggable elements can be dragged, and a container the page names (aria-label)
      // is where things are dropped: both need a ref for a drag.
      const draggable = el.getAttribute('draggable') === 'true';
      const namedContainer = (el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby')) && DROP_TARGETS.has(role);
      // A header cell the page says sorts (AG Grid: tabindex -1, the click heard by the
      // grid's root) is clicked to sort.
      const sorts = role === 'columnheader' && el.hasAttribute('aria-sort');
      if (ACTIONABLE.has(role) || (el.hasAttribute('tabindex') && el.tabIndex >= 0) || el.hasAttribute('onclick') || draggable || namedContainer || scripted || sorts) {
        line += ' [ref=e' + refOf(el) + ']';
        // A control the page gave no name gets a hint, marked as one (issue 30).
        if (!name && !namedContainer && !((FROM_CONTENT.has(role) || role === 'clickable') && inside) && !textOf(el)) { const h = hintOf(el); if (h) line += ' (hint: ' + h + ')'; }
        // What is dropped onto holds controls of its own; anything else is one control.
        const heardOnly = scripted === 'heard' && (role === 'clickable' || !ACTIONABLE.has(role)) && !el.hasAttribute('tabindex') && !el.hasAttribute('onclick') && !draggable;
        // A list box, menu or tab list (focusable as a whole) holds controls of its own.
        if (!namedContainer && !heardOnly && !COMPOSITE.has(role) && !el.classList.contains('ui-droppable')) inControl = true;
      }
      // Values.
      if (tag === 'input') {
        const type = (el.getAttribute('type') || 'text').toLowerCase();
        if (type === 'file') {
          const names = clean(Array.from(el.files || [], (f) => f.name).join(', '));
          if (names) line += ': ' + cap(names, 300);
        } else if (type === 'range' || type === 'color') {
          line += ': ' + clean(el.value);
        } else if (!NOT_TYPED.has(type)) {
          line += fieldMarker(el, tag, name);
        }
        o.lines.push(line);
        return;
      }
      if (tag === 'textarea' || (role === 'textbox' && el.isContentEditable)) {
        o.lines.push(line + fieldMarker(el, tag, name));
        return;
      }
      if (tag === 'select') {
        line += fieldMarker(el, tag, name);
        o.lines.push(line);
        const opts = Array.from(el.options, (op) => norm(op.label || op.text)).filter((t) => t);
        if (opts.length) o.lines.push('  '.repeat(depth + 1) + '- options: ' + cap(opts.join(' | '), 4000));
        return;
      }
      // An SVG link's href is an animated string: its address is the attribute's.
      const address = typeof el.href === 'string' ? el.href
        : (el.href && el.href.baseVal ? (() => { try { return new URL(el.href.baseVal, el.baseURI).href; } catch (e) { return ''; } })() : '');
      if (role === 'link' && address) {
        let href = address;
        const origin = el.ownerDocument.location.origin;
        if (origin && origin !== 'null' && href.startsWith(origin + '/')) href = href.slice(origin.length);
        const suffix = ' -> ' + cap(clean(href).replace(/\s/g, ''), 300);
        if (!inside) { o.lines.push(line + suffix); return; }
        line += suffix;
      }
      if (tag === 'progress' || tag === 'meter') {
        o.lines.push(line + ': ' + el.value);
        return;
      }
      // A slider or spin button drawn with divs (Quasar, Vuetify) says its value in ARIA.
      if (VALUED.has(role) && el.hasAttribute('aria-valuenow')) {
        o.lines.push(line + ': ' + cap(norm(aria('aria-valuetext') || aria('aria-valuenow')), 100));
        return;
      }
      if (FROM_CONTENT.has(role) || role === 'clickable' || role === 'img') {
        if (!inside) {
          o.lines.push(line);
          return;
        }
      }
      const sub = { lines: [], text: '', onlyText: true };
      walk(el, depth + 1, sub);
      flush(sub, depth + 1);
      if (!sub.lines.length) { o.lines.push(line); return; }
      if (!name && sub.lines.length === 1 && !sub.onlyText
          && (HOIST.has(role) || (role === 'clickable' && sub.lines[0].includes('[ref=')))) {
        // A paragraph, or a box only heard or hand-cursored, around one control says
        // nothing: the control stands in its place.
        o.lines.push(sub.lines[0].slice(2));
        return;
      }
      if (FOLDS.has(role) && sub.lines.length === 1 && !sub.onlyText) {
        // A heading (or cell) that is just a link of the same name is that link.
        const m = /^ *- link "((?:[^"\\]|\\.)*)"( \[ref=e\d+\])( -> .*)?$/.exec(sub.lines[0]);
        if (m && quote(cap(name, 150)) === '"' + m[1] + '"') {
          o.lines.push(line + m[2] + (m[3] || ''));
          return;
        }
      }
      if (sub.onlyText && sub.lines.length === 1) {
        const t = sub.lines[0].trim().slice('- text: '.length);
        if (!(name && t === name)) o.lines.push(line + ': ' + t);
        else o.lines.push(line);
        return;
      }
      o.lines.push(line + ':');
      o.lines.push(...sub.lines);
    };

    const walk = (node, depth, o) => {
      let first = node.shadowRoot ? node.shadowRoot.firstChild : node.firstChild;
      if (node.localName === 'slot') {
        const assigned = node.assignedNodes();
        if (assigned.length) {
          for (const c of assigned) {
            if (c.nodeType === 3) o.text += c.data;
            else if (c.nodeType === 1) visit(c, depth, o);
          }
          return;
        }
      }
      // Sibling pointers: much faster than iterating a live NodeList.
      for (let c = first; c; c = c.nextSibling) {
        const type = c.nodeType;
        if (type === 3) o.text += c.data;
        else if (type === 1) visit(c, depth, o);
      }
    };

    reach = pageReach(document);
    if (document.body) walk(document.body, 0, out);
    flush(out, 0);
    return {
      text: out.lines.join('\n'), fields, token, next: nextRef, nextFrame,
      title: norm(document.title), url: clean(location.href),
    };
  }

  function element(n) {
    const w = elOfRef.get(n);
    const el = w && w.deref();
    if (el && el.isConnected) return el;
    // Refs at or below BASE were an earlier document's: gone. Above the counter: never given.
    return n > nextRef ? 'none' : 'gone';
  }

  function frame(n) {
    const w = elOfFrame.get(n);
    const el = w && w.deref();
    if (el && el.isConnected) return el;
    return n > nextFrame ? 'none' : 'gone';
  }

  // Text-entry fields with their box in this frame's viewport (values never leave), and
  // the frames this world cannot walk with their content box, for masking screenshots.
  function fields() {
    const found = [];
    const frames = [];
    const scan = (doc, dx, dy) => {
      for (const el of doc.querySelectorAll('input,textarea,select,[contenteditable],iframe,frame')) {
        const tag = el.localName;
        const r = el.getBoundingClientRect();
        if (tag === 'iframe' || tag === 'frame') {
          const cs = getComputedStyle(el);
          const x = dx + r.left + el.clientLeft + parseFloat(cs.paddingLeft || '0');
          const y = dy + r.top + el.clientTop + parseFloat(cs.paddingTop || '0');
          let sub = null;
          try { sub = el.contentDocument; } catch (e) { sub = null; }
          if (sub) scan(sub, x, y); else frames.push({ frame: frameOf(el), x, y });
          continue;
        }
        if (r.width <= 0 || r.height <= 0) continue;
        const type = tag === 'input' ? (el.getAttribute('type') || 'text').toLowerCase() : (tag === 'select' ? 'select' : '');
        if (tag === 'input' && NOT_TYPED.has(type)) continue;
        if (tag !== 'input' && tag !== 'textarea' && tag !== 'select' && !el.isContentEditable) continue;
        found.push({
          inputType: type, autocomplete: el.getAttribute('autocomplete') || '',
          label: nameOf(el, tag, 'textbox'), name: el.getAttribute('name') || '', id: el.id || '',
          placeholder: el.getAttribute('placeholder') || '',
          x: dx + r.left, y: dy + r.top, width: r.width, height: r.height,
        });
      }
    };
    scan(document, 0, 0);
    return { fields: found, frames, width: window.innerWidth, height: window.innerHeight, nextFrame };
  }

  // The ref an element was given by a read, if any (for naming a control in a sentence).
  const known = (el) => {
    const n = refOfEl.get(el);
    return n === undefined ? null : n;
  };

  // Whether an element is a control only by its own click listener, as the walk judges
  // it (for the acts' description to name it the same way, issue 30).
  const heard = (el) => listened.has(el) && el.localName !== 'svg' && el.getElementsByTagName('*').length <= LISTENED_MOST_INSIDE;

  globalThis.__conch = { snapshot, element, frame, fields, known, heard, read: () => reads, listened: listen };
  return true;
})()
