"""Conch's MCP door in the new era (2026-07-28) driven by the official MCP Python SDK
2.x, over stdio and over HTTP.

`cargo xtask test` runs this after the old era's run (`mcp_client.py`, SDK 1.x), with
the SDK pinned in a venv of its own under `target/conformance/`. The client connects in
its default mode, which probes `server/discover` and stays in the new era when the
server answers it. Each check is one behaviour a real client relies on; the first that
fails ends the run with a sentence and exit status 1.

    python mcp_client_modern.py GATEWAY BROWSER
"""

import asyncio
import http.server
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx2
from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

# Shared with mcp_client.py in spirit; copied, as the two SDK lines cannot share a module.
TOOLS = {
    "browser_open", "browser_read", "browser_click", "browser_type", "browser_press",
    "browser_select", "browser_scroll", "browser_back", "browser_screenshot",
    "browser_wait", "browser_handoff", "browser_tabs", "browser_click_at",
    "browser_upload", "browser_form",
}
PAGE = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Conformance</title></head>
<body><h1>Conformance page</h1><button onclick="this.textContent='Pressed'">Press me</button></body></html>"""


class Failed(Exception):
    pass


def check(holds, sentence):
    if not holds:
        raise Failed(sentence)


def serve_page():
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]



MODERN = "2026-07-28"


def said(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def elicitation(asked):
    """Answers the site question, which comes inside the call's result (MRTR)."""
    async def answer(context, params):
        asked.append(params.message)
        labels = params.requested_schema["properties"]["answer"]["enum"]
        yes = next(label for label in labels if label != "No")
        from mcp_types import ElicitResult
        return ElicitResult(action="accept", content={"answer": yes})
    return answer


async def exercise(client, url, asked, door):
    """The same checks through either door."""
    check(client.protocol_version == MODERN,
          f"{door}: the client stayed at {client.protocol_version}, not {MODERN} (server/discover)")
    info = client.server_info
    check(info is not None and info.name == "conch_browser",
          f"{door}: server/discover did not name the server: {info}")

    listed = await client.list_tools()
    names = [tool.name for tool in listed.tools]
    check(set(names) == TOOLS, f"{door}: tools/list gave {sorted(names)}")
    again = await client.list_tools(cache_mode="refresh")
    check([t.name for t in again.tools] == names, f"{door}: tools/list is not in one order")
    handles = door == "http"
    carries = all("conversation" in (t.input_schema.get("properties") or {}) for t in listed.tools)
    check(carries == handles,
          f"{door}: the conversation handle argument {'is missing' if handles else 'is listed'}")

    opened = await client.call_tool("browser_open", {"url": url})
    text = said(opened)
    check(not opened.is_error and "Conformance page" in text,
          f"{door}: browser_open did not read the page: {text[:300]}")
    check(asked == [], f"{door}: reading a page asks nothing, yet the client was asked {asked}")
    args = {}
    if handles:
        handle = (opened.meta or {}).get("dev.conch/conversation")
        check(handle and handle in text, f"{door}: the first call's result names no handle: {text[-300:]}")
        args = {"conversation": handle}

    # The handle (HTTP) or the process (stdio) keeps the conversation: the same page.
    ref = next((line.split("[ref=")[1].split("]")[0] for line in text.splitlines()
                if "Press me" in line and "[ref=" in line), None)
    check(ref is not None, f"{door}: no ref for the button in {text[:300]}")
    clicked = await client.call_tool("browser_click", {"ref": ref, **args})
    check(not clicked.is_error and "Pressed" in said(clicked),
          f"{door}: the click in the same conversation failed: {said(clicked)[:300]}")
    check(len(asked) == 1 and "127.0.0.1" in asked[0],
          f"{door}: the first act on a site should ask once, inside the call's result (input_required); asked {asked}")

    bad = await client.call_tool("browser_click", {"ref": "e99999", **args})
    check(bad.is_error, f"{door}: a ref that does not exist must be a tool error")

    progress = []

    async def heard(value, total, message):
        progress.append(message)

    waited = await client.call_tool("browser_wait", {"text": "never on this page", "seconds": 5, **args},
                                    progress_callback=heard)
    check(not waited.is_error or waited.content, f"{door}: browser_wait failed without a sentence")
    check(len(progress) >= 1, f"{door}: a 5 s wait with a progress token sent no notifications/progress")

    # Cancelling a call (stdio: notifications/cancelled; HTTP: its stream closed) frees
    # the conversation: the next call does not wait out the first.
    task = asyncio.ensure_future(client.call_tool("browser_wait",
                                                  {"text": "never on this page", "seconds": 30, **args}))
    await asyncio.sleep(1.0)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    started = time.monotonic()
    read = await asyncio.wait_for(client.call_tool("browser_read", dict(args)), timeout=15)
    check(not read.is_error and time.monotonic() - started < 10,
          f"{door}: after the call was cancelled the conversation was not free")


async def over_stdio(gateway, browser, port, url):
    # The gateway's home (its browser profile) goes away with the run.
    with tempfile.TemporaryDirectory(prefix="conch-conformance-", ignore_cleanup_errors=True) as home:
        await stdio_run(gateway, browser, port, url, home)


async def stdio_run(gateway, browser, port, url, home):
    params = StdioServerParameters(
        command=gateway,
        args=["mcp", "--home", home, "--browser", browser, "--ask-via-mcp",
              "--allow-host", f"127.0.0.1:{port}"],
        env={"PATH": os.environ.get("PATH", ""), "HOME": home},
    )
    asked = []
    async with Client(params, elicitation_callback=elicitation(asked)) as client:
        await exercise(client, url, asked, "stdio")


async def over_http(gateway, browser, port, url):
    # The gateway's home goes away once the gateway has ended.
    with tempfile.TemporaryDirectory(prefix="conch-conformance-", ignore_cleanup_errors=True) as home:
        await http_run(gateway, browser, port, url, Path(home))


async def http_run(gateway, browser, port, url, home):
    door = free_port()
    proc = subprocess.Popen(
        [gateway, "serve", "--port", str(door), "--home", str(home), "--browser", browser,
         "--ask-via-mcp", "--allow-host", f"127.0.0.1:{port}"],
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(home)},
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        token_file = home / "gateway.token"
        while True:
            if proc.poll() is not None:
                raise Failed(f"http: conch-gateway serve ended: {proc.stderr.read().decode()[-500:]}")
            try:
                with socket.create_connection(("127.0.0.1", door), timeout=1):
                    if token_file.exists() and token_file.read_text().strip():
                        break
            except OSError:
                pass
            check(time.monotonic() < deadline, "http: conch-gateway serve did not listen within 60 s")
            await asyncio.sleep(0.2)
        token = token_file.read_text().strip()
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                  timeout=httpx2.Timeout(60.0, read=120.0))
        async with http:
            asked = []
            async with Client(streamable_http_client(f"http://127.0.0.1:{door}/mcp", http_client=http),
                              elicitation_callback=elicitation(asked)) as client:
                await exercise(client, url, asked, "http")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


async def main(gateway, browser):
    page = serve_page()
    port = page.server_address[1]
    url = f"http://127.0.0.1:{port}/"
    await over_stdio(gateway, browser, port, url)
    print(f"conformance: stdio {MODERN}: server/discover, tools/list, call, the site question (input_required), error, progress, cancelled: ok")
    await over_http(gateway, browser, port, url)
    print(f"conformance: http {MODERN}: server/discover, tools/list, call with a handle, the site question (input_required), error, progress, cancelled: ok")


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1], sys.argv[2]))
    except Failed as failure:
        print(f"conformance: {failure}", file=sys.stderr)
        sys.exit(1)
