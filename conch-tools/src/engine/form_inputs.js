// Pasted into form_around.js and form_input.js in place of their FORM_INPUTS line, called
// there on a field: no value of its own. Defines `scope` (the field's form, the closest
// <form>, else the document's body) and `inputs` (the typed-text inputs in it, in order,
// enabled ones only).
const scope = this.form || this.closest('form') || this.ownerDocument.body;
const skip = ['checkbox','radio','button','submit','reset','image','file','hidden','range','color'];
const inputs = Array.from(scope.querySelectorAll('input')).filter((i) => !i.disabled && !skip.includes((i.type || '').toLowerCase()));
