// Called on an element with `frame`, `inView` and `needEnabled` (booleans), prelude
// pasted in. Returns {gone: true} when it left the document, else describe(el) plus
// `visible` and `stable` (still over one animation frame, and moved by no running
// animation of its own or of a box around it, when `frame` is true, a promise then;
// unchecked and true otherwise). With `inView`, an element found visible, stable and
// (with `needEnabled`) enabled has what the pointer presses scrolled into view as
// press_target_in_view.js does, and `pressSelf` says whether that is the element itself
// (false: a label of it, whose handle the caller asks for): one call for what were two
// (issue 32).
function(frame, inView, needEnabled) {
  PRELUDE
  const el = this;
  if (!el.isConnected) return {gone: true};
  const d = describe(el);
  const r1 = el.getBoundingClientRect();
  // A check box moved off the page behind its styled label is pressed through the label.
  const visible = reachable(el) || (!!el.labels && Array.from(el.labels).some(reachable));
  const answer = (stable) => {
    const out = Object.assign(d, {visible, stable});
    if (inView && visible && stable && !(needEnabled && d.disabled)) {
      out.pressSelf = pressTargetInView(el) === el;
    }
    return out;
  };
  // Stillness unchecked: the caller proves it otherwise, or needs none.
  if (!frame) return answer(true);
  // Two looks a frame apart can both fall on the turn of an animation that goes back and
  // forth: a running animation that moves the element, or a box around it, is movement.
  const GEOMETRY = /^(transform|translate|rotate|scale|top|left|right|bottom|inset|margin|width|height)/;
  const animated = () => {
    for (let n = el; n && n.nodeType === 1; n = n.parentElement) {
      if (!n.getAnimations) continue;
      for (const a of n.getAnimations()) {
        if (a.playState !== 'running' || !a.effect || !a.effect.getKeyframes) continue;
        if (a.effect.getKeyframes().some((k) => Object.keys(k).some((p) => GEOMETRY.test(p)))) return true;
      }
    }
    return false;
  };
  return new Promise(resolve => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const r2 = el.getBoundingClientRect();
      resolve(answer(r1.x === r2.x && r1.y === r2.y && r1.width === r2.width && r1.height === r2.height && !animated()));
    };
    requestAnimationFrame(finish);
    setTimeout(finish, 50);
  });
}
