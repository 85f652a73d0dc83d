// Called on a secret field, form_inputs.js pasted in. Returns {inputs, at, words,
// username}: each typed-text input's facts ({inputType, autocomplete, label, name, id,
// placeholder}, never its value), the field's place among them, the form's words (its
// name, id, label and action, headings, legends and buttons) and the value of its
// username or email field ('' when it has none).
function() {
  FORM_INPUTS
  const text = (t) => (t || '').replace(/\s+/g, ' ').trim().slice(0, 200);
  const label = (i) => text(i.getAttribute('aria-label') || (i.labels && i.labels[0] ? i.labels[0].textContent : ''));
  const fields = inputs.map((i) => ({ inputType: i.type || '', autocomplete: i.getAttribute('autocomplete') || '', label: label(i), name: i.name || '', id: i.id || '', placeholder: i.placeholder || '' }));
  const said = [scope.getAttribute('aria-label'), scope.getAttribute('name'), scope.id, scope.getAttribute('action')];
  for (const e of scope.querySelectorAll('h1, h2, h3, legend, button, input[type=submit], input[type=button]')) said.push(e.tagName === 'INPUT' ? e.value : e.textContent);
  const named = (i, re) => re.test([i.getAttribute('autocomplete'), i.name, i.id, label(i)].join(' '));
  const plain = inputs.filter((i) => i.type !== 'password');
  const user = plain.find((i) => /\b(username|email)\b/i.test(i.getAttribute('autocomplete') || ''))
    || plain.find((i) => i.type === 'email')
    || plain.find((i) => named(i, /user|e-?mail|login/i));
  return { inputs: fields, at: inputs.indexOf(this), words: said.map(text).join(' ').slice(0, 2000), username: user ? text(user.value) : '' };
}
