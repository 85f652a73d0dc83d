// The settings page (issue 16): reads and changes Conch's settings through the settings
// API (PROTO-10), shows status and health (LAUNCH-13, PROTO-11), runs Repair (LAUNCH-14)
// and Sign out of everything. Every outcome is said in the live region #outcome.

import { byId, el, show } from './view.js';
import { authorized } from './session.js';

/** What the gateway answered: its status and its body (JSON, or its sentence). */
async function api(method, path, body) {
  const options = { method, cache: 'no-store', headers: {} };
  if (body !== undefined) {
    options.headers['Content-Type'] = 'application/json';
    options.body = JSON.stringify(body);
  }
  let answer;
  try {
    answer = await authorized(path, options);
  } catch {
    return { ok: false, status: 0, body: { error: 'The gateway did not answer; is conch-gateway still running?' } };
  }
  const text = await answer.text();
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { error: text.trim() };
  }
  return { ok: answer.ok, status: answer.status, body: parsed };
}

/** Says `sentence` in the page's live region. */
function say(sentence) {
  const outcome = byId('outcome');
  outcome.textContent = '';
  // A fresh text node, so a screen reader announces a repeated sentence too.
  requestAnimationFrame(() => { outcome.textContent = sentence; });
}

/** The sentence of a failed answer. */
function failure(answer) {
  return answer.body.error || answer.body.said || `The gateway answered ${answer.status}.`;
}

const BACKEND_NAMES = {
  local: "Conch's own browser",
  chrome: 'your own Chrome',
  cdp: 'a browser at a DevTools address',
  browserbase: 'Browserbase',
  steel: 'Steel',
  pool: 'a pool of browsers',
};

function renderSettings(settings) {
  const backend = settings.backend;
  let now = `Conch drives ${BACKEND_NAMES[backend.kind] || backend.kind}`;
  if (backend.hosts && backend.hosts.length) now += ` at ${backend.hosts.join(', ')}`;
  else if (backend.host) now += ` at ${backend.host}`;
  now += '.';
  if (backend.keySaved) now += ' Key saved.';
  byId('backend-now').textContent = now;
  for (const radio of document.querySelectorAll('input[name="backend"]')) {
    radio.checked = radio.value === backend.kind;
  }
  byId('own-chrome-risk').textContent = settings.statements.ownChrome;
  byId('pool-risk').textContent = settings.statements.pool || '';

  const sites = byId('sites');
  sites.replaceChildren(...settings.sites.map((site) => el('li', {},
    el('span', { class: 'site' }, site),
    el('button', {
      type: 'button', class: 'secondary', 'aria-label': `Revoke ${site}`,
      onclick: () => revoke(site),
    }, 'Revoke'),
  )));
  show(byId('sites-empty'), settings.sites.length === 0);

  byId('allow-localhost').checked = settings.allowLocalhost;
  byId('allow-hosts').value = settings.allowHosts.join('\n');
  byId('decline-banners').checked = settings.declineCookieBanners;
  byId('search-url').value = settings.searchUrl;
  const run = settings.thisRun;
  byId('this-run').textContent = `This run: local apps ${run.allowLocalhost ? 'allowed' : 'not allowed'}` +
    (run.allowHosts.length ? `, and ${run.allowHosts.join(', ')}` : '') + '.';

  byId('hardening').textContent = settings.statements.hardening;
  byId('risks').replaceChildren(...settings.statements.residualRisks.map((risk) => el('li', {}, risk)));
}

function fact(term, value) {
  if (value === null || value === undefined || value === '') return [];
  return [el('div', {}, el('dt', {}, term), el('dd', {}, String(value)))];
}

/** The health checks, in words. */
const HEALTH = {
  'browser-backend': 'The chosen browser',
  'browser-errands': "Where tasks browse",
  'browser-errands-reopened': "The tasks' browsers",
};

function renderStatus(status) {
  const state = { running: 'running', idle: 'idle (starts on the next call)', downloading: 'downloading Chromium', unavailable: 'unavailable' };
  byId('status').replaceChildren(
    ...fact('Chosen browser', BACKEND_NAMES[status.chosen] || status.chosen),
    ...fact('In use', BACKEND_NAMES[status.backend] || status.backend),
    ...fact('State', state[status.state] || status.state),
    ...fact('Browser', status.browser),
    ...fact('Version', status.version),
    ...fact('Executable', status.executable),
    ...fact('Why', status.why),
    ...fact('Conch', status.gateway.version),
  );
  byId('flagged').replaceChildren(...status.flagged.map((item) => el('li', {},
    el('span', {}, item.said),
    item.fix === 'browser-own-chrome-off'
      ? el('button', { type: 'button', class: 'secondary', onclick: backToLocal }, "Use Conch's own browser")
      : null,
  )));
  show(byId('flagged-empty'), status.flagged.length === 0);
  const notes = status.notes || [];
  byId('health').replaceChildren(
    ...status.health.map((item) => el('li', {}, item.ok && !item.said ? `${HEALTH[item.id] || item.id}: all is well.` : `${HEALTH[item.id] || item.id}: ${item.said}`)),
    ...notes.filter((note) => !status.health.some((item) => item.said === note)).map((note) => el('li', {}, note)),
  );
}

async function loadSettings() {
  const answer = await api('GET', '/api/browser/settings');
  if (!answer.ok) {
    byId('backend-now').textContent = failure(answer);
    return;
  }
  renderSettings(answer.body);
}

async function loadStatus() {
  const answer = await api('GET', '/api/browser/status');
  if (answer.ok) renderStatus(answer.body);
  else say(failure(answer));
}

async function revoke(site) {
  const answer = await api('DELETE', `/api/browser/sites/${encodeURIComponent(site)}`);
  say(answer.ok ? answer.body.said : failure(answer));
  await loadSettings();
  byId('sites-heading').focus();
}

async function backToLocal() {
  const answer = await api('PUT', '/api/browser/backend', { backend: 'local' });
  say(answer.ok ? "Conch uses its own browser again." : failure(answer));
  await Promise.all([loadSettings(), loadStatus()]);
}

async function chooseBackend(event) {
  event.preventDefault();
  const chosen = document.querySelector('input[name="backend"]:checked');
  if (!chosen) {
    say('Choose a browser first.');
    return;
  }
  const body = { backend: chosen.value };
  const url = byId('backend-url').value.trim();
  const key = byId('backend-key').value.trim();
  const project = byId('backend-project').value.trim();
  if (url) body.url = url;
  if (key) body.key = key;
  if (project) body.project = project;
  if (chosen.value === 'pool') {
    body.endpoints = byId('backend-endpoints').value.split('\n').map((line) => line.trim()).filter(Boolean);
    body.perEndpoint = byId('backend-per-endpoint').value.trim() || '4';
    delete body.url;
  }
  const answer = await api('PUT', '/api/browser/backend', body);
  byId('backend-key').value = '';
  byId('backend-endpoints').value = '';
  if (answer.ok) {
    const said = [].concat(answer.body.said || []).join('; ');
    say(`Saved: ${said}.` + (answer.body.unusable ? ` ${answer.body.unusable}` : ''));
    renderSettings(answer.body);
    await loadStatus();
  } else {
    say(failure(answer));
  }
}

async function saveLocal(event) {
  event.preventDefault();
  const hosts = byId('allow-hosts').value.split('\n').map((line) => line.trim()).filter(Boolean);
  const answer = await api('PATCH', '/api/browser/settings', {
    allowLocalhost: byId('allow-localhost').checked,
    allowHosts: hosts,
    declineCookieBanners: byId('decline-banners').checked,
    searchUrl: byId('search-url').value.trim(),
  });
  if (answer.ok) {
    say(answer.body.said);
    renderSettings(answer.body);
  } else {
    say(failure(answer));
  }
}

/**
 * Asks the person in the confirm dialog; gives 'yes', 'no' or 'cancel'. `no` is the
 * label of the middle choice, or null for a yes-or-cancel question.
 */
function confirmWith(heading, text, yes, no) {
  const dialog = byId('confirm');
  byId('confirm-heading').textContent = heading;
  byId('confirm-text').textContent = text;
  byId('confirm-yes').textContent = yes;
  byId('confirm-no').textContent = no || '';
  show(byId('confirm-no'), Boolean(no));
  dialog.returnValue = 'cancel';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue || 'cancel'), { once: true });
    dialog.showModal();
    byId('confirm-cancel').focus();
  });
}

async function repair() {
  const choice = await confirmWith(
    'Repair',
    "Repair runs every fix in turn. As its last step, should it also wipe the browser's profile? Every site then signs out.",
    'Repair and wipe the profile',
    'Repair, keep the profile',
  );
  if (choice === 'cancel') {
    say('Repair was not run.');
    return;
  }
  const button = byId('repair');
  button.disabled = true;
  say('Repairing…');
  const answer = await api('POST', '/api/browser/repair', { wipeProfile: choice === 'yes' });
  button.disabled = false;
  if (!answer.ok) {
    say(failure(answer));
    return;
  }
  const names = {
    'end-stale': 'End stale browsers and clear locks',
    relaunch: 'Start the browser again',
    'fallback-or-download': 'Fall back or download',
    'reconnect-backend': 'Reconnect the chosen browser',
    'wipe-profile': 'Wipe the profile',
  };
  byId('repair-steps').replaceChildren(...answer.body.steps.map((step) => el('li', { class: `step-${step.outcome}` },
    el('strong', {}, `${names[step.id] || step.id} (${step.outcome}): `), step.said)));
  const failed = answer.body.steps.filter((step) => step.outcome === 'failed').length;
  say(failed ? `Repair finished; ${failed} step(s) failed, listed under Repair.` : 'Repair finished; each step is listed under Repair.');
  await loadStatus();
}

async function signOut() {
  const choice = await confirmWith(
    'Sign out of everything?',
    "This wipes the browser's profile: every site Conch's browser is signed in to signs out.",
    'Sign out of everything',
    null,
  );
  if (choice !== 'yes') {
    say('Nothing was wiped.');
    return;
  }
  const answer = await api('POST', '/api/browser/sign-out', { confirm: true });
  say(answer.ok ? answer.body.said : failure(answer));
  await loadStatus();
}

byId('backend-form').addEventListener('submit', chooseBackend);
byId('local-form').addEventListener('submit', saveLocal);
byId('refresh').addEventListener('click', loadStatus);
byId('sign-in-again').addEventListener('click', async () => {
  const answer = await api('POST', '/api/browser/sign-in-again');
  say(answer.ok ? answer.body.said : failure(answer));
});
byId('repair').addEventListener('click', repair);
byId('sign-out').addEventListener('click', signOut);
byId('sites-heading').setAttribute('tabindex', '-1');
loadSettings().then(loadStatus).then(() => document.body.setAttribute('data-ready', '1'));
