// Run on every new document before any of the page's own script. Returns nothing: makes
// service worker registration fail with a SecurityError.
(() => {
  try {
    const container = globalThis.navigator && navigator.serviceWorker;
    if (!container) return;
    const proto = Object.getPrototypeOf(container);
    const refuse = function register() {
      return Promise.reject(new DOMException('Service workers are blocked on pages Conch opens.', 'SecurityError'));
    };
    Object.defineProperty(proto, 'register', { value: refuse, writable: false, configurable: false });
  } catch (_) {}
})();
