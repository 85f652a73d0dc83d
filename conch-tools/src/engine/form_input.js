// Called on a field with `at` (an index), form_inputs.js pasted in. Returns the `at`th
// typed-text input of its form, in form_around.js's order, or null.
function(at) {
  FORM_INPUTS
  return inputs[at] || null;
}
