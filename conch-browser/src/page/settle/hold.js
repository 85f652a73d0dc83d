// A function called as (watch, key, max), watch being watch.js. Holds a new watch under
// `key` in the world's __conchSettle map until quiet.js takes it, or for `max` ms. Returns
// true.
((watch, key, max) => {
  const held = globalThis.__conchSettle || (globalThis.__conchSettle = new Map());
  const state = watch();
  held.set(key, state);
  setTimeout(() => { if (held.get(key) === state) { state.stop(); held.delete(key); } }, max);
  return true;
})
