// The panel's boot and routing (issue 14). `/` lists the conversations; `?conversation=ID`
// opens that one's live view beside the list; `?browser=1` puts the browser in front
// (LIVE-17): the live view is the page's main content and the list steps aside.

import { byId, el, param, show } from './view.js';
import { LiveView } from './live.js';
import { authorized, leaving } from './session.js';

/** The stdio door's one conversation: the list's stand-in when the gateway has no list. */
const STDIO = 'mcp-stdio';
const REFRESH_MS = 5000;

let chosen = param('conversation');
const front = param('browser') === '1';
let live = null;
/** The open conversation's waiting questions, as its live socket counts them. */
let ownQuestions = null;

/** The live conversations, or `null` when the gateway can't give them now. */
async function conversations() {
  try {
    const answer = await authorized('/api/browser/conversations');
    if (!answer.ok) throw new Error(String(answer.status));
    const body = await answer.json();
    if (!Array.isArray(body.conversations)) throw new Error('no list');
    return body.conversations;
  } catch {
    return null;
  }
}

/** The address that opens conversation `id`, keeping `?browser=1`. */
function link(id) {
  const query = new URLSearchParams({ conversation: id });
  if (front) query.set('browser', '1');
  return `/?${query}`;
}

function render(list) {
  const items = list.map((conversation) => {
    const active = (conversation.tabs || []).find((tab) => tab.active);
    const questions = conversation.id === chosen && ownQuestions !== null ? ownQuestions : conversation.questions || 0;
    return el(
      'li',
      {},
      el(
        'a',
        { href: link(conversation.id), 'aria-current': conversation.id === chosen ? 'page' : false },
        el('span', { class: 'conversation-id' }, conversation.name || conversation.id),
        el('span', { class: 'conversation-title' }, active?.title || active?.url || 'No page open'),
        // Issue 31: what the conversation's results cost the agent's context so far.
        conversation.spent ? el('span', { class: 'conversation-spent' }, `Results so far: ${conversation.spent}`) : null,
        questions > 0
          ? el(
              'span',
              { class: 'badge' },
              String(questions),
              el('span', { class: 'visually-hidden' }, questions === 1 ? ' question waiting' : ' questions waiting'),
            )
          : null,
      ),
    );
  });
  byId('conversations').replaceChildren(...items);
  show(byId('conversations-empty'), items.length === 0);
  const own = list.find((conversation) => conversation.id === chosen && 'budgetChars' in conversation);
  show(byId('budget'), Boolean(own));
  const input = byId('budget-chars');
  if (own && document.activeElement !== input && !input.dataset.edited) {
    input.value = own.budgetChars === null ? '' : String(own.budgetChars);
  }
}

/** Issue 31: the person sets the open conversation's budget (the agent has no door to it). */
async function setBudget(event) {
  event.preventDefault();
  const input = byId('budget-chars');
  const text = input.value.trim();
  const said = byId('budget-said');
  try {
    const answer = await authorized(`/api/browser/conversations/${encodeURIComponent(chosen)}/budget`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ chars: text === '' ? null : Number(text) }),
    });
    said.textContent = answer.ok
      ? `Budget set. Results so far: ${(await answer.json()).spent}.`
      : (await answer.text()).trim();
    delete input.dataset.edited;
  } catch {
    said.textContent = 'The gateway did not answer; the budget is unchanged.';
  }
}

byId('budget').addEventListener('submit', setBudget);
byId('budget-chars').addEventListener('input', (event) => {
  event.target.dataset.edited = '1';
});

let last = [];
/** Whether the gateway ever gave the list. */
let listed = false;

/**
 * Refreshes the list every 5 s, whatever the last fetch did (issue 28): a failed fetch
 * keeps the last list (or, before any, a stand-in for the conversation in view) and says
 * the list may be out of date until a fetch succeeds again. A session the gateway no
 * longer knows (401) leaves for the sign-in page instead (session.js).
 */
async function refresh() {
  const got = await conversations();
  if (got !== null) {
    last = got;
    listed = true;
  } else if (!listed) {
    last = [{ id: chosen || STDIO, watchers: 0, questions: 0, tabs: [] }];
  }
  show(byId('conversations-stale'), got === null);
  // `?browser=1` alone opens the first conversation in front.
  if (!live && front && last.length > 0) open(last[0].id);
  render(last);
  setTimeout(refresh, REFRESH_MS);
}

function open(id) {
  chosen = id;
  document.body.classList.toggle('browser-front', front);
  live = new LiveView(id, {
    onQuestions: (count) => {
      ownQuestions = count;
      render(last);
    },
  });
  live.start();
}

// Just signed in on the way to another address (a handoff's link): the page goes there.
if (!leaving) {
  if (chosen) open(chosen);
  refresh();
}
