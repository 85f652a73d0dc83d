// The person's input to the page (LIVE-9, LIVE-10): the canvas takes the pointer, and a
// hidden text field takes the keys, so input methods and phone keyboards work. Composed
// text goes whole as {type:'text'}; keys that type nothing go as {type:'key'}. The
// gateway takes over at the person's first input. What the person types is never kept.

import { byId } from './view.js';

/** Keys that type nothing: sent as key presses, never as text. */
const NAMED_KEYS = new Set([
  'Enter', 'Backspace', 'Tab', 'Escape', 'Delete', 'Home', 'End', 'PageUp', 'PageDown',
  'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight',
]);

const BUTTONS = ['left', 'middle', 'right'];

/** The modifier bits the gateway reads: Alt 1, Ctrl 2, Meta 4, Shift 8. */
function modifiers(event) {
  return (event.altKey ? 1 : 0) | (event.ctrlKey ? 2 : 0) | (event.metaKey ? 4 : 0) | (event.shiftKey ? 8 : 0);
}

/** Whether a key press is for the page as a key (not as text, not for the panel). */
function isPageKey(event) {
  if (NAMED_KEYS.has(event.key)) return true;
  // Shortcuts such as Ctrl+A; AltGr (Ctrl+Alt) types text, and paste stays the panel's
  // so the person's clipboard arrives as text.
  const shortcut = (event.ctrlKey || event.metaKey) && !(event.ctrlKey && event.altKey);
  return shortcut && event.key.length === 1 && !'vVfF'.includes(event.key);
}

export class Input {
  constructor(live) {
    this.live = live;
    this.canvas = byId('live-canvas');
    this.keys = byId('keys');
    this.pressed = false;
    this.moveAt = null;
    this.composing = false;
    this.keysDown = new Set();
    this.pointer();
    this.keyboard();
  }

  send(command) {
    this.live.send(command);
  }

  pointer() {
    const { canvas, live } = this;
    canvas.addEventListener('pointerdown', (event) => {
      const at = live.toPanel(event, false);
      if (!at) return;
      event.preventDefault();
      canvas.setPointerCapture(event.pointerId);
      this.pressed = true;
      this.keys.focus({ preventScroll: true });
      this.send({ type: 'pointer', action: 'down', ...at, button: BUTTONS[event.button] || 'left' });
    });
    const release = (event) => {
      if (!this.pressed) return;
      this.pressed = false;
      const at = live.toPanel(event, true);
      if (at) this.send({ type: 'pointer', action: 'up', ...at, button: BUTTONS[event.button] || 'left' });
    };
    canvas.addEventListener('pointerup', release);
    canvas.addEventListener('pointercancel', release);
    // Moves only while the person drives or drags: hovering while watching is no input,
    // and any input takes over. One move per animation frame.
    canvas.addEventListener('pointermove', (event) => {
      if (!this.pressed && live.driver !== 'person') return;
      const at = live.toPanel(event, this.pressed);
      if (!at) return;
      const waiting = this.moveAt !== null;
      this.moveAt = at;
      if (waiting) return;
      requestAnimationFrame(() => {
        const last = this.moveAt;
        this.moveAt = null;
        if (last) this.send({ type: 'pointer', action: 'move', ...last });
      });
    });
    canvas.addEventListener('wheel', (event) => {
      const at = live.toPanel(event, false);
      if (!at) return;
      event.preventDefault();
      const unit = event.deltaMode === 1 ? 40 : event.deltaMode === 2 ? canvas.clientHeight : 1;
      this.send({ type: 'pointer', action: 'wheel', ...at, deltaX: event.deltaX * unit, deltaY: event.deltaY * unit });
    }, { passive: false });
    canvas.addEventListener('contextmenu', (event) => event.preventDefault());
    // From the keyboard, the canvas hands its keys to the text field.
    canvas.addEventListener('keydown', (event) => {
      if (event.key === 'Tab' || event.altKey) return;
      if (event.key.length === 1 && !event.ctrlKey && !event.metaKey) {
        event.preventDefault();
        this.send({ type: 'text', text: event.key });
      } else {
        this.keyDown(event);
      }
      this.keys.focus({ preventScroll: true });
    });
  }

  keyboard() {
    const { keys } = this;
    keys.addEventListener('keydown', (event) => this.keyDown(event));
    keys.addEventListener('keyup', (event) => {
      if (!this.keysDown.delete(event.key)) return;
      event.preventDefault();
      this.send({ type: 'key', action: 'up', key: event.key, modifiers: modifiers(event) });
    });
    keys.addEventListener('compositionstart', () => {
      this.composing = true;
    });
    keys.addEventListener('compositionend', () => {
      this.composing = false;
      this.flush();
    });
    keys.addEventListener('input', (event) => {
      if (!event.isComposing && !this.composing) this.flush();
    });
    // Phone keyboards report deletions and line breaks as edits, not as keys.
    keys.addEventListener('beforeinput', (event) => {
      const key = { deleteContentBackward: 'Backspace', deleteContentForward: 'Delete', insertLineBreak: 'Enter' }[event.inputType];
      if (!key || this.composing || keys.value) return;
      event.preventDefault();
      this.send({ type: 'key', action: 'down', key, modifiers: 0 });
      this.send({ type: 'key', action: 'up', key, modifiers: 0 });
    });
    keys.addEventListener('blur', () => this.releaseKeys());
  }

  keyDown(event) {
    if (event.isComposing || event.keyCode === 229) return;
    if (event.key === 'Escape' && event.shiftKey) {
      // The way out of the page for keyboard users: Tab and Escape belong to the page.
      event.preventDefault();
      const way = ['handback', 'done', 'takeover'].map(byId).find((b) => b.offsetParent !== null);
      (way || byId('stop')).focus();
      return;
    }
    if (!isPageKey(event)) return;
    event.preventDefault();
    this.keysDown.add(event.key);
    this.send({ type: 'key', action: 'down', key: event.key, modifiers: modifiers(event) });
  }

  /** Keys still down when focus leaves go up, so the page never sees a stuck key. */
  releaseKeys() {
    for (const key of this.keysDown) this.send({ type: 'key', action: 'up', key, modifiers: 0 });
    this.keysDown.clear();
  }

  /** Sends what the text field holds as one piece of text, and empties it. */
  flush() {
    const text = this.keys.value;
    this.keys.value = '';
    if (text) this.send({ type: 'text', text });
  }
}
