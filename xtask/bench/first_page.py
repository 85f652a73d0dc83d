"""The first page after a launch, below Conch: Chromium over its DevTools pipe with
Conch's launch flags (a copy of conch-browser/src/launch.rs's, kept by hand), timed from
its first answer to the load of fixtures/pages/basic.html (issue 31).

    python3 xtask/bench/first_page.py [N] MODE ...

Modes, alternated N rounds: L, the page the browser opened at launch alone; W, a window
made for the page (the launch page left alone); LW, both, the first ruled taking the
page (Conch's first tab before issue 31's change); LT, the launch page with a background
tab made in its window beside it. Each page gets Conch's setup sent at once (rules,
viewport, focus, Page and Network), is resumed if held, then navigated. Prints each
launch (which page won) and the medians; `load-ver` is the browser's first answer to the
load event. On 2026-12-05 at load 4-5: L 116-132 ms, LW 183-200 ms (8-12 rounds each; the
launch page won LW 7 of 8): a window made while the first page loads costs it about
60 ms. Quiet (load under 1), 8 rounds: L 123, LW 187, LT 167 ms: even a background tab
costs it about 44. `--no-sandbox` is always passed (Conch passes it only as root, as
here).
"""

import http.server, json, os, queue, shutil, socketserver, statistics, subprocess, sys, tempfile
import threading, time

FLAGS = ["--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--disable-breakpad",
         "--disable-domain-reliability", "--disable-client-side-phishing-detection",
         "--metrics-recording-only", "--password-store=basic", "--use-mock-keychain",
         "--mute-audio", "--disable-field-trial-config",
         "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
         "--disable-backgrounding-occluded-windows", "--window-size=1280,800", "--no-sandbox"]
FEATURES = "WebUIOmniboxPopup,WebUIOmniboxAimPopup,AimEnabled,OmniboxAimPopupWebUIContent"


class Cdp:
    def __init__(self, extra, url="about:blank"):
        self.home = tempfile.mkdtemp(prefix="s9c-")
        r1, w1 = os.pipe()  # we write -> chrome fd3
        r2, w2 = os.pipe()  # chrome fd4 -> we read
        args = [os.environ.get("CONCH_BROWSER", "/usr/bin/chromium"), *FLAGS, f"--user-data-dir={self.home}/profile",
                f"--disable-features={FEATURES}", *extra, "--remote-debugging-pipe"]
        if url:
            args.append(url)
        self.t0 = time.perf_counter()

        hr, hw = os.dup(r1) + 0, os.dup(w2)
        hr2, hw2 = os.dup2(hr, 100), os.dup2(hw, 101)
        os.close(hr); os.close(hw)

        def pre():
            os.dup2(100, 3)
            os.dup2(101, 4)
        self.proc = subprocess.Popen(args, preexec_fn=pre, pass_fds=(3, 4) if False else (),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     close_fds=False)
        os.close(r1); os.close(w2); os.close(100); os.close(101)
        self.w = os.fdopen(w1, "wb", buffering=0)
        self.r = os.fdopen(r2, "rb", buffering=0)
        self.id = 0
        self.waiters = {}
        self.events = queue.Queue()
        self.log = []
        self.lock = threading.Lock()
        threading.Thread(target=self.reader, daemon=True).start()

    def ms(self):
        return round((time.perf_counter() - self.t0) * 1000, 1)

    def reader(self):
        buf = b""
        while True:
            chunk = self.r.read(65536)
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                msg, buf = buf.split(b"\0", 1)
                m = json.loads(msg)
                if "id" in m:
                    q = self.waiters.pop(m["id"], None)
                    self.log.append((self.ms(), "reply", m["id"]))
                    if q:
                        q.put(m)
                else:
                    self.log.append((self.ms(), m["method"], m.get("sessionId", "")[:6]))
                    self.events.put(m)

    def send(self, method, params=None, session=None):
        with self.lock:
            self.id += 1
            i = self.id
            q = queue.Queue()
            self.waiters[i] = q
            msg = {"id": i, "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = session
            self.log.append((self.ms(), "send " + method, i))
            self.w.write(json.dumps(msg).encode() + b"\0")
        return q

    def call(self, method, params=None, session=None):
        m = self.send(method, params, session).get(timeout=30)
        if "error" in m:
            raise RuntimeError(f"{method}: {m['error']}")
        return m["result"]

    def wait_event(self, method, pred=lambda m: True, timeout=30):
        end = time.time() + timeout
        while True:
            m = self.events.get(timeout=max(0.01, end - time.time()))
            if m["method"] == method and pred(m):
                return m

    def close(self):
        try:
            self.send("Browser.close")
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()
        shutil.rmtree(self.home, ignore_errors=True)


def serve():
    pages = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures", "pages")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=pages, **k)

        def log_message(self, *a):
            pass
    s = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    return s.server_address[1]


port = serve()
URL = f"http://127.0.0.1:{port}/basic.html"
SCRIPT = "(() => { window.__g = 1; })()"
AA = {"autoAttach": True, "flatten": True, "waitForDebuggerOnStart": True}

def rule(c, s, held):
    qs = [c.send("Page.addScriptToEvaluateOnNewDocument", {"source": SCRIPT, "runImmediately": True}, s)]
    qs += [c.send(m, p, s) for m, p in [("Fetch.enable", {"patterns": [{"resourceType": "Document", "urlPattern": "*"}]}),
        ("Target.setAutoAttach", AA),
        ("Emulation.setDeviceMetricsOverride", {"width":1280,"height":800,"deviceScaleFactor":1,"mobile":False}),
        ("Emulation.setFocusEmulationEnabled", {"enabled": True}), ("Page.enable", {}), ("Network.enable", {})]]
    for q in qs: q.get(timeout=30)
    if held:
        c.call("Runtime.runIfWaitingForDebugger", {}, s)

def run(mode):
    c = Cdp([])
    marks = {}
    c.call("Browser.getVersion"); marks["ver"] = c.ms()
    qa = c.send("Target.setAutoAttach", AA)
    qd = c.send("Target.setDiscoverTargets", {"discover": True})
    if "W" in mode:
        c.send("Target.createTarget", {"url": "about:blank", "newWindow": True, "width": 1280, "height": 800})
    if "T" in mode:
        c.send("Target.createTarget", {"url": "about:blank", "background": True})
    won = {}
    done = threading.Event()
    lock = threading.Lock()
    def setup(ev):
        s = ev["params"]["sessionId"]
        rule(c, s, ev["params"]["waitingForDebugger"])
        with lock:
            if not won:
                won["s"] = s; won["t"] = c.ms(); won["who"] = "W" if ev["params"]["waitingForDebugger"] else "L"
                done.set()
    seen = 0
    want = len(mode.replace("T", ""))
    while seen < want:
        ev = c.wait_event("Target.attachedToTarget", lambda m: m["params"]["targetInfo"]["type"] == "page")
        held = ev["params"]["waitingForDebugger"]
        if "T" in mode and held:
            # The background tab only stands beside the page: let it run, never take it.
            c.send("Runtime.runIfWaitingForDebugger", {}, ev["params"]["sessionId"])
            continue
        if ("L" in mode and not held) or ("W" in mode and held):
            threading.Thread(target=setup, args=(ev,), daemon=True).start()
            seen += 1
    done.wait(30)
    s = won["s"]; marks["ready"] = won["t"]
    c.send("Page.navigate", {"url": URL}, s)
    m = c.wait_event("Fetch.requestPaused", lambda m: m.get("sessionId") == s)
    c.send("Fetch.continueRequest", {"requestId": m["params"]["requestId"]}, s)
    c.wait_event("Page.loadEventFired", lambda m: m.get("sessionId") == s); marks["load"] = c.ms()
    c.close()
    return marks, won["who"]

modes = sys.argv[2:] or ["L", "LW"]; n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
rows = {m: [] for m in modes}
for i in range(n):
    for k in range(len(modes)):
        mode = modes[(i + k) % len(modes)]
        m, who = run(mode)
        rows[mode].append(m)
        print(f"{mode:>4} {who}", " ".join(f"{k}={v:.0f}" for k, v in m.items()), flush=True)
for mode, r in rows.items():
    print(f"{mode:>4} median", " ".join(f"{k}={statistics.median(x[k] for x in r):.0f}" for k in r[0]),
          " load-ver:", statistics.median(x["load"] - x["ver"] for x in r))
