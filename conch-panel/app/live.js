// The inline live view's script (issue 31): an MCP App view (SEP-1865, protocol
// 2026-01-26) that speaks JSON-RPC with its host over postMessage and reaches the gateway
// only through the host's `tools/call` of Conch's app-only tools (live_*). It signs the
// person in with the panel's one-time code, then shows the conversation's frames, the
// agent's cursor and caption, Take over and I'm done, and the question cards, with the
// panel's wording. What the person types goes to the page and is never kept here.
// Over new-era HTTP a conversation is a handle: the view learns it from the result that
// opened it (its `_meta`, or the arguments the agent passed) and passes it with every
// call. A sign-in ends with the panel's sign-out or idle time: the view asks again.
(() => {
  'use strict';
  const PANEL = '{{PANEL}}';
  const byId = (id) => document.getElementById(id);
  const show = (node, on) => { node.hidden = !on; };

  // The view side of the bridge: requests with ids, answers matched by id.
  let nextId = 1;
  const waiting = new Map();
  const post = (message) => window.parent.postMessage(message, '*');
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = nextId++;
    waiting.set(id, { resolve, reject });
    post({ jsonrpc: '2.0', id, method, params });
  });
  const notify = (method, params) => post({ jsonrpc: '2.0', method, params });
  let stopped = false;
  window.addEventListener('message', (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== '2.0') return;
    if (message.method === undefined && waiting.has(message.id)) {
      const { resolve, reject } = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error) reject(new Error(message.error.message || 'The host refused.'));
      else resolve(message.result);
      return;
    }
    if (message.method && message.id !== undefined) {
      // The host's requests: teardown ends the view; ping is answered; nothing else.
      if (message.method === 'ui/resource-teardown') {
        stopped = true;
        post({ jsonrpc: '2.0', id: message.id, result: {} });
      } else if (message.method === 'ping') {
        post({ jsonrpc: '2.0', id: message.id, result: {} });
      } else {
        post({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
      }
    }
    // The result (or the call) that opened the view names its conversation's handle
    // when the connection has no session of its own (new-era HTTP); else the view
    // follows the session that opened it. Other notifications need nothing here.
    if (message.method && message.id === undefined && !handle) {
      const params = message.params || {};
      const named = message.method === 'ui/notifications/tool-result'
        ? params._meta && params._meta['dev.conch/conversation']
        : message.method === 'ui/notifications/tool-input'
          ? params.arguments && params.arguments.conversation
          : null;
      if (typeof named === 'string' && named) handle = named;
    }
  });

  // Conch's app-only tools, through the host, in the conversation of `handle` when
  // there is one.
  let grant = null;
  let handle = null;
  const call = async (name, args) => {
    const result = await request('tools/call', {
      name,
      arguments: handle ? { ...args, conversation: handle } : args,
    });
    if (result && result.isError) {
      const text = (result.content || []).map((c) => c.text || '').join(' ');
      const error = new Error(text || 'Conch refused.');
      error.signedOut = !!(result.structuredContent && result.structuredContent.signedOut);
      throw error;
    }
    return (result && result.structuredContent) || {};
  };
  const say = (text) => { byId('status').textContent = text; };
  // A refusal: said; a sign-in that ended (the panel's sign-out or idle time) goes back
  // to the sign-in, and nothing more is sent.
  const refused = (e) => {
    if (!e.signedOut) {
      say(e.message);
      return;
    }
    grant = null;
    show(byId('live'), false);
    show(byId('signin'), true);
    const error = byId('signin-error');
    error.textContent = e.message;
    error.setAttribute('role', 'alert');
    show(error, true);
    byId('code').focus();
  };
  // The person's input goes in order, one call after another.
  let queue = Promise.resolve();
  const send = (input) => {
    queue = queue.then(() => (grant ? call('live_input', { grant, input }) : null)).catch(refused);
    return queue;
  };

  // Sign-in.
  byId('signin-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const field = byId('code');
    const error = byId('signin-error');
    try {
      const signed = await call('live_sign_in', { code: field.value });
      field.value = '';
      grant = signed.grant;
      show(error, false);
      show(byId('signin'), false);
      show(byId('live'), true);
      sizeChanged();
      byId('takeover').focus();
      watch();
    } catch (e) {
      field.value = '';
      error.textContent = e.message;
      error.setAttribute('role', 'alert');
      show(error, true);
      field.focus();
    }
  });

  // What the view shows.
  let driver = 'agent';
  let handoff = null;
  let frameSize = null;
  const status = (s) => {
    if (!s) return;
    driver = s.driver;
    handoff = s.handoff || null;
    const person = driver === 'person';
    show(byId('takeover'), !person);
    show(byId('done'), person || !!handoff);
    if (handoff) say(`The agent asks you to take over: ${handoff} Press I'm done when you are.`);
    else if (person) say('You have the wheel: the agent waits until you press I\'m done.');
    else say(s.running ? 'The agent is browsing.' : 'The agent is not browsing now.');
    if (person) show(byId('cursor'), false);
  };
  const cursor = (c) => {
    const img = byId('frame');
    if (!c || driver === 'person' || !img.naturalWidth) return;
    const box = img.getBoundingClientRect();
    const scale = Math.min(box.width / img.naturalWidth, box.height / img.naturalHeight);
    const left = (box.width - img.naturalWidth * scale) / 2 + c.x * scale;
    const top = (box.height - img.naturalHeight * scale) / 2 + c.y * scale;
    const mark = byId('cursor');
    mark.style.left = `${left}px`;
    mark.style.top = `${top}px`;
    show(mark, true);
  };

  const KIND_NAMES = {
    site: 'Using a site',
    ownChrome: 'Your own Chrome',
    highStakes: 'A significant step',
    upload: 'Uploading files',
    download: 'Downloading a file',
    browserDownload: 'The browser could not be downloaded',
  };
  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else if (value !== false && value !== null && value !== undefined) node.setAttribute(key, value);
    }
    for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
    return node;
  };
  const cards = (list) => {
    const box = byId('cards');
    const open = new Set((list || []).map((q) => q.id));
    for (const card of [...box.children]) if (!open.has(card.dataset.question)) card.remove();
    for (const q of list || []) {
      if (typeof q.id !== 'string' || typeof q.text !== 'string') continue;
      if ([...box.children].some((c) => c.dataset.question === q.id)) continue;
      const domId = `question-${q.id.replace(/[^\w-]/g, '_')}`;
      const error = el('p', { class: 'card-error error', hidden: true });
      const card = el('section', { class: 'card', 'aria-labelledby': `${domId}-title`, 'data-question': q.id },
        el('p', { class: 'card-kind' }, KIND_NAMES[q.kind] || 'A question'),
        el('h3', { id: `${domId}-title` }, q.text),
        q.site ? el('p', {}, `Site: ${q.site}`) : null,
        q.words ? el('blockquote', {}, Array.isArray(q.words) ? q.words.join(', ') : String(q.words)) : null,
        el('div', { class: 'choices' }, (Array.isArray(q.choices) ? q.choices : []).map((choice) =>
          el('button', {
            type: 'button',
            class: choice.id === 'no' ? 'secondary' : null,
            onclick: async () => {
              for (const b of card.querySelectorAll('button')) b.disabled = true;
              try {
                await call('live_answer', { grant, id: q.id, choice: choice.id });
                card.remove();
                byId('cards-announce').textContent = 'Answered.';
                showNoCards();
              } catch (e) {
                for (const b of card.querySelectorAll('button')) b.disabled = false;
                error.textContent = e.message;
                error.setAttribute('role', 'alert');
                show(error, true);
              }
            },
          }, choice.label || choice.id))),
        error);
      box.append(card);
      byId('cards-announce').textContent = `Conch asks: ${q.text}`;
    }
    showNoCards();
  };
  const showNoCards = () => show(byId('no-cards'), byId('cards').childElementCount === 0);

  // The browser away (an address of the pool died and the tabs reopen elsewhere, or it
  // is started again), as the panel says it: each sentence is said once, in a status
  // region, and stays while the frame is the stale one from before it, and a while after
  // (the tabs may be back in a moment); the stale frame is not shown.
  let told = 0;
  let toldAt = 0;
  const away = (browser) => {
    const waiting = byId('waiting');
    if (browser && browser.told !== told) {
      told = browser.told;
      toldAt = Date.now();
      waiting.textContent = browser.message || 'Waiting for the browser…';
    }
    const gone = !!browser && browser.away;
    show(waiting, gone || (!!browser && Date.now() - toldAt < 10000));
    byId('frame').hidden = gone;
  };

  // Looks at the view until the host tears it down: each look waits for a newer frame.
  let seq = 0;
  const watch = async () => {
    while (!stopped && grant) {
      try {
        const look = await call('live_look', { grant, after: seq });
        if (look.frame && look.seq !== seq) {
          byId('frame').src = `data:image/jpeg;base64,${look.frame}`;
          byId('frame').alt = '';
          show(byId('no-frame'), false);
        }
        seq = look.seq || seq;
        away(look.browser);
        status(look.status);
        if (look.caption) byId('caption').textContent = `The agent: ${look.caption}`;
        cursor(look.cursor);
        cards(look.cards);
      } catch (e) {
        refused(e);
        if (grant) await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  };

  // Take over and I'm done.
  const takeOver = async () => {
    await call('live_take_over', { grant }).catch(refused);
    if (!grant) return;
    status({ driver: 'person', handoff, running: true });
    byId('keys').focus({ preventScroll: true });
  };
  byId('takeover').addEventListener('click', takeOver);
  byId('done').addEventListener('click', async () => {
    await call('live_hand_back', { grant }).catch(refused);
    if (!grant) return;
    status({ driver: 'agent', handoff: null, running: true });
    byId('takeover').focus();
  });
  byId('open-panel').addEventListener('click', () => {
    request('ui/open-link', { url: PANEL }).catch(() => say(`Open ${PANEL} in your browser.`));
  });

  // The screen: its size sets the tab's shape (LIVE-4); a press takes over and clicks.
  const screen = byId('screen');
  // The screen's inside (its border left out) is the size the page is shaped to; with
  // the device pixel ratio, it is how big the frames are cast (issue 30).
  const sizeChanged = () => {
    const box = { width: screen.clientWidth, height: screen.clientHeight };
    const dpr = window.devicePixelRatio || 1;
    if (grant && box.width > 0
      && (!frameSize || frameSize.w !== Math.round(box.width) || frameSize.dpr !== dpr)) {
      frameSize = { w: Math.round(box.width), h: Math.round(box.height), dpr };
      send({ type: 'size', width: frameSize.w, height: frameSize.h, dpr });
    }
    notify('ui/notifications/size-changed', { height: document.documentElement.scrollHeight });
  };
  new ResizeObserver(sizeChanged).observe(document.body);
  // A new device pixel ratio with no new size (the window moved to another screen).
  const watchPixelRatio = () => {
    const ratio = matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`);
    ratio.addEventListener('change', () => {
      sizeChanged();
      watchPixelRatio();
    }, { once: true });
  };
  watchPixelRatio();
  // A point of the screen in the size sent: through the frame's own picture, drawn
  // whole and centred, so a press lands where it shows even before the page's shape
  // follows the screen's.
  const at = (event) => {
    const box = screen.getBoundingClientRect();
    const w = screen.clientWidth;
    const h = screen.clientHeight;
    let x = event.clientX - box.left - screen.clientLeft;
    let y = event.clientY - box.top - screen.clientTop;
    const img = byId('frame');
    if (img.naturalWidth > 0 && img.naturalHeight > 0 && w > 0 && h > 0) {
      const scale = Math.min(w / img.naturalWidth, h / img.naturalHeight);
      const pw = img.naturalWidth * scale;
      const ph = img.naturalHeight * scale;
      x = ((x - (w - pw) / 2) * w) / pw;
      y = ((y - (h - ph) / 2) * h) / ph;
    }
    return { x: Math.round(x), y: Math.round(y) };
  };
  screen.addEventListener('pointerdown', (event) => {
    if (!grant) return;
    event.preventDefault();
    // Taking over goes in the input's queue, so the press and its release keep their
    // order behind it.
    if (driver !== 'person') queue = queue.then(takeOver);
    send({ type: 'pointer', action: 'down', ...at(event), button: 'left' });
  });
  screen.addEventListener('pointerup', (event) => {
    if (!grant) return;
    send({ type: 'pointer', action: 'up', ...at(event), button: 'left' });
    byId('keys').focus({ preventScroll: true });
  });
  screen.addEventListener('click', (event) => {
    // From the keyboard (Enter or Space on the screen): take over and type there.
    if (event.detail === 0 && grant) takeOver();
  });

  // Keys: named keys go as keys, everything else as text.
  const NAMED_KEYS = new Set(['Enter', 'Backspace', 'Tab', 'Escape', 'Delete', 'Home', 'End',
    'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight']);
  const keys = byId('keys');
  keys.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && event.shiftKey) {
      event.preventDefault();
      byId('done').focus();
      return;
    }
    if (!NAMED_KEYS.has(event.key) || event.isComposing) return;
    event.preventDefault();
    send({ type: 'key', action: 'down', key: event.key, modifiers: 0 });
    send({ type: 'key', action: 'up', key: event.key, modifiers: 0 });
  });
  let composing = false;
  keys.addEventListener('compositionstart', () => { composing = true; });
  const flush = () => {
    const text = keys.value;
    keys.value = '';
    if (text) send({ type: 'text', text });
  };
  keys.addEventListener('compositionend', () => { composing = false; flush(); });
  keys.addEventListener('input', (event) => { if (!event.isComposing && !composing) flush(); });

  // The handshake.
  request('ui/initialize', {
    protocolVersion: '2026-01-26',
    appCapabilities: { availableDisplayModes: ['inline'] },
    appInfo: { name: 'Conch live view', version: '1' },
  }).then(() => {
    notify('ui/notifications/initialized', {});
    sizeChanged();
  }).catch(() => say('The host did not answer.'));
})();
