//! `cargo xtask bench live`: the live view through the gateway against a raw CDP
//! screencast on the same browser, side by side in one run (issue 13).
//!
//! The bench launches Chromium itself with a DevTools port and points a release
//! `conch-gateway mcp --panel-port 0` at it with the `cdp` backend, through a loopback
//! proxy that counts the `Page.screencastFrame` messages Chrome sends the gateway. The
//! gateway opens a page the bench serves; the bench signs in with the printed link and
//! joins `/api/browser/live` as a watcher, exactly as the panel does. The raw client is a
//! second DevTools session on the same tab (through the same proxy, so both paths pay the
//! same hop), running its own `Page.startScreencast` with the hub's settings. The page's
//! colour is changed through the raw session for both paths alike.
//!
//! - Latency: from the change to the first different JPEG at the watcher, median and p95,
//!   in blocks that alternate which path runs first (only one screencast at a time).
//! - Frames per second under a 60 fps `requestAnimationFrame` animation, 5 s per run.
//! - Memory: the gateway's resident memory, once a second, while a watcher that never
//!   reads stays joined and the page animates (`CONCH_BENCH_LIVE_SECONDS`, default 60).
//! - No watcher, no frames: frames Chrome sends the gateway in 5 s of animation after the
//!   last watcher left (LIVE-2): must be 0.
//!
//! Std only: a minimal WebSocket client (text and binary messages, masked sends), a
//! minimal MCP client over the gateway's stdio and a tiny page server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bench::write_report;
use crate::person::{Door, link_parts};
use crate::ws::{WsReader, WsWriter, http_get, ws_connect};
use crate::{browser, cmd};

/// Latency rounds per block, and blocks per path (alternating which path goes first).
const ROUNDS_PER_BLOCK: usize = 10;
const BLOCKS: usize = 6;
/// How long one change may take to show before the round counts as missed.
const ROUND_TIMEOUT: Duration = Duration::from_secs(5);
/// Frames-per-second runs per path, and each run's measured window.
const FPS_RUNS: usize = 3;
const FPS_WINDOW: Duration = Duration::from_secs(5);
/// The slow watcher's duration unless `CONCH_BENCH_LIVE_SECONDS` says otherwise.
const MEMORY_SECONDS: u64 = 60;
/// The unwatched window.
const UNWATCHED: Duration = Duration::from_secs(5);
/// The hub's screencast settings (conch-live/src/hub.rs), for the raw client.
const JPEG_QUALITY: u64 = 70;
const VIEWPORT: (u64, u64) = (1280, 800);
/// The conversation `conch-gateway mcp` drives.
const CONVERSATION: &str = "mcp-stdio";
/// What marks a screencast frame in Chrome's messages.
const FRAME_MARK: &[u8] = b"\"Page.screencastFrame\"";

/// The page, fixture-like: a banner the bench recolours over a grid of product cards, and
/// a box that `animate()` moves over them on every animation frame until `halt()`.
const PAGE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Live bench</title>
<style>
  body { margin: 0; font: 14px sans-serif; background: #fafafa; }
  #banner { height: 120px; padding: 16px 24px; box-sizing: border-box; background: rgb(30, 60, 160); color: #fff; }
  #grid { display: grid; grid-template-columns: repeat(6, 1fr); gap: 12px; padding: 12px; }
  article { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 8px; }
  .thumb { height: 48px; border-radius: 4px; }
  h2 { font-size: 14px; margin: 6px 0 2px; }
  p { margin: 0 0 6px; color: #555; }
  #box { position: absolute; left: 0; top: 300px; width: 120px; height: 120px; background: rgb(240, 190, 30); }
</style></head>
<body>
<header id="banner"><h1>Live bench</h1><p style="color:#eee">A DOM change here is timed until the watcher sees it.</p></header>
<main id="grid"></main>
<div id="box"></div>
<script>
  const words = ['apple', 'pear', 'plum', 'fig', 'kiwi', 'lime', 'date', 'peach', 'mango', 'melon', 'grape', 'cherry'];
  const grid = document.getElementById('grid');
  for (let i = 0; i < 48; i++) {
    const a = document.createElement('article');
    const name = words[i % words.length] + ' ' + words[(i * 7) % words.length];
    a.innerHTML = '<div class="thumb" style="background:hsl(' + (i * 37 % 360) + ',60%,70%)"></div>' +
      '<h2>Product ' + (i + 1) + ': ' + name + '</h2>' +
      '<p>' + (3 + i % 17) + '.' + (10 + i % 89) + ' EUR, ' + (i % 5 + 1) + ' stars, ships in ' + (i % 9 + 1) + ' days</p>' +
      '<button>Add to cart</button>';
    grid.appendChild(a);
  }
  window.rafs = 0;
  window.generation = 0;
  window.paint = (c) => { document.getElementById('banner').style.background = c; };
  window.animate = () => {
    const box = document.getElementById('box');
    const mine = ++window.generation;
    const step = (t) => {
      if (window.generation !== mine) return;
      window.rafs += 1;
      box.style.left = Math.floor((t / 2) % 1100) + 'px';
      box.style.background = 'hsl(' + (Math.floor(t / 10) % 360) + ', 70%, 50%)';
      requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  };
  window.halt = () => { window.generation += 1; };
</script></body></html>
"#;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One frame as a watcher got it: when, and its bytes (the JPEG, or its base64 for the
/// raw client).
struct Frame {
    at: Instant,
    bytes: Vec<u8>,
}

// ---------------------------------------------------------------------------------------
// Processes

/// A child in a process group of its own, ended with its group when dropped.
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0.id()) {
            let _ = Command::new("kill")
                .args(["-TERM", "--", &format!("-{pid}")])
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.0.wait();
    }
}

fn spawn_group(command: &mut Command) -> Result<Group, String> {
    std::os::unix::process::CommandExt::process_group(command, 0);
    command
        .spawn()
        .map(Group)
        .map_err(|e| format!("could not start {command:?}: {e}"))
}

/// Chromium on `profile` with the test flags and a DevTools port; gives it and the port.
fn launch_chromium(executable: &Path, profile: &Path) -> Result<(Group, u16), String> {
    let mut command = Command::new(executable);
    command
        .args(crate::bench::browser_flags()?)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={},{}", VIEWPORT.0, VIEWPORT.1))
        .args([
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
        ])
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = spawn_group(&mut command)?;
    let file = profile.join("DevToolsActivePort");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(port) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<u16>().ok()))
        {
            return Ok((child, port));
        }
        if Instant::now() > deadline {
            return Err("Chromium wrote no DevToolsActivePort within 30 s".to_owned());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---------------------------------------------------------------------------------------
// Loopback servers: the page, and the counting DevTools proxy

/// Serves [`PAGE`] at every path on 127.0.0.1; gives its port.
fn serve_page() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n",
                    PAGE.len()
                );
                let _ = stream
                    .write_all(head.as_bytes())
                    .and_then(|()| stream.write_all(PAGE.as_bytes()));
            });
        }
    });
    Ok(port)
}

/// A TCP proxy to Chromium's DevTools port that counts the screencast frames Chrome sends
/// down connections to its browser socket (the gateway's).
struct Proxy {
    port: u16,
    gateway_frames: Arc<AtomicU64>,
}

impl Proxy {
    fn start(upstream: u16) -> Result<Proxy, String> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let gateway_frames = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&gateway_frames);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let counter = Arc::clone(&counter);
                std::thread::spawn(move || {
                    let _ = relay(client, upstream, &counter);
                });
            }
        });
        Ok(Proxy {
            port,
            gateway_frames,
        })
    }

    fn gateway_frames(&self) -> u64 {
        self.gateway_frames.load(Ordering::Relaxed)
    }
}

fn relay(mut client: TcpStream, upstream: u16, counter: &AtomicU64) -> std::io::Result<()> {
    let mut server = TcpStream::connect(("127.0.0.1", upstream))?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    // The request line says which socket this is.
    let mut first = vec![0u8; 8192];
    let n = client.read(&mut first)?;
    first.truncate(n);
    let browser_socket = first.starts_with(b"GET /devtools/browser/");
    server.write_all(&first)?;
    let (mut up_read, mut down_write) = (client.try_clone()?, client);
    let mut up_write = server.try_clone()?;
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut up_read, &mut up_write);
        let _ = up_write.shutdown(Shutdown::Write);
    });
    let mut buf = vec![0u8; 64 * 1024];
    let mut tail: Vec<u8> = Vec::new();
    loop {
        let n = server.read(&mut buf)?;
        if n == 0 {
            let _ = down_write.shutdown(Shutdown::Write);
            return Ok(());
        }
        if browser_socket {
            // The mark may straddle two reads: look at the last bytes of the previous too.
            tail.extend_from_slice(&buf[..n]);
            let found = tail
                .windows(FRAME_MARK.len())
                .filter(|w| *w == FRAME_MARK)
                .count();
            counter.fetch_add(found as u64, Ordering::Relaxed);
            let keep = tail.len().min(FRAME_MARK.len() - 1);
            tail.drain(..tail.len() - keep);
        }
        down_write.write_all(&buf[..n])?;
    }
}

// ---------------------------------------------------------------------------------------
// The raw DevTools client

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The `sessionId` of a `Page.screencastFrame` message: the number after the last
/// `"sessionId":` near its end.
fn screencast_session(message: &[u8]) -> Option<u64> {
    let from = message.len().saturating_sub(256);
    let tail = &message[from..];
    let mark = b"\"sessionId\":";
    let at = tail.windows(mark.len()).rposition(|w| w == mark)? + mark.len();
    let digits: String = tail[at..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .map(|&b| char::from(b))
        .collect();
    digits.parse().ok()
}

/// The `data` of a `Page.screencastFrame` message (its base64 JPEG): from `"data":"` to
/// the `","metadata"` that follows it near the end; the whole message if not found.
fn screencast_data(message: &[u8]) -> &[u8] {
    let start = find(&message[..message.len().min(128)], b"\"data\":\"").map(|at| at + 8);
    let from = message.len().saturating_sub(1024);
    let end = message[from..]
        .windows(12)
        .rposition(|w| w == b"\",\"metadata\"")
        .map(|at| from + at);
    match (start, end) {
        (Some(start), Some(end)) if start < end => &message[start..end],
        _ => message,
    }
}

/// A DevTools session on the page's own socket: calls, and its screencast's frames
/// (acknowledged as they come, as the hub does).
struct Raw {
    writer: WsWriter,
    next_id: AtomicU64,
    answers: Mutex<Receiver<Value>>,
    frames: Arc<Mutex<Option<Sender<Frame>>>>,
}

impl Raw {
    fn connect(port: u16, path: &str) -> Result<Raw, String> {
        let mut socket = ws_connect(port, path, &[])?;
        let writer = socket.writer.clone();
        let (answer_tx, answers) = mpsc::channel();
        let frames: Arc<Mutex<Option<Sender<Frame>>>> = Arc::new(Mutex::new(None));
        let sink = Arc::clone(&frames);
        std::thread::spawn(move || {
            while let Ok((_, message)) = socket.next() {
                let at = Instant::now();
                // A frame is acknowledged first, and picked apart without parsing its
                // JSON (this client runs unoptimised): data, metadata, sessionId.
                if find(&message[..message.len().min(64)], FRAME_MARK).is_some() {
                    if let Some(id) = screencast_session(&message) {
                        let ack = format!(
                            r#"{{"id":0,"method":"Page.screencastFrameAck","params":{{"sessionId":{id}}}}}"#
                        );
                        let _ = socket.writer.text(&ack);
                    }
                    let bytes = screencast_data(&message).to_vec();
                    if let Some(tx) = lock(&sink).as_ref() {
                        let _ = tx.send(Frame { at, bytes });
                    }
                    continue;
                }
                let Ok(value) = serde_json::from_slice::<Value>(&message) else {
                    continue;
                };
                if value.get("id").is_some_and(|id| id != 0) {
                    let _ = answer_tx.send(value);
                }
            }
        });
        Ok(Raw {
            writer,
            next_id: AtomicU64::new(1),
            answers: Mutex::new(answers),
            frames,
        })
    }

    /// Sends a command without waiting; gives its id.
    fn send(&self, method: &str, params: &Value) -> Result<u64, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let message = json!({ "id": id, "method": method, "params": params });
        self.writer
            .text(&message.to_string())
            .map_err(|e| format!("{method}: {e}"))?;
        Ok(id)
    }

    /// Sends a command and waits for its answer (earlier answers are dropped).
    fn call(&self, method: &str, params: &Value) -> Result<Value, String> {
        let id = self.send(method, params)?;
        let answers = lock(&self.answers);
        loop {
            let answer = answers
                .recv_timeout(Duration::from_secs(30))
                .map_err(|_| format!("{method}: no answer within 30 s"))?;
            if answer["id"] == id {
                if let Some(error) = answer.get("error") {
                    return Err(format!("{method}: {error}"));
                }
                return Ok(answer["result"].clone());
            }
        }
    }

    /// Evaluates `expression` in the page; gives its value.
    fn eval(&self, expression: &str) -> Result<Value, String> {
        let result = self.call(
            "Runtime.evaluate",
            &json!({ "expression": expression, "returnByValue": true }),
        )?;
        Ok(result["result"]["value"].clone())
    }
}

// ---------------------------------------------------------------------------------------
// The gateway over stdio

struct Gateway {
    group: Group,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    panel_port: u16,
    code: String,
}

impl Gateway {
    fn start(executable: &Path, home: &Path, browser: &Path) -> Result<Gateway, String> {
        let mut command = Command::new(executable);
        command
            .args(["mcp", "--panel-port", "0", "--allow-localhost"])
            .args(["--trust", "full", "--unattended", "--home"])
            .arg(home)
            .arg("--browser")
            .arg(browser)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut group = spawn_group(&mut command)?;
        let stdin = group.0.stdin.take().ok_or("no stdin")?;
        let stdout = group.0.stdout.take().ok_or("no stdout")?;
        let stderr = group.0.stderr.take().ok_or("no stderr")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let (link_tx, link_rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(link) = line.split("watch and take over at ").nth(1) {
                    let _ = link_tx.send(Ok(link.trim().to_owned()));
                } else if line.contains("its own local browser") {
                    let _ = link_tx.send(Err(line.clone()));
                }
                if std::env::var_os("CONCH_BENCH_LIVE_VERBOSE").is_some() {
                    eprintln!("{line}");
                }
            }
        });
        let link = link_rx
            .recv_timeout(Duration::from_secs(60))
            .map_err(|_| "the gateway printed no sign-in link within 60 s".to_owned())?
            .map_err(|line| format!("the gateway did not take the DevTools address: {line}"))?;
        let (port, code) = link_parts(&link)?;
        let mut gateway = Gateway {
            group,
            stdin: Some(stdin),
            lines,
            panel_port: port,
            code: code.to_owned(),
        };
        gateway.request(
            0,
            "initialize",
            &json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "conch-bench-live", "version": "1" }
            }),
        )?;
        gateway.write(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
        Ok(gateway)
    }

    fn pid(&self) -> u32 {
        self.group.0.id()
    }

    fn write(&mut self, message: &Value) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("the gateway's stdin is closed")?;
        writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("the gateway's stdin: {e}"))
    }

    fn request(&mut self, id: u64, method: &str, params: &Value) -> Result<Value, String> {
        self.write(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .map_err(|_| format!("{method}: no answer within 60 s"))?;
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message["id"] == id && message.get("method").is_none() {
                return Ok(message);
            }
        }
    }

    /// Signs in with the printed link, as the panel's page would.
    fn sign_in(&self) -> Result<Door, String> {
        Door::sign_in(self.panel_port, &self.code)
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        // Closing stdin ends `mcp`; the group is ended after a grace period regardless.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.group.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

// ---------------------------------------------------------------------------------------
// The two paths

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    Gateway,
    Raw,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Gateway => "gateway",
            Side::Raw => "raw",
        }
    }
}

struct Bench {
    raw: Raw,
    proxy: Proxy,
    /// The bench's signed-in session at the gateway's door.
    door: Door,
    gateway_pid: u32,
}

/// A path that is watching: its frames, and what to end it with.
struct Watching {
    frames: Receiver<Frame>,
    socket: Option<WsWriter>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Bench {
    /// Joins the live socket as the panel does: own Origin, cookie and token.
    fn join(&self) -> Result<WsReader, String> {
        self.door.join(CONVERSATION)
    }

    fn watch(&self, side: Side) -> Result<Watching, String> {
        let (tx, frames) = mpsc::channel();
        match side {
            Side::Gateway => {
                let mut socket = self.join()?;
                let writer = socket.writer.clone();
                let reader = std::thread::spawn(move || {
                    while let Ok((kind, bytes)) = socket.next() {
                        let at = Instant::now();
                        if kind == 0x2 && tx.send(Frame { at, bytes }).is_err() {
                            return;
                        }
                    }
                });
                Ok(Watching {
                    frames,
                    socket: Some(writer),
                    reader: Some(reader),
                })
            }
            Side::Raw => {
                *lock(&self.raw.frames) = Some(tx);
                self.raw.call(
                    "Page.startScreencast",
                    &json!({
                        "format": "jpeg",
                        "quality": JPEG_QUALITY,
                        "maxWidth": VIEWPORT.0,
                        "maxHeight": VIEWPORT.1,
                        "everyNthFrame": 1,
                    }),
                )?;
                Ok(Watching {
                    frames,
                    socket: None,
                    reader: None,
                })
            }
        }
    }

    fn leave(&self, watching: Watching) -> Result<(), String> {
        match watching.socket {
            Some(socket) => {
                let _ = socket.send(0x8, &1000u16.to_be_bytes());
                socket.shutdown();
                if let Some(reader) = watching.reader {
                    let _ = reader.join();
                }
            }
            None => {
                self.raw.call("Page.stopScreencast", &json!({}))?;
                *lock(&self.raw.frames) = None;
            }
        }
        Ok(())
    }
}

/// Takes frames until none comes for `quiet` (or `max` passes); the last one goes to
/// `last`.
fn settle(frames: &Receiver<Frame>, last: &mut Option<Vec<u8>>, quiet: Duration, max: Duration) {
    let until = Instant::now() + max;
    while Instant::now() < until {
        match frames.recv_timeout(quiet) {
            Ok(frame) => *last = Some(frame.bytes),
            Err(_) => return,
        }
    }
}

/// A small deterministic generator for the pause before each change, so changes don't
/// line up with the browser's frame clock.
struct Jitter(u64);

impl Jitter {
    fn next_ms(&mut self, low: u64, high: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        low + (self.0 >> 33) % (high - low)
    }
}

const COLOURS: [&str; 2] = ["rgb(200, 40, 40)", "rgb(40, 40, 200)"];

/// One block of latency rounds on `side`: the milliseconds of each, and the misses.
fn latency_block(
    bench: &Bench,
    side: Side,
    jitter: &mut Jitter,
    samples: &mut Vec<f64>,
) -> Result<usize, String> {
    let watching = bench.watch(side)?;
    let mut last = None;
    bench
        .raw
        .eval(&format!("paint({:?})", "rgb(20, 120, 60)"))?;
    settle(
        &watching.frames,
        &mut last,
        Duration::from_millis(400),
        Duration::from_secs(5),
    );
    let jpeg = match side {
        Side::Gateway => &b"\xff\xd8\xff"[..],
        Side::Raw => &b"/9j/"[..],
    };
    if !last.as_ref().is_some_and(|f| f.starts_with(jpeg)) {
        return Err(format!("{} got no JPEG frame within 5 s", side.name()));
    }
    let mut misses = 0;
    for round in 0..ROUNDS_PER_BLOCK {
        std::thread::sleep(Duration::from_millis(jitter.next_ms(60, 200)));
        while let Ok(frame) = watching.frames.try_recv() {
            last = Some(frame.bytes);
        }
        let colour = COLOURS[round % 2];
        let t0 = Instant::now();
        bench.raw.send(
            "Runtime.evaluate",
            &json!({ "expression": format!("paint({colour:?})") }),
        )?;
        let deadline = t0 + ROUND_TIMEOUT;
        let seen = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match watching.frames.recv_timeout(left) {
                Ok(frame) if Some(&frame.bytes) != last.as_ref() => break Some(frame),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break None,
            }
        };
        match seen {
            Some(frame) => {
                samples.push(frame.at.duration_since(t0).as_secs_f64() * 1000.0);
                last = Some(frame.bytes);
            }
            None => misses += 1,
        }
        settle(
            &watching.frames,
            &mut last,
            Duration::from_millis(120),
            Duration::from_secs(1),
        );
    }
    bench.leave(watching)?;
    Ok(misses)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// One frames-per-second run on `side`.
fn fps_run(bench: &Bench, side: Side) -> Result<Value, String> {
    let watching = bench.watch(side)?;
    bench.raw.eval("animate()")?;
    std::thread::sleep(Duration::from_millis(500));
    while watching.frames.try_recv().is_ok() {}
    let rafs_before = bench.raw.eval("rafs")?.as_f64().unwrap_or(0.0);
    let from_chrome = bench.proxy.gateway_frames();
    let started = Instant::now();
    let until = started + FPS_WINDOW;
    let (mut frames, mut bytes) = (0u64, 0u64);
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        if let Ok(frame) = watching.frames.recv_timeout(left) {
            frames += 1;
            bytes += frame.bytes.len() as u64;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let from_chrome = bench.proxy.gateway_frames() - from_chrome;
    let rafs = bench.raw.eval("rafs")?.as_f64().unwrap_or(0.0) - rafs_before;
    bench.raw.eval("halt()")?;
    bench.leave(watching)?;
    let mut run = json!({
        "path": side.name(),
        "fps": frames as f64 / seconds,
        "page_fps": rafs / seconds,
        "frames": frames,
        "mean_frame_bytes": bytes.checked_div(frames).unwrap_or(0),
    });
    if side == Side::Gateway {
        run["fps_from_chrome"] = json!(from_chrome as f64 / seconds);
    }
    Ok(run)
}

/// Runs the bench and prints the table.
pub(crate) fn run() -> Result<(), String> {
    let executable = browser::ensure()?;
    let gateway_bin: PathBuf = crate::bench::release_gateway()?;
    let memory_seconds: u64 = match std::env::var("CONCH_BENCH_LIVE_SECONDS") {
        Ok(text) => text
            .parse()
            .map_err(|_| format!("CONCH_BENCH_LIVE_SECONDS takes seconds, not {text:?}"))?,
        Err(_) => MEMORY_SECONDS,
    };
    let scratch = std::env::temp_dir().join(format!("conch-bench-live-{}", std::process::id()));
    let (profile, home) = (scratch.join("chromium"), scratch.join("home"));
    for dir in [&profile, &home] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let result = measure(&executable, &gateway_bin, &profile, &home, memory_seconds);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn measure(
    executable: &Path,
    gateway_bin: &Path,
    profile: &Path,
    home: &Path,
    memory_seconds: u64,
) -> Result<(), String> {
    let (chromium, devtools) = launch_chromium(executable, profile)?;
    let proxy = Proxy::start(devtools)?;
    let page_port = serve_page()?;
    let url = format!("http://127.0.0.1:{page_port}/live-bench.html");
    cmd::output(
        Command::new(gateway_bin)
            .args(["backend", "set", "cdp", "--url"])
            .arg(format!("http://127.0.0.1:{}", proxy.port))
            .arg("--home")
            .arg(home),
    )?;
    let mut gateway = Gateway::start(gateway_bin, home, executable)?;
    let opened = gateway.request(
        1,
        "tools/call",
        &json!({ "name": "browser_open", "arguments": { "url": url } }),
    )?;
    if opened["result"]["isError"] == json!(true) || opened.get("error").is_some() {
        return Err(format!("browser_open failed: {opened}"));
    }
    // The gateway's tab, found on Chromium's own list; the raw session joins it.
    let (_, _, listed) = http_get(devtools, "/json/list")?;
    let listed: Value = serde_json::from_str(&listed).map_err(|e| format!("/json/list: {e}"))?;
    let target = listed
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["type"] == "page" && t["url"] == url.as_str())
        .and_then(|t| t["id"].as_str())
        .ok_or("the gateway's tab is not on Chromium's list")?
        .to_owned();
    let raw = Raw::connect(proxy.port, &format!("/devtools/page/{target}"))?;
    let bench = Bench {
        raw,
        door: gateway.sign_in()?,
        gateway_pid: gateway.pid(),
        proxy,
    };

    // 1. Latency, in blocks alternating which path goes first.
    let mut jitter = Jitter(0x5eed_1234);
    let (mut gateway_ms, mut raw_ms) = (Vec::new(), Vec::new());
    let (mut gateway_misses, mut raw_misses) = (0, 0);
    for block in 0..BLOCKS {
        eprintln!("xtask: bench live: latency block {} of {BLOCKS}", block + 1);
        let order = if block % 2 == 0 {
            [Side::Gateway, Side::Raw]
        } else {
            [Side::Raw, Side::Gateway]
        };
        for side in order {
            match side {
                Side::Gateway => {
                    gateway_misses += latency_block(&bench, side, &mut jitter, &mut gateway_ms)?;
                }
                Side::Raw => raw_misses += latency_block(&bench, side, &mut jitter, &mut raw_ms)?,
            }
        }
    }
    gateway_ms.sort_by(f64::total_cmp);
    raw_ms.sort_by(f64::total_cmp);
    let latency = |ms: &[f64], misses: usize| {
        json!({
            "median_ms": percentile(ms, 0.5),
            "p95_ms": percentile(ms, 0.95),
            "min_ms": percentile(ms, 0.0),
            "samples": ms.len(),
            "misses": misses,
        })
    };
    let median_ratio = percentile(&gateway_ms, 0.5) / percentile(&raw_ms, 0.5);
    let p95_ratio = percentile(&gateway_ms, 0.95) / percentile(&raw_ms, 0.95);

    // 2. Frames per second under animation.
    let mut fps_runs = Vec::new();
    for i in 0..FPS_RUNS {
        eprintln!(
            "xtask: bench live: frames per second, run {} of {FPS_RUNS}",
            i + 1
        );
        let order = if i % 2 == 0 {
            [Side::Gateway, Side::Raw]
        } else {
            [Side::Raw, Side::Gateway]
        };
        for side in order {
            fps_runs.push(fps_run(&bench, side)?);
        }
    }
    let mean_of = |side: Side, key: &str| {
        let values: Vec<f64> = fps_runs
            .iter()
            .filter(|r| r["path"] == side.name())
            .filter_map(|r| r[key].as_f64())
            .collect();
        values.iter().sum::<f64>() / values.len().max(1) as f64
    };
    let (gateway_fps, raw_fps) = (mean_of(Side::Gateway, "fps"), mean_of(Side::Raw, "fps"));
    let page_fps = mean_of(Side::Gateway, "page_fps");
    let chrome_fps = mean_of(Side::Gateway, "fps_from_chrome");
    let frame_bytes = mean_of(Side::Gateway, "mean_frame_bytes");

    // 3. Memory with a watcher that never reads.
    eprintln!("xtask: bench live: a watcher that never reads, {memory_seconds} s");
    let rss_before = crate::bench::rss_kib(bench.gateway_pid);
    bench.raw.eval("animate()")?;
    let stuck = bench.join()?;
    let from_chrome = bench.proxy.gateway_frames();
    let started = Instant::now();
    let mut samples = Vec::new();
    for second in 0..=memory_seconds {
        let at = started + Duration::from_secs(second);
        std::thread::sleep(at.saturating_duration_since(Instant::now()));
        samples.push(crate::bench::rss_kib(bench.gateway_pid));
    }
    let stuck_sent = bench.proxy.gateway_frames() - from_chrome;
    let stuck_fps = stuck_sent as f64 / started.elapsed().as_secs_f64().max(1e-9);
    // What waited for the watcher when it finally read: the kernel's socket buffers, and
    // at most one frame from the hub.
    bench.raw.eval("halt()")?;
    std::thread::sleep(Duration::from_millis(500));
    let (mut queued, mut queued_bytes) = (0u64, 0u64);
    let mut stuck = stuck;
    stuck
        .reader
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(500)))
        .map_err(|e| e.to_string())?;
    while let Ok((kind, bytes)) = stuck.next() {
        if kind == 0x2 {
            queued += 1;
            queued_bytes += bytes.len() as u64;
        }
    }
    stuck.writer.shutdown();
    drop(stuck);
    let mib = |kib: u64| kib as f64 / 1024.0;
    let rss_start = samples.first().copied().unwrap_or(0);
    let rss_max = samples.iter().copied().max().unwrap_or(0);
    let rss_end = samples.last().copied().unwrap_or(0);
    let growth_kib = rss_max.saturating_sub(rss_start);
    let held_frames = growth_kib as f64 * 1024.0 / frame_bytes.max(1.0);
    // What the gateway would have grown by had it queued every frame for the watcher.
    let unbounded_mib = stuck_sent as f64 * frame_bytes / (1024.0 * 1024.0);

    // 4. No watcher, no frames.
    eprintln!("xtask: bench live: no watcher, {} s", UNWATCHED.as_secs());
    bench.raw.eval("animate()")?;
    std::thread::sleep(Duration::from_secs(2));
    let from_chrome = bench.proxy.gateway_frames();
    std::thread::sleep(UNWATCHED);
    let unwatched = bench.proxy.gateway_frames() - from_chrome;
    bench.raw.eval("halt()")?;
    drop(bench);
    drop(gateway);
    drop(chromium);

    println!();
    println!(
        "Live view, gateway path (Chrome -> conch-gateway -> /api/browser/live WebSocket) against a raw CDP screencast on the same tab"
    );
    println!(
        "{:<34} {:>12} {:>12} {:>8}  target",
        "figure", "gateway", "raw CDP", "ratio"
    );
    println!(
        "{:<34} {:>12.1} {:>12.1} {:>8.2}  <= 1.20",
        "latency median ms",
        percentile(&gateway_ms, 0.5),
        percentile(&raw_ms, 0.5),
        median_ratio
    );
    println!(
        "{:<34} {:>12.1} {:>12.1} {:>8.2}",
        "latency p95 ms",
        percentile(&gateway_ms, 0.95),
        percentile(&raw_ms, 0.95),
        p95_ratio
    );
    println!(
        "{:<34} {:>12} {:>12}",
        "latency samples (missed)",
        format!("{} ({gateway_misses})", gateway_ms.len()),
        format!("{} ({raw_misses})", raw_ms.len())
    );
    println!(
        "{:<34} {:>12.1} {:>12.1} {:>8.2}  (page drew {page_fps:.0} fps; Chrome sent the gateway {chrome_fps:.1})",
        "frames per second, animating",
        gateway_fps,
        raw_fps,
        gateway_fps / raw_fps
    );
    println!(
        "{:<34} {:>12}  (a watcher that never reads, {memory_seconds} s of animation; {:.0} KiB a frame)",
        "gateway RSS MiB start / max / end",
        format!(
            "{:.1} / {:.1} / {:.1}",
            mib(rss_start),
            mib(rss_max),
            mib(rss_end)
        ),
        frame_bytes / 1024.0
    );
    println!(
        "{:<34} {:>12.1}  flat ({:.1} MiB; queueing all {stuck_sent} frames Chrome sent would be {unbounded_mib:.0} MiB)",
        "  RSS max - start, in frames",
        held_frames,
        mib(growth_kib)
    );
    println!(
        "{:<34} {:>12}  kernel socket buffers, and <= 1 frame in the hub",
        "  frames waiting when it read",
        format!("{queued} ({:.1} MiB)", mib(queued_bytes / 1024)),
    );
    println!(
        "{:<34} {:>12}  0",
        format!("frames with no watcher, {} s", UNWATCHED.as_secs()),
        unwatched
    );

    let report = json!({
        "benchmark": "live",
        "path_measured": "gateway: Chrome -> conch-gateway mcp (cdp backend, via a counting loopback proxy) -> conch-live Hub -> /api/browser/live WebSocket -> bench; raw: a second DevTools session on the same tab via the same proxy, Page.startScreencast with the hub's settings",
        "browser": executable.display().to_string(),
        "latency": {
            "rounds_per_block": ROUNDS_PER_BLOCK,
            "blocks_per_path": BLOCKS,
            "gateway": latency(&gateway_ms, gateway_misses),
            "raw": latency(&raw_ms, raw_misses),
            "median_ratio": median_ratio,
            "p95_ratio": p95_ratio,
            "target_ratio": 1.2,
            "gateway_samples_ms": gateway_ms,
            "raw_samples_ms": raw_ms,
        },
        "fps": {
            "window_s": FPS_WINDOW.as_secs_f64(),
            "runs": fps_runs,
            "gateway": gateway_fps,
            "raw": raw_fps,
            "ratio": gateway_fps / raw_fps,
            "page_fps": page_fps,
            "chrome_to_gateway_fps": chrome_fps,
        },
        "memory": {
            "seconds": memory_seconds,
            "rss_before_join_kib": rss_before,
            "rss_kib": { "start": rss_start, "max": rss_max, "end": rss_end },
            "samples_kib": samples,
            "chrome_to_gateway_fps": stuck_fps,
            "frames_chrome_sent": stuck_sent,
            "frames_waiting_when_read": queued,
            "bytes_waiting_when_read": queued_bytes,
            "mean_frame_bytes": frame_bytes,
            "rss_growth_kib": growth_kib,
            "growth_in_frames": held_frames,
            "mib_if_every_frame_were_queued": unbounded_mib,
        },
        "no_watcher": {
            "seconds": UNWATCHED.as_secs_f64(),
            "frames_chrome_sent_the_gateway": unwatched,
            "target": 0,
        },
    });
    write_report(&cmd::target().join("bench/live.json"), &report)?;
    if unwatched > 0 {
        return Err(format!(
            "Chrome sent the gateway {unwatched} frames with no watcher"
        ));
    }
    Ok(())
}
