// Called on a file box with `files` ([{name, mime, b64}]). Puts them in it as File objects
// and fires input and change. Returns {files: [[name, size]]}, or {notFile: true} for
// anything but <input type=file>, or {oneOnly: true} for several files in a single box.
function(files) {
  const tag = (this.tagName || '').toLowerCase();
  if (tag !== 'input' || this.type !== 'file') return {notFile: true};
  if (files.length > 1 && !this.multiple) return {oneOnly: true};
  const dt = new DataTransfer();
  for (const f of files) {
    const bin = atob(f.b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    dt.items.add(new File([bytes], f.name, {type: f.mime}));
  }
  this.files = dt.files;
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {files: Array.from(this.files).map(f => [f.name, f.size])};
}
