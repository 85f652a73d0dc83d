// The Passwords page (issue 16): lists the saved sites and usernames, saves a password
// the person types, removes one. Every outcome is said in the live region #outcome. The
// password is sent once, to the gateway's own API, and the field is emptied at once.

import { byId, el, show } from './view.js';
import { authorized } from './session.js';

const API = '/api/browser/passwords';

/** Says `sentence` in the page's live region. */
function say(sentence) {
  byId('outcome').textContent = sentence;
}

/** The gateway's one-sentence answer to a refused request. */
async function refusal(answer) {
  const text = (await answer.text()).trim();
  return text || `The gateway answered ${answer.status}.`;
}

function render(passwords) {
  show(byId('loading'), false);
  show(byId('none'), passwords.length === 0);
  show(byId('saved'), passwords.length > 0);
  byId('saved-rows').replaceChildren(
    ...passwords.map(({ site, username }) =>
      el(
        'tr',
        {},
        el('td', {}, site),
        el('td', {}, username || '(none)'),
        el(
          'td',
          {},
          el(
            'button',
            {
              type: 'button',
              class: 'secondary',
              'aria-label': `Remove the password for ${site}`,
              onclick: () => remove(site),
            },
            'Remove',
          ),
        ),
      ),
    ),
  );
}

/** Lists the saved passwords; gives null, or the sentence that says why it could not. */
async function listed() {
  try {
    const answer = await authorized(API);
    if (!answer.ok) throw new Error(await refusal(answer));
    const body = await answer.json();
    render(Array.isArray(body.passwords) ? body.passwords : []);
    return null;
  } catch (error) {
    show(byId('loading'), false);
    return `The saved passwords could not be listed: ${error.message}`;
  }
}

/** Lists the saved passwords, then says `sentence` (and why the list is old, if it
 * is): the live region speaks once the list it speaks of is there. */
async function load(sentence = '') {
  const failed = await listed();
  const said = [sentence, failed].filter(Boolean).join(' ');
  if (said) say(said);
}

async function save(event) {
  event.preventDefault();
  const site = byId('site');
  const username = byId('username');
  const password = byId('password');
  for (const [field, name] of [[site, 'site'], [username, 'username'], [password, 'password']]) {
    if (!field.value.trim()) {
      say(`Give the ${name}.`);
      field.focus();
      return;
    }
  }
  const body = JSON.stringify({ site: site.value, username: username.value, password: password.value });
  password.value = '';
  byId('save-button').disabled = true;
  try {
    const answer = await authorized(API, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
      cache: 'no-store',
    });
    if (!answer.ok) {
      say(await refusal(answer));
      password.focus();
      return;
    }
    const { saved } = await answer.json();
    site.value = '';
    username.value = '';
    site.focus();
    await load(`Saved the password for ${saved.site} (${saved.username}).`);
  } catch (error) {
    say(`The password was not saved: ${error.message}`);
  } finally {
    byId('save-button').disabled = false;
  }
}

async function remove(site) {
  try {
    const answer = await authorized(`${API}/${encodeURIComponent(site)}`, { method: 'DELETE' });
    if (!answer.ok) {
      say(await refusal(answer));
      return;
    }
    await load(`Removed the password for ${site}.`);
    byId('saved-heading').focus();
  } catch (error) {
    say(`The password was not removed: ${error.message}`);
  }
}

byId('save').addEventListener('submit', save);
load();
