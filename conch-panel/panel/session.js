// The panel's session (LIVE-18, AMB-2). The sign-in link's answer leads to `/#session=TOKEN`;
// this module keeps TOKEN in the panel origin's own localStorage (no other port or site can
// read it) and sends it with every API call (header `X-Conch-Session`) and every live
// socket (subprotocol `conch.session.TOKEN`). The cookie the gateway set is only the second
// factor: another server on 127.0.0.1 that gets the cookie still can't use the panel.
// The sign-in page stores where the person was going (`conch.return`) so a handoff's link
// leads back there once signed in. When the gateway no longer knows the session (it
// restarted, or the session expired or was ended elsewhere: an API call answers 401, or the
// live socket is refused and a call then answers 401), the panel stops retrying and goes to
// the sign-in page, which says so (`conch.ended`) and offers a new link (issue 28).

const KEY = 'conch.session';
const RETURN = 'conch.return';
/** Set (in this tab only) when the session ended under the page, for the sign-in page. */
const ENDED = 'conch.ended';
/** How long a remembered destination counts (a sign-in code's own lifetime). */
const RETURN_MS = 10 * 60 * 1000;

function read(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key, value) {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // Storage refused (a private window's quota): the session lasts this page only.
  }
}

let held = read(KEY) || '';
const given = new URLSearchParams(location.hash.slice(1)).get('session');
if (given) {
  held = given;
  write(KEY, given);
  history.replaceState(null, '', location.pathname + location.search);
}

/**
 * Where the sign-in page said the person was going, if they just signed in: a path of this
 * origin, remembered less than 10 minutes ago. Forgotten once read.
 */
function destination() {
  if (!given) return null;
  const saved = read(RETURN);
  write(RETURN, null);
  try {
    const { path, at } = JSON.parse(saved || 'null') || {};
    const local = typeof path === 'string' && path.startsWith('/') && !path.startsWith('//');
    if (local && Date.now() - at < RETURN_MS && path !== location.pathname + location.search) return path;
  } catch {
    // Nothing usable was remembered.
  }
  return null;
}

/** True while the page is leaving for the destination the sign-in page remembered. */
export const leaving = (() => {
  const path = destination();
  if (path) location.replace(path);
  return path !== null;
})();

/** Remembers this page's address, for after the sign-in (the sign-in page calls it). */
export function rememberDestination() {
  const path = location.pathname + location.search;
  if (path === '/' || path.startsWith('/signin')) return;
  write(RETURN, JSON.stringify({ path, at: Date.now() }));
}

/** The session's token, or ''. */
export function token() {
  return held;
}

/** Forgets the token and goes to the sign-in page. */
export function signedOut() {
  held = '';
  write(KEY, null);
  location.replace('/signin');
}

let ending = false;

/**
 * The gateway no longer knows this page's session (it restarted, or the session expired or
 * was signed out in another window): the token is forgotten and the page goes to the
 * sign-in page, which says so, offers a new link, and leads back here once signed in.
 */
export function sessionEnded() {
  if (ending) return;
  ending = true;
  held = '';
  write(KEY, null);
  const path = location.pathname + location.search;
  if (path !== '/') write(RETURN, JSON.stringify({ path, at: Date.now() }));
  try {
    sessionStorage.setItem(ENDED, '1');
  } catch {
    // Storage refused: the sign-in page just doesn't say why.
  }
  location.replace('/signin');
}

/** Whether the page before this one found its session ended (forgotten once read). */
export function sessionHadEnded() {
  try {
    const ended = sessionStorage.getItem(ENDED) === '1';
    sessionStorage.removeItem(ENDED);
    return ended;
  } catch {
    return false;
  }
}

/** `fetch` with the session's token; an answer 401 (no session any more) leads to the sign-in page. */
export async function authorized(path, options = {}) {
  const headers = new Headers(options.headers || {});
  headers.set('X-Conch-Session', held);
  const answer = await fetch(path, { cache: 'no-store', ...options, headers });
  if (answer.status === 401) sessionEnded();
  return answer;
}

/**
 * Whether the gateway still knows the session, asked after the live socket closed: `true`,
 * `false` (401: the page is leaving for the sign-in page) or `null` (no answer: the
 * gateway is down or restarting, so the socket keeps trying).
 */
export async function sessionKnown() {
  try {
    const answer = await authorized('/api/browser/conversations');
    return answer.status !== 401;
  } catch {
    return null;
  }
}

/** A WebSocket to the gateway's live view, offering the token as its second subprotocol. */
export function socket(address) {
  return new WebSocket(address, ['conch', `conch.session.${held}`]);
}

/** Wires the page's "Sign out of the panel" button (#panel-sign-out), when it has one. */
function wireSignOut() {
  const button = document.getElementById('panel-sign-out');
  if (!button) return;
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      await authorized('/api/browser/session', { method: 'DELETE' });
    } catch {
      // The gateway is gone: the session is gone with it.
    }
    signedOut();
  });
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', wireSignOut);
else wireSignOut();
