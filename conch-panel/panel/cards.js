// Question cards (PERM-3, PERM-6, HS-2, UP-9, DL-1): Conch asks the person before the
// agent acts, over the live socket. One card per question; a press answers it with
// {type:'answer', id, choice}; the gateway closes it with `questionClosed` or `answered`.
// The card is Conch's own look, unlike the page's dialogs, which are drawn under the
// site's name (DLG-15).

import { byId, el, show } from './view.js';

const KIND_NAMES = {
  site: 'Using a site',
  ownChrome: 'Your own Chrome',
  highStakes: 'A significant step',
  upload: 'Uploading files',
  download: 'Downloading a file',
  browserDownload: 'The browser could not be downloaded',
};

/** The cards of one conversation; `send(command)` writes to its live socket. */
export class Cards {
  constructor(send, onChange) {
    this.send = send;
    this.onChange = onChange;
    this.list = byId('cards');
    this.empty = byId('no-cards');
    this.announce = byId('cards-announce');
    /** The card whose answer was sent last and not yet closed: errors go to it. */
    this.lastAnswered = null;
  }

  /** How many questions wait. */
  get count() {
    return this.list.querySelectorAll('.card:not(.answered)').length;
  }

  /** Shows the question `q` (a `question` event); a repeated id replaces its card. */
  question(q) {
    if (typeof q.id !== 'string' || typeof q.text !== 'string') return;
    this.remove(q.id);
    const domId = `question-${this.list.childElementCount}-${q.id.replace(/[^\w-]/g, '_')}`;
    const card = el('section', {
      class: `card kind-${KIND_NAMES[q.kind] ? q.kind : 'other'}`,
      'aria-labelledby': `${domId}-title`,
      'data-question': q.id,
    });
    // `append` would write a missing part as the text "null": leave those out.
    const parts = [
      el('p', { class: 'card-kind' }, KIND_NAMES[q.kind] || 'A question'),
      el('h4', { id: `${domId}-title` }, q.text),
      facts(q),
      words(q),
      thumbnail(q),
      q.taintNote ? el('p', { class: 'taint' }, q.taintNote) : null,
      el(
        'div',
        { class: 'choices' },
        (Array.isArray(q.choices) ? q.choices : []).map((choice) =>
          el(
            'button',
            {
              type: 'button',
              class: choice.id === 'no' ? 'secondary' : '',
              onclick: () => this.answer(card, q.id, choice.id),
            },
            choice.label || choice.id,
          ),
        ),
      ),
      el('p', { class: 'card-error', hidden: true }),
    ];
    card.append(...parts.filter((part) => part !== null && part !== undefined));
    this.list.append(card);
    this.announce.textContent = `Conch asks: ${q.text}`;
    this.changed();
  }

  answer(card, id, choice) {
    card.classList.add('answered');
    for (const button of card.querySelectorAll('button')) button.disabled = true;
    this.lastAnswered = id;
    this.send({ type: 'answer', id, choice });
  }

  /** Removes the card of question `id` (`questionClosed` or `answered`). */
  remove(id) {
    for (const card of this.list.querySelectorAll('.card')) {
      if (card.dataset.question === id) card.remove();
    }
    if (this.lastAnswered === id) this.lastAnswered = null;
    this.changed();
  }

  /**
   * Shows an `error` event on the card it answers: the one it names with `id`, else the
   * card answered last. False when no card takes it.
   */
  error(event) {
    const id = typeof event.id === 'string' ? event.id : this.lastAnswered;
    const card = [...this.list.querySelectorAll('.card')].find((c) => c.dataset.question === id);
    if (!card) return false;
    const line = card.querySelector('.card-error');
    line.textContent = event.message;
    line.setAttribute('role', 'alert');
    show(line, true);
    this.lastAnswered = null;
    return true;
  }

  changed() {
    show(this.empty, this.list.childElementCount === 0);
    this.onChange?.(this.count);
  }
}

/** The site (and the frame's, when it differs) and the tool that asks. */
function facts(q) {
  const items = [];
  if (q.site) items.push(el('div', {}, el('dt', {}, 'Site'), el('dd', {}, q.site)));
  if (q.frameSite && q.frameSite !== q.site) {
    items.push(el('div', {}, el('dt', {}, 'Inside a frame of'), el('dd', {}, q.frameSite)));
  }
  if (q.tool) items.push(el('div', {}, el('dt', {}, 'Asked by'), el('dd', {}, q.tool)));
  if (q.lendsSignIn) {
    items.push(el('div', {}, el('dt', {}, 'Signed in'), el('dd', {}, 'Your sign-in on this site is used')));
  }
  return items.length ? el('dl', { class: 'facts' }, items) : null;
}

/** The element's own words (HS-2), or each file of an upload (UP-9). */
function words(q) {
  if (!q.words) return null;
  const lines = Array.isArray(q.words) ? q.words.map(String) : String(q.words).split('\n');
  if (q.kind === 'upload' || Array.isArray(q.words)) {
    return el('ul', { class: 'files', 'aria-label': 'Files' }, lines.filter(Boolean).map((l) => el('li', {}, l)));
  }
  return el('blockquote', { class: 'words' }, String(q.words));
}

/** The thumbnail cut around the element, when the question carries one as a data URL. */
function thumbnail(q) {
  if (typeof q.thumbnail !== 'string' || !q.thumbnail.startsWith('data:image/')) return null;
  const what = q.words ? `“${Array.isArray(q.words) ? q.words.join(', ') : q.words}”` : 'the element';
  return el('img', { class: 'thumbnail', src: q.thumbnail, alt: `The page around ${what}` });
}
