// Called on an element (or a text node, for its element), prelude pasted in. Returns
// describe(el) plus frameFacts(el), `document` (the address of its own document) and
// `commit`: the facts that say whether acting on it commits and where it stands (issue
// 30): its `href` as written, its form's legend and name, its dialog's name, whether that
// dialog opened after Conch last marked the open ones (`dialogFresh`), and the text near
// it that may ask to confirm, other controls' words left out.
function() {
  PRELUDE
  const el = this.nodeType === 1 ? this : (this.parentElement || this);
  const __c_CONTROLS = 'button,a[href],input,select,textarea,option,label,[role=button],[role=link],[role=option],[role=menuitem],[role=checkbox],[role=radio],[role=tab],[role=listbox],[role=combobox],[role=textbox]';
  const __c_cut = (s, n) => (s.length > n ? s.slice(0, n) : s);
  // The text of `root`, with other controls' words left out: what it says, not offers.
  const __c_prose = (root) => {
    if (root.checkVisibility && !root.checkVisibility({visibilityProperty: true})) return '';
    const out = [];
    const walk = (n) => {
      for (const c of n.childNodes) {
        if (out.join(' ').length > 600) return;
        if (c.nodeType === 3) { out.push(c.data); continue; }
        if (c.nodeType !== 1 || c === el) continue;
        if (c.matches(__c_CONTROLS) || c.matches('script,style,template,[hidden],[aria-hidden=true]')) continue;
        const cs = c.ownerDocument.defaultView.getComputedStyle(c);
        if (cs.display === 'none' || cs.visibility === 'hidden') continue;
        const block = cs.display !== 'inline';
        if (block) out.push('\n');
        walk(c);
        if (block) out.push('\n');
      }
    };
    walk(root);
    return out.join(' ').replace(/[ \t\r\f\v]+/g, ' ').replace(/\s*\n\s*/g, '\n').trim();
  };
  const __c_byIds = (n, a) => __attr(n, a).split(/\s+/).filter(Boolean)
    .map((id) => n.ownerDocument.getElementById(id)).filter(Boolean)
    .map((x) => __text(x.textContent)).join(' ');
  const __c_nameOfBox = (box) => {
    const heading = box.querySelector('h1,h2,h3,h4,h5,h6,legend,[role=heading]');
    return __text([__attr(box, 'aria-label'), __c_byIds(box, 'aria-labelledby'),
      heading ? heading.textContent : ''].join(' '));
  };
  const __c_DIALOGS = 'dialog,[role=dialog],[role=alertdialog],[aria-modal=true]';
  const __c_dialog = el.closest ? el.closest(__c_DIALOGS) : null;
  const __c_form = el.form || (el.closest ? el.closest('form,[role=form]') : null);
  let __c_formName = '';
  if (__c_form) {
    const __c_legends = Array.from(__c_form.querySelectorAll('legend')).map((l) => l.textContent);
    __c_formName = __text([__attr(__c_form, 'aria-label'), __c_byIds(__c_form, 'aria-labelledby')].concat(__c_legends).join(' '));
    const h = __c_form.querySelector('h1,h2,h3,h4,h5,h6');
    if (h) __c_formName = __text(__c_formName + ' ' + h.textContent);
  }
  let __c_text = '';
  if (__c_dialog) {
    __c_text = __c_prose(__c_dialog);
  } else {
    // The page around it: the text before its form (or itself) up to the main heading,
    // as a confirmation page ("Are you sure you want to delete …?") puts it. Lower
    // headings are passed: Django's puts its question under the h1, then "Summary" and
    // "Objects" headings over lists, then the form.
    const __c_parts = [];
    let __c_anchor = __c_form || el;
    let __c_heading = false;
    for (let depth = 0; !__c_heading && __c_anchor && __c_anchor.parentElement && depth < 4; depth++, __c_anchor = __c_anchor.parentElement) {
      const __c_before = [];
      for (let s = __c_anchor.previousElementSibling; s && __c_before.length < 8; s = s.previousElementSibling) {
        // Another dialog's words are its own controls' context, not this one's.
        if (s.matches(__c_DIALOGS) || s.querySelector(__c_DIALOGS)) continue;
        __c_before.unshift(__c_prose(s));
        if (s.localName === 'h1' || (s.getAttribute('role') === 'heading' && s.getAttribute('aria-level') === '1')) { __c_heading = true; break; }
      }
      __c_parts.unshift(...__c_before);
      if (__c_parts.join(' ').length > 600) break;
    }
    if (__c_form) __c_parts.push(__c_prose(__c_form));
    __c_text = __c_parts.filter(Boolean).join('\n');
  }
  const __c_seen = globalThis.__conchDialogs;
  const __c_commit = {
    href: el.hasAttribute && el.hasAttribute('href') ? __attr(el, 'href') : null,
    form: __c_cut(__c_formName, 200),
    dialog: __c_dialog ? __c_cut(__c_nameOfBox(__c_dialog), 200) : '',
    dialogFresh: !!(__c_dialog && __c_seen && !__c_seen.has(__c_dialog)),
    text: __c_cut(__c_text, 800),
  };
  return Object.assign(describe(el), frameFacts(el), {document: el.ownerDocument ? el.ownerDocument.URL : '', commit: __c_commit});
}
