// The WebSocket guard for browsers with no proxy in front (AMB-1, NET-3, NET-5): `Fetch`
// cannot pause a WebSocket handshake, so before a page's or worker's own script runs,
// `WebSocket` is replaced by one that first asks Conch. The question is a synchronous
// request (to PATH on the page's origin) that the CDP rules answer themselves (it never leaves the browser), with
// the very verdict a request to that address would get; only an allowed address is passed
// to the browser's own constructor, as the absolute address judged. Everything it uses is
// taken before the page runs, so a page that changes prototypes later cannot answer for it.
// A refusal, or a question that could not be asked (say a page whose policy forbids it),
// throws a SecurityError. WebSocketStream and WebTransport (where the browser has them) are
// asked about the same way. Returns nothing.
(() => {
  try {
    const g = globalThis;
    const XHR = g.XMLHttpRequest;
    if (typeof XHR !== 'function' || g.__conchSockets) return;
    Object.defineProperty(g, '__conchSockets', { value: true });
    const apply = Reflect.apply;
    const construct = Reflect.construct;
    const define = Object.defineProperty;
    const toText = String;
    const encode = encodeURIComponent;
    const Url = URL;
    const Err = g.DOMException;
    const open = XHR.prototype.open;
    const send = XHR.prototype.send;
    const status = Object.getOwnPropertyDescriptor(XHR.prototype, 'status').get;
    const href = Object.getOwnPropertyDescriptor(Url.prototype, 'href').get;
    const protocolOf = Object.getOwnPropertyDescriptor(Url.prototype, 'protocol');
    const doc = g.document;
    const baseOf = doc ? Object.getOwnPropertyDescriptor(g.Node.prototype, 'baseURI').get : null;
    // A held worker's location is read only once it runs (reading it before crashes it).
    const where = doc ? null : Object.getOwnPropertyDescriptor(g.WorkerGlobalScope.prototype, 'location').get;
    const whereHref = doc ? null : Object.getOwnPropertyDescriptor(g.WorkerLocation.prototype, 'href').get;
    const base = () => (doc ? apply(baseOf, doc, []) : apply(whereHref, apply(where, g, []), []));
    const originOf = Object.getOwnPropertyDescriptor(Url.prototype, 'origin').get;
    const PATH = '/.conch-guard/websocket?to=';
    // Asked on the page's own origin where it has one (a policy that allows the page to
    // reach itself allows the question), else on a name of Conch's own.
    const judge = () => {
      let origin = 'null';
      try { origin = apply(originOf, new Url(base()), []); } catch (_) {}
      return (origin.startsWith('http') ? origin : 'https://conch-guard.invalid') + PATH;
    };
    const refuse = () => new Err('Blocked by Conch: this page may not reach that address.', 'SecurityError');
    const allowed = (address) => {
      try {
        const x = new XHR();
        apply(open, x, ['GET', judge() + encode(address), false]);
        apply(send, x, []);
        return apply(status, x, []) === 204;
      } catch (_) {
        return false;
      }
    };
    // `name`'s constructor, asking first; `web` turns http(s) into ws(s) as WebSocket does.
    const guard = (name, web) => {
      const Native = g[name];
      if (typeof Native !== 'function') return;
      const Guarded = function (url, options) {
        if (!new.target) throw new TypeError(`Failed to construct '${name}': Please use the 'new' operator.`);
        let address;
        try {
          const parsed = new Url(toText(url), base());
          const scheme = apply(protocolOf.get, parsed, []);
          if (web && scheme === 'http:') apply(protocolOf.set, parsed, ['ws:']);
          if (web && scheme === 'https:') apply(protocolOf.set, parsed, ['wss:']);
          address = apply(href, parsed, []);
        } catch (_) {
          address = toText(url);
        }
        if (!allowed(address)) throw refuse();
        const args = options === undefined ? [address] : [address, options];
        return construct(Native, args, new.target === Guarded ? Native : new.target);
      };
      define(Guarded, 'name', { value: name });
      for (const key of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) {
        if (key in Native) define(Guarded, key, { value: Native[key] });
      }
      define(Guarded, 'prototype', { value: Native.prototype });
      define(Native.prototype, 'constructor', { value: Guarded, writable: false, configurable: false });
      define(g, name, { value: Guarded, writable: false, configurable: false });
    };
    guard('WebSocket', true);
    guard('WebSocketStream', true);
    guard('WebTransport', false);
  } catch (_) {}
})();
