// Called on an element that is not a <select> or a listbox. Returns whether it opens a
// list of options to pick from: a combobox (MUI Autocomplete, Quasar q-select,
// react-select) or a box that says it pops up a list box (Mantine Select).
function() {
  const attr = (n) => (this.getAttribute(n) || '').toLowerCase();
  const role = attr('role').split(/\s+/)[0];
  return role === 'combobox' || attr('aria-haspopup') === 'listbox'
    || (attr('aria-autocomplete') !== '' && attr('aria-autocomplete') !== 'none');
}
