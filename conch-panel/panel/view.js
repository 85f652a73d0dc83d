// Small DOM helpers shared by the panel's modules. Text always goes in as text (never as
// HTML): what pages, sites and agents say can't become markup.

/** The element with `id`; throws if the page lacks it, so a renamed id fails loudly. */
export function byId(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error(`The panel has no #${id}.`);
  return found;
}

/**
 * A new element: `el('button', {type: 'button', onclick: f}, 'OK')`. Attributes named
 * `on…` become listeners; `class` sets the class; `false`/`null`/`undefined` are left out.
 */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      node.addEventListener(name.slice(2), value);
    } else if (name === 'class') {
      node.className = value;
    } else {
      node.setAttribute(name, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Shows or hides `node`. */
export function show(node, visible) {
  node.hidden = !visible;
}

let toastTimer = 0;

/** Says `message` in the alert toast for a few seconds. */
export function toast(message) {
  const box = byId('toast');
  box.textContent = message;
  box.classList.add('shown');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    box.classList.remove('shown');
    box.textContent = '';
  }, 6000);
}

/** The query parameter `name` of the page's address, or `null`. */
export function param(name) {
  return new URLSearchParams(location.search).get(name);
}
