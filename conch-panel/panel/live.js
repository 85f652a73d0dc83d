// The live view of one conversation (LIVE-1 … LIVE-14): one WebSocket carries JPEG frames
// (binary) and JSON events (text) from the gateway, and the person's commands back. The
// canvas fills the view area, whose size is reported (LIVE-4) so the tab takes its shape;
// the frame is drawn letterboxed inside it until the tab has that shape.

import { byId, el, show, toast } from './view.js';
import { Cards } from './cards.js';
import { Input } from './input.js';
import { authorized, sessionKnown, socket as liveSocket } from './session.js';

const STEPS_KEPT = 30;

/**
 * Puts `text` in `node`, part of a polite live region, only when it changed, so a screen
 * reader hears each change once (the tabs arrive again and again unchanged).
 */
function say(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

export class LiveView {
  /** `onQuestions(count)` hears how many questions wait in this conversation. */
  constructor(conversation, { onQuestions } = {}) {
    this.conversation = conversation;
    this.view = byId('view');
    this.canvas = byId('live-canvas');
    this.context = this.canvas.getContext('2d');
    this.cursor = byId('cursor');
    this.caption = byId('caption');
    this.driver = 'agent';
    /** The last frame, its natural size, and where it is drawn in the view (CSS px). */
    this.bitmap = null;
    this.frame = { x: 0, y: 0, w: 0, h: 0 };
    /** The size last reported to the gateway, which maps pointer input by it. */
    this.sent = { width: 0, height: 0 };
    this.decoding = false;
    this.nextBlob = null;
    this.retry = 1000;
    this.socket = null;
    this.cards = new Cards((command) => this.send(command), onQuestions);
    this.input = new Input(this);
  }

  start() {
    byId('live-heading').textContent = `Browser of ${this.conversation}`;
    show(byId('choose'), false);
    show(byId('live'), true);
    const send = (command) => () => this.send(command);
    byId('takeover').addEventListener('click', () => {
      this.send({ type: 'takeover' });
      byId('keys').focus();
    });
    byId('handback').addEventListener('click', send({ type: 'handback' }));
    byId('done').addEventListener('click', send({ type: 'handback' }));
    byId('stop').addEventListener('click', send({ type: 'stop' }));
    byId('page-dialog-ok').addEventListener('click', () => this.answerDialog(true));
    byId('page-dialog-cancel').addEventListener('click', () => this.answerDialog(false));
    this.setupOwn();
    this.setupFind();
    new ResizeObserver(() => this.layout()).observe(this.view);
    this.watchPixelRatio();
    this.connect();
  }

  connect() {
    const address = `ws://${location.host}/api/browser/live?conversation=${encodeURIComponent(this.conversation)}`;
    const socket = liveSocket(address);
    socket.binaryType = 'blob';
    this.socket = socket;
    socket.addEventListener('open', () => {
      this.retry = 1000;
      byId('connection').textContent = `Watching ${this.conversation}`;
      this.sent = { width: 0, height: 0 };
      this.layout();
    });
    socket.addEventListener('message', (message) => {
      if (typeof message.data === 'string') {
        let event;
        try {
          event = JSON.parse(message.data);
        } catch {
          return;
        }
        this.handle(event);
      } else {
        this.frameArrived(message.data);
      }
    });
    socket.addEventListener('close', async () => {
      if (this.socket !== socket) return;
      byId('connection').textContent = 'Not connected: trying again…';
      // A session the gateway no longer knows (it restarted) is not retried: the page
      // goes to the sign-in page instead (issue 28).
      const known = await sessionKnown();
      if (known === false) return;
      if (known === null) byId('connection').textContent = 'The gateway is not answering: trying again…';
      setTimeout(() => this.connect(), this.retry);
      this.retry = Math.min(this.retry * 2, 10000);
    });
  }

  /** Sends one command; false when the socket isn't open. */
  send(command) {
    if (this.socket?.readyState !== WebSocket.OPEN) {
      toast('The live view is not connected; trying again.');
      return false;
    }
    this.socket.send(JSON.stringify(command));
    return true;
  }

  /**
   * Lays out again when the device pixel ratio changes with no change of size (the window
   * moved to another screen, or the screen's scale changed), so the frames are cast for
   * the new ratio (LIVE-4).
   */
  watchPixelRatio() {
    const ratio = matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`);
    ratio.addEventListener('change', () => {
      this.layout();
      this.watchPixelRatio();
    }, { once: true });
  }

  /** Sizes the canvas to the view area, redraws, and reports a new size (LIVE-4). */
  layout() {
    const width = Math.round(this.view.clientWidth);
    const height = Math.round(this.view.clientHeight);
    if (width < 1 || height < 1) return;
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(height * dpr);
    this.draw();
    if (width === this.sent.width && height === this.sent.height && dpr === this.sent.dpr) return;
    if (this.socket?.readyState !== WebSocket.OPEN) return;
    this.sent = { width, height, dpr };
    this.socket.send(JSON.stringify({ type: 'size', width, height, dpr }));
  }

  /** A JPEG frame: decoded off the main thread; while one decodes, only the newest waits. */
  async frameArrived(blob) {
    if (this.decoding) {
      this.nextBlob = blob;
      return;
    }
    this.decoding = true;
    try {
      const bitmap = await createImageBitmap(blob);
      this.bitmap?.close();
      this.bitmap = bitmap;
      show(byId('waiting'), false);
      this.draw();
    } catch {
      // A frame that can't be decoded is skipped; the next one replaces it.
    } finally {
      this.decoding = false;
    }
    const next = this.nextBlob;
    this.nextBlob = null;
    if (next) this.frameArrived(next);
  }

  /** Draws the last frame keeping its aspect, centred in the view. */
  draw() {
    const { canvas, context, bitmap } = this;
    context.clearRect(0, 0, canvas.width, canvas.height);
    if (!bitmap) return;
    const width = this.view.clientWidth;
    const height = this.view.clientHeight;
    const scale = Math.min(width / bitmap.width, height / bitmap.height);
    const w = bitmap.width * scale;
    const h = bitmap.height * scale;
    this.frame = { x: (width - w) / 2, y: (height - h) / 2, w, h };
    const dpr = canvas.width / width;
    context.drawImage(bitmap, this.frame.x * dpr, this.frame.y * dpr, w * dpr, h * dpr);
  }

  /**
   * A pointer event's point in the reported panel size, mapped through the drawn frame
   * (the gateway maps panel to viewport by their ratio); `null` off the frame unless
   * `clamp`.
   */
  toPanel(event, clamp) {
    const { frame, sent } = this;
    if (!frame.w || !sent.width) return null;
    const box = this.canvas.getBoundingClientRect();
    let fx = (event.clientX - box.left - frame.x) / frame.w;
    let fy = (event.clientY - box.top - frame.y) / frame.h;
    const inside = fx >= 0 && fx <= 1 && fy >= 0 && fy <= 1;
    if (!inside && !clamp) return null;
    fx = Math.min(Math.max(fx, 0), 1);
    fy = Math.min(Math.max(fy, 0), 1);
    const round = (n) => Math.round(n * 100) / 100;
    return { x: round(fx * sent.width), y: round(fy * sent.height) };
  }

  /** One event from the gateway; unknown types are ignored (PROTO-8). */
  handle(event) {
    switch (event.type) {
      case 'status':
        return this.status(event);
      case 'tabs':
        this.tabs(event.tabs || []);
        this.session(event.session || null);
        return this.pageDialog(event.dialog || null);
      case 'dialog':
        return this.pageDialog(event.dialog || null);
      case 'cursor':
        return this.agentCursor(event);
      case 'step':
      case 'browser.step':
        return this.step(event);
      case 'found':
        byId('find-count').textContent = event.count ? `${event.index}/${event.count}` : 'No matches';
        return;
      case 'question':
        return this.cards.question(event);
      case 'questionClosed':
      case 'answered':
        return this.cards.remove(event.id);
      case 'error':
        if (!this.cards.error(event)) toast(event.message);
        return;
      case 'browser.status':
        return this.browserStatus(event);
      default:
    }
  }

  /**
   * The browser's state (PROTO-2). While it is not running (relaunched after a crash,
   * LAUNCH-8, or downloading, LAUNCH-4) the view drops the stale frame and says why; the
   * next frame brings the live view back.
   */
  browserStatus({ running, message }) {
    if (running) return;
    this.bitmap?.close();
    this.bitmap = null;
    this.draw();
    const waiting = byId('waiting');
    waiting.textContent = message || 'Waiting for the browser…';
    show(waiting, true);
  }

  /**
   * Who drives, the handoff waiting for the person (HAND-5), and whether the turn runs:
   * Stop shows only while an agent's call is in flight or a handoff waits (LIVE-14).
   */
  status({ driver, handoff, running }) {
    this.driver = driver === 'person' ? 'person' : 'agent';
    const person = this.driver === 'person';
    byId('driver').textContent = person ? 'You have the wheel' : 'The agent has the wheel';
    show(byId('takeover'), !person);
    show(byId('handback'), person && !handoff);
    show(byId('handoff'), Boolean(handoff));
    byId('handoff-reason').textContent = handoff || '';
    const stop = byId('stop');
    const hadFocus = document.activeElement === stop;
    show(stop, Boolean(running || handoff));
    if (hadFocus && stop.hidden) this.canvas.focus();
    if (person) show(this.cursor, false);
  }

  /** The tab strip: the person switches tabs with it (TAB-10). */
  tabs(list) {
    const strip = byId('tabs');
    strip.replaceChildren(
      ...list.map((tab) =>
        el(
          'button',
          {
            type: 'button',
            'aria-pressed': tab.active ? 'true' : 'false',
            title: tab.url,
            onclick: () => this.send({ type: 'tab', tab: tab.id }),
          },
          tab.title || tab.url || tab.id,
        ),
      ),
    );
    const active = list.find((tab) => tab.active);
    document.title = active?.title ? `${active.title} · Conch` : 'Conch';
    let page = 'No page is open.';
    if (active?.url) page = active.title ? `The page “${active.title}”, at ${active.url}.` : `The page at ${active.url}.`;
    say(byId('live-page'), page);
  }

  /**
   * The agent's last caption: shown under the view, and said in the live view's text
   * alternative (issue 28).
   */
  captioned(caption) {
    this.caption.textContent = caption;
    say(byId('live-doing'), `The agent: ${caption}`);
  }

  /**
   * A browser of its own (LIVE-16): the toggle asks the gateway to give this chat one, or
   * to take it back; the answer is the chat's tabs with its session, drawn by `session`.
   * The tooltip of the badge shows on hover and on focus, and Escape hides it.
   */
  setupOwn() {
    const box = byId('own');
    const toggle = byId('own-toggle');
    toggle.addEventListener('click', () => {
      this.send({ type: 'session', own: toggle.getAttribute('aria-pressed') !== 'true' });
    });
    box.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') box.classList.add('tooltip-off');
    });
    box.addEventListener('focusout', () => box.classList.remove('tooltip-off'));
    box.addEventListener('mouseleave', () => box.classList.remove('tooltip-off'));
  }

  /**
   * Why the conversation browses apart, and the sites lent to it (ERR-23): "Its own
   * browser" with the sites in its tooltip, and the toggle pressed. A task always browses
   * in its own, so it has no toggle.
   */
  session(session) {
    const own = Boolean(session);
    // Beside your own Chrome a task browses in Conch's own browser on this computer,
    // signed in nowhere (ERR-6).
    const beside = session?.reason === 'ownChrome';
    const task = session?.reason === 'task' || beside;
    byId('own').classList.toggle('is-own', own);
    show(byId('own-badge'), own);
    const toggle = byId('own-toggle');
    toggle.setAttribute('aria-pressed', own ? 'true' : 'false');
    show(toggle, !task);
    const sites = (session?.sites || []).join(', ');
    const lent = sites ? `Sign-ins lent to it: ${sites}.` : 'Signed in nowhere: no sign-in is lent to it yet.';
    const whose = beside
      ? "A task's own browser on this computer, beside your own Chrome: signed in nowhere, and nothing is copied out of your Chrome."
      : `${task ? "A task's own browser. " : ''}${lent}`;
    byId('own-sites').textContent = own
      ? whose
      : "It would start signed in only on the sites you always allow, and this chat's tabs here would close.";
  }

  /** The page's dialog, drawn over the page under its site's name (DLG-9, DLG-15). */
  pageDialog(dialog) {
    const box = byId('page-dialog');
    const wasOpen = !box.hidden;
    if (!dialog) {
      const hadFocus = box.contains(document.activeElement);
      show(box, false);
      if (wasOpen && hadFocus) this.canvas.focus();
      return;
    }
    byId('page-dialog-heading').textContent = `${dialog.site || 'This page'} says`;
    byId('page-dialog-message').textContent = dialog.message || '';
    const prompt = dialog.kind === 'prompt';
    show(byId('page-dialog-prompt'), prompt);
    show(byId('page-dialog-cancel'), dialog.kind !== 'alert');
    const text = byId('page-dialog-text');
    if (!wasOpen) text.value = dialog.defaultText || '';
    this.dialogKind = dialog.kind;
    show(box, true);
    if (!wasOpen && this.view.contains(document.activeElement)) {
      (prompt ? text : byId('page-dialog-ok')).focus();
    }
  }

  answerDialog(accept) {
    const command = { type: 'dialog', accept };
    if (this.dialogKind === 'prompt' && accept) command.text = byId('page-dialog-text').value;
    this.send(command);
  }

  /** The agent's pointer (LIVE-5): drawn at its viewport point, with its caption. */
  agentCursor({ x, y, kind, caption }) {
    if (caption) this.captioned(caption);
    const { bitmap, frame } = this;
    if (!bitmap || !frame.w || this.driver === 'person') return;
    this.cursor.style.left = `${frame.x + (x / bitmap.width) * frame.w}px`;
    this.cursor.style.top = `${frame.y + (y / bitmap.height) * frame.h}px`;
    this.cursor.dataset.kind = kind || 'click';
    show(this.cursor, true);
    this.cursor.classList.remove('pulse');
    void this.cursor.offsetWidth; // restart the animation
    this.cursor.classList.add('pulse');
  }

  /**
   * An agent's step, newest first, with its thumbnail (LIVE-6) when the step has one:
   * `browser/shots/NAME.jpg` under the gateway's home, served at /api/browser/shots/NAME.
   */
  step(step) {
    if (!step.caption) return;
    const list = byId('steps');
    const shot = typeof step.thumbnail === 'string' ? step.thumbnail.split('/').pop() : '';
    list.prepend(
      el(
        'li',
        { class: 'step' },
        shot
          ? this.thumbnail(shot, el('img', {
              class: 'step-shot',
              alt: 'The page after: ' + step.caption,
              width: 160,
              height: 100,
            }))
          : null,
        el('span', { class: 'step-caption' }, step.caption),
        step.changeSummary ? el('span', { class: 'muted' }, step.changeSummary) : null,
      ),
    );
    while (list.childElementCount > STEPS_KEPT) list.lastElementChild.remove();
    this.captioned(step.caption);
  }

  /**
   * `img` showing the thumbnail `shot`, fetched with the session's token (an image's own
   * request could carry only the cookie, which is not enough).
   */
  thumbnail(shot, img) {
    authorized('/api/browser/shots/' + encodeURIComponent(shot))
      .then((answer) => (answer.ok ? answer.blob() : null))
      .then((blob) => {
        if (!blob) return;
        const url = URL.createObjectURL(blob);
        img.addEventListener('load', () => URL.revokeObjectURL(url), { once: true });
        img.src = url;
      })
      .catch(() => {});
    return img;
  }

  /** The find bar (LIVE-11): Ctrl+F or ⌘F anywhere in the panel. */
  setupFind() {
    const bar = byId('find');
    const input = byId('find-input');
    let typing = 0;
    const find = (direction) => {
      clearTimeout(typing);
      this.send({ type: 'find', text: input.value, direction });
      if (!input.value) byId('find-count').textContent = '';
    };
    const open = () => {
      show(bar, true);
      input.focus();
      input.select();
    };
    const close = () => {
      clearTimeout(typing);
      show(bar, false);
      input.value = '';
      byId('find-count').textContent = '';
      this.send({ type: 'find', text: '', direction: 'next' });
      this.canvas.focus();
    };
    document.addEventListener('keydown', (event) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === 'f') {
        event.preventDefault();
        event.stopPropagation();
        open();
      }
    }, true);
    byId('find-open').addEventListener('click', open);
    byId('find-close').addEventListener('click', close);
    byId('find-previous').addEventListener('click', () => find('previous'));
    bar.addEventListener('submit', (event) => {
      event.preventDefault();
      find('next');
    });
    input.addEventListener('input', () => {
      clearTimeout(typing);
      typing = setTimeout(() => find('next'), 250);
    });
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        close();
      } else if (event.key === 'Enter') {
        event.preventDefault();
        find(event.shiftKey ? 'previous' : 'next');
      }
    });
  }
}
