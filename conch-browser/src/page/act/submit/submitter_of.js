// Pasted into submitter.js and focused_submitter.js in place of their SUBMITTER_OF line:
// no value of its own. Defines submitterOf(el): the form's default button for Enter in
// `el`, the button that stands in for a form with no submit button, the form itself, or
// null when Enter there submits nothing.
const submitterOf = (el) => {
  const tag = el && el.tagName ? el.tagName.toLowerCase() : '';
  const type = tag === 'input' ? (el.type || 'text').toLowerCase() : '';
  if (tag !== 'input' || ['button', 'reset', 'submit', 'image', 'file', 'hidden', 'color'].includes(type)) return null;
  const form = el.form;
  if (!form) return null;
  const controls = Array.from(form.elements);
  const isSubmit = (c) => (c.tagName === 'BUTTON' && (c.type || '').toLowerCase() === 'submit')
    || (c.tagName === 'INPUT' && ['submit', 'image'].includes((c.type || '').toLowerCase()));
  const button = controls.find(isSubmit);
  if (button) return button.disabled ? null : button;
  const blocking = ['text', 'search', 'url', 'tel', 'email', 'password', 'date', 'month', 'week', 'time', 'datetime-local', 'number'];
  const fields = controls.filter(c => c.tagName === 'INPUT' && blocking.includes((c.type || 'text').toLowerCase()));
  if (fields.length > 1) return null;
  const own = controls.find(c => c.tagName === 'BUTTON' || (c.tagName === 'INPUT' && (c.type || '').toLowerCase() === 'button'));
  return own || form;
};
