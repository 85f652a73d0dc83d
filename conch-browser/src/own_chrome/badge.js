// Run on every new document of the top frame, in an isolated world of its own. Returns
// nothing: puts the badge (a host element whose closed shadow root holds the words) on
// the page once it has a body.
(() => {
  if (window !== window.top) return;
  const add = () => {
    const host = document.createElement('conch-badge');
    host.setAttribute('aria-hidden', 'true');
    host.style.cssText = 'all:initial;position:fixed;top:8px;right:8px;z-index:2147483647;pointer-events:none;';
    const root = host.attachShadow({ mode: 'closed' });
    const label = document.createElement('div');
    label.textContent = 'Conch is using this tab';
    label.style.cssText = 'font:600 13px/1.2 system-ui,sans-serif;color:#fff;background:rgb(109,40,217);padding:6px 10px;border-radius:6px;';
    root.appendChild(label);
    (document.body || document.documentElement).appendChild(host);
  };
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', add, { once: true });
  } else {
    add();
  }
})()
