"""Cold start, spawn by spawn: where the time to the first page read goes (issue 31).

    python3 xtask/bench/cold.py [-n 8] [--trace] NAME=GATEWAY ... [--playwright NODE_DIR]

Serves fixtures/pages on 127.0.0.1, then spawns each server N times, alternating between
them (the order rotates from round to round), on a fresh home each time, and times from
spawn to the answer to `initialize` and to the first page read (Conch's `browser_open` of
basic.html; Playwright MCP's `browser_navigate` and `browser_snapshot`, as `cargo xtask
bench mcp` counts it). Prints every spawn and the medians.

With --trace, Conch runs with RUST_LOG=conch_cdp::wire=trace and the phases are cut from
its log, each in ms from spawn: the first DevTools call sent (the browser launched), its
answer, the page's createTarget sent, its attach, its rules answered (its renderer is up:
the answer to its own setAutoAttach), its resume sent (a held page's), its navigate sent,
the load event, the first evaluate sent and the result. The page is the one sent to the fixture, found by its
session (the launch window's page and the omnibox's WebUI attach too). COLD_LOG=FILE
appends every server's standard error there. The trace costs time itself: its figures are
for proportions, the untraced medians for the ratio.
"""
import argparse, http.server, json, os, re, shutil, socketserver, statistics, subprocess
import sys, tempfile, threading, time
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BROWSER = os.environ.get("CONCH_BROWSER", "/usr/bin/chromium")


def serve_pages():
    pages = os.path.join(ROOT, "fixtures", "pages")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=pages, **k)

        def log_message(self, *a):
            pass

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


class Client:
    def __init__(self, argv, env, cwd):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env, cwd=cwd)
        self.next = 0

    def call(self, method, params):
        self.next += 1
        msg = {"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{method}: the server closed its output")
            reply = json.loads(line)
            if reply.get("id") == self.next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def notify(self, method):
        msg = {"jsonrpc": "2.0", "method": method}
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")


def initialize(client):
    client.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "cold", "version": "1"}})
    client.notify("notifications/initialized")


def spawn(kind, binary, port, trace, node_dir):
    home = tempfile.mkdtemp(prefix="conch-cold-")
    env = dict(os.environ)
    if kind == "conch":
        argv = [binary, "mcp", "--home", home, "--browser", BROWSER, "--trust", "full",
                "--unattended", "--allow-host", f"127.0.0.1:{port}"]
        env["RUST_LOG"] = "conch_cdp::wire=trace,conch_browser=debug" if trace else "warn"
    else:
        argv = ["node", os.path.join(node_dir, "node_modules/@playwright/mcp/cli.js"),
                "--headless", "--isolated", "--no-sandbox", "--executable-path", BROWSER,
                "--output-dir", home]
    url = f"http://127.0.0.1:{port}/basic.html"
    wall = time.time()
    started = time.perf_counter()
    client = Client(argv, env, home)
    initialize(client)
    init = time.perf_counter() - started
    if kind == "conch":
        text = client.call("tools/call", {"name": "browser_open", "arguments": {"url": url}})
    else:
        client.call("tools/call", {"name": "browser_navigate", "arguments": {"url": url}})
        text = client.call("tools/call", {"name": "browser_snapshot", "arguments": {}})
    read = time.perf_counter() - started
    if "Basic" not in json.dumps(text):
        raise RuntimeError(f"{kind}: the first read has no page: {json.dumps(text)[:300]}")
    log = client.close()
    if os.environ.get("COLD_LOG"):
        with open(os.environ["COLD_LOG"], "a") as f:
            f.write(f"=== {kind} {binary} spawn at {wall}\n{log}")
    shutil.rmtree(home, ignore_errors=True)
    return init * 1000, read * 1000, (phases(log, wall) if trace and kind == "conch" else None)


TS = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z")


def phases(log, wall):
    """Milestones in ms from spawn, from a traced log. The page is the one whose session
    the navigation to the fixture went on; its createTarget is the one sent before that
    navigation."""
    out = {}
    nav = re.search(r'method="Page.navigate" session="([0-9A-F]+)" '
                    r'payload=\{"url":"[^"]*basic.html', log)
    page_session = nav.group(1) if nav else None

    def mark(name, line):
        if name not in out:
            m = TS.match(line)
            if m:
                t = datetime.fromisoformat(m.group(1)).replace(tzinfo=timezone.utc).timestamp()
                out[name] = round((t - wall) * 1000)

    for line in log.splitlines():
        if "conch_cdp::wire" not in line:
            if "call ended" in line:
                mark("z_done", line)
            continue
        send = 'direction="send"' in line
        if send:
            mark("a_first_send", line)
        else:
            mark("b_first_answer", line)
        if send and "Target.createTarget" in line and "f_navigate" not in out:
            mark("c_create_target", line)
        if not send and "Target.attachedToTarget" in line and page_session \
                and f'"sessionId":"{page_session}"' in line:
            mark("d_page_attached", line)
        if not send and "Target.setAutoAttach" in line and page_session \
                and f'session="{page_session}"' in line:
            mark("e_page_ruled", line)
        if send and "Runtime.runIfWaitingForDebugger" in line and page_session \
                and f'session="{page_session}"' in line:
            mark("e_page_resumed", line)
        if send and "Page.navigate" in line and "basic.html" in line:
            mark("f_navigate", line)
        if not send and "Page.loadEventFired" in line and "f_navigate" in out:
            mark("g_load", line)
        if send and "Runtime.evaluate" in line and "g_load" in out:
            mark("h_first_eval", line)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=8)
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--playwright", metavar="NODE_DIR")
    ap.add_argument("gateways", nargs="*", help="NAME=PATH")
    args = ap.parse_args()
    if args.playwright:
        args.playwright = os.path.abspath(args.playwright)
    servers = [("conch", *g.split("=", 1)) for g in args.gateways]
    if args.playwright:
        servers.append(("playwright", "playwright", None))
    port = serve_pages()
    results = {name: [] for _, name, _ in servers}
    for _, name, binary in servers:  # one warm-up each
        kind = "playwright" if binary is None else "conch"
        spawn(kind, binary, port, False, args.playwright)
    for round_ in range(args.n):
        shift = round_ % len(servers)
        for kind, name, binary in servers[shift:] + servers[:shift]:
            kind = "playwright" if binary is None else "conch"
            init, read, ph = spawn(kind, binary, port, args.trace, args.playwright)
            results[name].append((init, read))
            detail = " ".join(f"{k[2:]}={v}" for k, v in sorted(ph.items())) if ph else ""
            print(f"{name:>12} init {init:6.0f} read {read:6.0f}  {detail}", flush=True)
    print()
    for name, rows in results.items():
        print(f"{name:>12} median init {statistics.median(r[0] for r in rows):6.0f} ms, "
              f"first read {statistics.median(r[1] for r in rows):6.0f} ms ({len(rows)} spawns)")
    if "playwright" in results:
        peer = statistics.median(r[1] for r in results["playwright"])
        for name, rows in results.items():
            print(f"{name:>12} / playwright first read: {statistics.median(r[1] for r in rows) / peer:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
