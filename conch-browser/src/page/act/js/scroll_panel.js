// Called on an element with `dx`, `dy` (signs). Scrolls the nearest ancestor (or itself)
// that scrolls on that axis by most of its size. Returns {scrolled: true, moved} or
// {scrolled: false} when none scrolls.
function(dx, dy) {
  const vertical = dy !== 0;
  for (let n = this; n; n = n.parentElement || (n.getRootNode && n.getRootNode().host) || null) {
    if (n === document.body || n === document.documentElement) break;
    const cs = getComputedStyle(n);
    const overflow = vertical ? cs.overflowY : cs.overflowX;
    const room = vertical ? n.scrollHeight - n.clientHeight : n.scrollWidth - n.clientWidth;
    if ((overflow === 'auto' || overflow === 'scroll' || overflow === 'overlay') && room > 1) {
      const before = vertical ? n.scrollTop : n.scrollLeft;
      n.scrollBy({left: Math.sign(dx) * n.clientWidth * 0.8, top: Math.sign(dy) * n.clientHeight * 0.8, behavior: 'instant'});
      const after = vertical ? n.scrollTop : n.scrollLeft;
      return {scrolled: true, moved: after !== before};
    }
  }
  return {scrolled: false};
}
