// Conch's MCP door driven by the official MCP TypeScript SDK (v2 line,
// `@modelcontextprotocol/client`, pinned by xtask), a second client independent of the
// Python SDK, in both eras over stdio and over HTTP: `legacy` (initialize, the old era)
// and `auto` (server/discover, 2026-07-28). The first check that fails ends the run
// with a sentence and exit status 1.
//
//     node mcp_client.mjs GATEWAY BROWSER
//
// xtask runs it from the directory the SDK is installed in (`target/conformance/ts/`),
// where it resolves the SDK.

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, existsSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(path.join(process.cwd(), "package.json"));
const { Client, StreamableHTTPClientTransport } = await import(require.resolve("@modelcontextprotocol/client"));
const { StdioClientTransport } = await import(require.resolve("@modelcontextprotocol/client/stdio"));

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Conformance</title></head>
<body><h1>Conformance page</h1><button onclick="this.textContent='Pressed'">Press me</button></body></html>`;

class Failed extends Error {}
const check = (holds, sentence) => {
  if (!holds) throw new Failed(sentence);
};
const said = (result) => (result.content || []).map((c) => c.text || "").join("");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function client(asked, mode) {
  const c = new Client(
    { name: "conch-conformance-ts", version: "1" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode } },
  );
  c.setRequestHandler("elicitation/create", async (request) => {
    asked.push(request.params.message);
    const labels = request.params.requestedSchema.properties.answer.enum;
    return { action: "accept", content: { answer: labels.find((l) => l !== "No") } };
  });
  return c;
}

async function exercise(c, url, asked, door, modern) {
  const version = c.getNegotiatedProtocolVersion();
  check(modern ? version === "2026-07-28" : version !== "2026-07-28",
    `${door}: negotiated ${version} in ${modern ? "auto" : "legacy"} mode`);
  check(c.getServerVersion()?.name === "conch_browser", `${door}: the server is not named`);
  const listed = await c.listTools();
  check(listed.tools.length === 15, `${door}: tools/list gave ${listed.tools.length} tools`);
  const handles = modern && door.startsWith("http");
  const carries = listed.tools.every((t) => "conversation" in (t.inputSchema.properties || {}));
  check(carries === handles, `${door}: the conversation handle argument is ${carries ? "listed" : "missing"}`);

  const opened = await c.callTool({ name: "browser_open", arguments: { url } });
  const text = said(opened);
  check(!opened.isError && text.includes("Conformance page"), `${door}: browser_open did not read the page: ${text.slice(0, 300)}`);
  check(asked.length === 0, `${door}: reading a page asked ${asked}`);
  const args = {};
  if (handles) {
    const handle = opened._meta?.["dev.conch/conversation"];
    check(handle && text.includes(handle), `${door}: the first result names no handle`);
    args.conversation = handle;
  }
  const line = text.split("\n").find((l) => l.includes("Press me") && l.includes("[ref="));
  check(line, `${door}: no ref for the button`);
  const ref = line.split("[ref=")[1].split("]")[0];
  const clicked = await c.callTool({ name: "browser_click", arguments: { ref, ...args } });
  check(!clicked.isError && said(clicked).includes("Pressed"), `${door}: the click failed: ${said(clicked).slice(0, 300)}`);
  check(asked.length === 1 && asked[0].includes("127.0.0.1"), `${door}: the site question was asked ${asked.length} times`);

  const bad = await c.callTool({ name: "browser_click", arguments: { ref: "e99999", ...args } });
  check(bad.isError, `${door}: a ref that does not exist must be a tool error`);

  const progress = [];
  await c.callTool({ name: "browser_wait", arguments: { text: "never on this page", seconds: 5, ...args } },
    { onprogress: (p) => progress.push(p), timeout: 60000 });
  check(progress.length >= 1, `${door}: a 5 s wait with a progress token sent no notifications/progress`);

  const stop = new AbortController();
  const waiting = c.callTool({ name: "browser_wait", arguments: { text: "never on this page", seconds: 30, ...args } },
    { signal: stop.signal, timeout: 60000 }).catch(() => null);
  await sleep(1000);
  stop.abort("conformance");
  await waiting;
  const started = Date.now();
  const read = await c.callTool({ name: "browser_read", arguments: { ...args } }, { timeout: 15000 });
  check(!read.isError && Date.now() - started < 10000, `${door}: after the call was cancelled the conversation was not free`);
}

function servePage() {
  return new Promise((resolve) => {
    const server = http.createServer((_, res) => {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end(PAGE);
    });
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// The gateway's home (its browser profile) goes away with the run; a file its browser
// still writes is no failure of the conformance.
function removeHome(home) {
  try {
    rmSync(home, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    // Left for the system's temporary-file cleanup.
  }
}

async function overStdio(gateway, browser, port, url, mode) {
  const home = mkdtempSync(path.join(os.tmpdir(), "conch-conformance-"));
  const transport = new StdioClientTransport({
    command: gateway,
    args: ["mcp", "--home", home, "--browser", browser, "--ask-via-mcp", "--allow-host", `127.0.0.1:${port}`],
    env: { PATH: process.env.PATH || "", HOME: home },
    stderr: "ignore",
  });
  const asked = [];
  const c = client(asked, mode);
  await c.connect(transport);
  try {
    await exercise(c, url, asked, `stdio ${mode}`, mode === "auto");
  } finally {
    await c.close();
    removeHome(home);
  }
}

async function overHttp(gateway, browser, port, url, mode) {
  const home = mkdtempSync(path.join(os.tmpdir(), "conch-conformance-"));
  const door = await freePort();
  const proc = spawn(gateway, ["serve", "--port", String(door), "--home", home, "--browser", browser,
    "--ask-via-mcp", "--allow-host", `127.0.0.1:${port}`],
  { env: { PATH: process.env.PATH || "", HOME: home }, stdio: ["ignore", "ignore", "ignore"] });
  try {
    const tokenFile = path.join(home, "gateway.token");
    const deadline = Date.now() + 60000;
    while (!(existsSync(tokenFile) && readFileSync(tokenFile, "utf8").trim())) {
      check(Date.now() < deadline, "http: conch-gateway serve did not start within 60 s");
      await sleep(200);
    }
    await sleep(300);
    const token = readFileSync(tokenFile, "utf8").trim();
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${door}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const asked = [];
    const c = client(asked, mode);
    await c.connect(transport);
    try {
      await exercise(c, url, asked, `http ${mode}`, mode === "auto");
    } finally {
      await c.close();
    }
  } finally {
    const ended = new Promise((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) resolve();
      else proc.once("exit", resolve);
    });
    proc.kill("SIGTERM");
    await Promise.race([ended, sleep(10000)]);
    removeHome(home);
  }
}

const [gateway, browser] = process.argv.slice(2);
const page = await servePage();
const port = page.address().port;
const url = `http://127.0.0.1:${port}/`;
try {
  for (const mode of ["legacy", "auto"]) {
    await overStdio(gateway, browser, port, url, mode);
    console.log(`conformance: typescript stdio ${mode}: list, call, site question, error, progress, cancelled: ok`);
    await overHttp(gateway, browser, port, url, mode);
    console.log(`conformance: typescript http ${mode}: list, call, site question, error, progress, cancelled: ok`);
  }
  page.close();
  process.exit(0);
} catch (failure) {
  console.error(`conformance: ${failure instanceof Failed ? failure.message : failure.stack}`);
  process.exit(1);
}
