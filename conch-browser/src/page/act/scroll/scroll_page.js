// A function called as (dx, dy), the signs of the direction (-1, 0 or 1). Scrolls the
// document by most of the window's size on that axis, at once. Returns true.
(dx, dy) => {
  const s = document.scrollingElement || document.documentElement;
  s.scrollBy({left: dx * innerWidth * 0.8, top: dy * innerHeight * 0.8, behavior: 'instant'});
  return true;
}
