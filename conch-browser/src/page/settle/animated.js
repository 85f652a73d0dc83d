// A function called as (wait, animations, since, max): `wait` gives quiet.js's promise,
// `animations` is the act's animations.js, `since` the ms since the act began when this
// was sent, `max` the most to wait for the transitions. Once the wait answers quiet, the
// transitions the act started are waited for in the same call (issue 32: one round trip
// less per act). Resolves with the wait's answer and `animated`: whether they were.
(wait, animations, since, max) => {
  const sent = performance.now();
  return wait().then((answer) => {
    if (!answer || !answer.quiet) return answer;
    let waited;
    try {
      waited = Promise.resolve(animations(since + (performance.now() - sent), max));
    } catch (e) {
      return answer;
    }
    return waited.then(
      () => Object.assign({}, answer, { animated: true }),
      () => answer,
    );
  });
}
