"""Conch's MCP door driven by the official MCP Python SDK, over stdio and over HTTP.

`cargo xtask test` runs this after the suite, with the SDK pinned in a venv under
`target/conformance/`. Each check is one behaviour a real client relies on; the first
that fails ends the run with a sentence and exit status 1.

    python mcp_client.py GATEWAY BROWSER
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

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

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


async def exercise(session, url, asked, door):
    """The same checks through either door."""
    init = await session.initialize()
    check(init.protocolVersion == types.LATEST_PROTOCOL_VERSION,
          f"{door}: agreed protocol version {init.protocolVersion}, not the SDK's {types.LATEST_PROTOCOL_VERSION}")

    listed = await session.list_tools()
    names = {tool.name for tool in listed.tools}
    check(names == TOOLS, f"{door}: tools/list gave {sorted(names)}")
    hints = {tool.name: tool.annotations.readOnlyHint if tool.annotations else None for tool in listed.tools}
    check(hints["browser_read"] is True and hints["browser_open"] is False and hints["browser_tabs"] is False,
          f"{door}: readOnlyHint is wrong: {hints}")

    opened = await session.call_tool("browser_open", {"url": url})
    text = "".join(c.text for c in opened.content if isinstance(c, types.TextContent))
    check(not opened.isError and "Conformance page" in text, f"{door}: browser_open did not read the page: {text[:300]}")
    check(asked == [], f"{door}: reading a page asks nothing, yet the client was asked {asked}")

    ref = next((line.split("[ref=")[1].split("]")[0] for line in text.splitlines() if "Press me" in line and "[ref=" in line), None)
    check(ref is not None, f"{door}: no ref for the button in {text[:300]}")
    clicked = await session.call_tool("browser_click", {"ref": ref})
    said = "".join(c.text for c in clicked.content if isinstance(c, types.TextContent))
    check(not clicked.isError and "Pressed" in said, f"{door}: the click's result does not show its outcome: {said[:300]}")
    check(len(asked) == 1 and "127.0.0.1" in asked[0],
          f"{door}: the first act on a site should ask once, as an elicitation naming the site; asked {asked}")

    bad = await session.call_tool("browser_click", {"ref": "e99999"})
    check(bad.isError, f"{door}: a ref that does not exist must be a tool error")

    progress = []

    async def heard(value, total, message):
        progress.append(message)

    waited = await session.call_tool("browser_wait", {"text": "never on this page", "seconds": 5},
                                     progress_callback=heard)
    check(not waited.isError or waited.content, f"{door}: browser_wait failed without a sentence")
    check(len(progress) >= 1, f"{door}: a 5 s wait with a progress token sent no notifications/progress")

    # notifications/cancelled frees the conversation: the next call does not wait out the first.
    request_id = session._request_id
    task = asyncio.ensure_future(session.call_tool("browser_wait", {"text": "never on this page", "seconds": 30}))
    await asyncio.sleep(1.0)
    await session.send_notification(types.ClientNotification(types.CancelledNotification(
        params=types.CancelledNotificationParams(requestId=request_id, reason="conformance"))))
    started = time.monotonic()
    read = await asyncio.wait_for(session.call_tool("browser_read", {}), timeout=15)
    task.cancel()
    check(not read.isError and time.monotonic() - started < 10,
          f"{door}: after notifications/cancelled the conversation was not free")


def elicitation(asked):
    async def answer(context, params):
        asked.append(params.message)
        labels = params.requestedSchema["properties"]["answer"]["enum"]
        yes = next(label for label in labels if label != "No")
        return types.ElicitResult(action="accept", content={"answer": yes})
    return answer


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
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicitation(asked)) as session:
            await exercise(session, url, asked, "stdio")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
        asked = []
        async with streamablehttp_client(f"http://127.0.0.1:{door}/mcp",
                                         headers={"Authorization": f"Bearer {token}"}) as (read, write, _):
            async with ClientSession(read, write, elicitation_callback=elicitation(asked)) as session:
                await exercise(session, url, asked, "http")
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
    print("conformance: stdio: initialize, tools/list, elicitation, call, error, progress, cancelled: ok")
    await over_http(gateway, browser, port, url)
    print("conformance: http: initialize, tools/list, elicitation over the event stream, call, error, progress, cancelled: ok")


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1], sys.argv[2]))
    except Failed as failure:
        print(f"conformance: {failure}", file=sys.stderr)
        sys.exit(1)
