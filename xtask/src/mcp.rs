//! A minimal MCP client over stdio for the benchmarks: spawn a server, speak JSON-RPC
//! lines, time each call, and read the server's memory from `/proc`.
//!
//! Deliberately small: no notifications are handled beyond skipping them, no sampling or
//! elicitation is answered (the servers under test run unattended).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long one call may take before the bench gives up on it.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// A running MCP server and the client side of its stdio.
pub(crate) struct McpClient {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

/// What one `tools/call` gave back.
pub(crate) struct CallResult {
    /// The text parts, joined.
    pub(crate) text: String,
    /// Whether the server flagged an error.
    pub(crate) is_error: bool,
    /// Wall time from request to answer.
    pub(crate) elapsed: Duration,
}

impl McpClient {
    /// Spawns the server and initializes the session.
    pub(crate) fn start(mut command: Command) -> Result<McpClient, String> {
        let shown = format!("{command:?}");
        // Its own process group, so that ending the group ends its browser too.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match std::env::var_os("CONCH_BENCH_STDERR") {
                Some(path) => std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_or_else(|_| Stdio::null(), Stdio::from),
                None => Stdio::null(),
            })
            .spawn()
            .map_err(|e| format!("could not start {shown}: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = McpClient {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        client.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "conch-bench", "version": "1" }
            }),
        )?;
        client.notify("notifications/initialized")?;
        Ok(client)
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    fn notify(&mut self, method: &str) -> Result<(), String> {
        let line = json!({ "jsonrpc": "2.0", "method": method }).to_string();
        writeln!(self.stdin, "{line}").map_err(|e| format!("server stdin: {e}"))
    }

    /// Sends a request and waits for its answer; gives the result and the wall time.
    pub(crate) fn request(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<(Value, Duration), String> {
        let id = self.next_id;
        self.next_id += 1;
        let mut line = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        line["params"] = params;
        let started = Instant::now();
        writeln!(self.stdin, "{line}").map_err(|e| format!("server stdin: {e}"))?;
        self.stdin
            .flush()
            .map_err(|e| format!("server stdin: {e}"))?;
        let deadline = started + CALL_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("{method}: no answer in {CALL_TIMEOUT:?}"));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!("{method}: the server exited"));
                }
            };
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue; // not JSON-RPC: a stray log line
            };
            if message["id"] != json!(id) {
                continue; // a notification or a request we do not answer
            }
            let elapsed = started.elapsed();
            if let Some(error) = message.get("error") {
                return Err(format!("{method}: {error}"));
            }
            return Ok((message["result"].clone(), elapsed));
        }
    }

    /// Calls a tool.
    pub(crate) fn call(&mut self, name: &str, arguments: Value) -> Result<CallResult, String> {
        let mut params = json!({ "name": name });
        params["arguments"] = arguments;
        let (result, elapsed) = self.request("tools/call", params)?;
        let text = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        Ok(CallResult {
            text,
            is_error: result["isError"].as_bool().unwrap_or(false),
            elapsed,
        })
    }

    /// The whole `tools/list` answer, as the client receives it.
    pub(crate) fn tools_list(&mut self) -> Result<String, String> {
        let (result, _) = self.request("tools/list", json!({}))?;
        Ok(result.to_string())
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        end_group(&mut self.child);
    }
}

/// Ends a child started in a process group of its own (`process_group(0)`), with all it
/// started (a server's browser, an app's workers); the group is signalled only when it
/// really is the child's own, so nothing else is ever signalled.
pub(crate) fn end_group(child: &mut Child) {
    let pid = child.id();
    if process_group(pid) == Some(pid) {
        let _ = Command::new("kill")
            .args(["-TERM", "--", &format!("-{pid}")])
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The process group of `pid`, from `/proc/<pid>/stat`.
fn process_group(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(2)?
        .parse()
        .ok()
}

/// Peak resident memory of one process (`VmHWM`), in KiB.
pub(crate) fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
}

/// Proportional memory (PSS) of a process and all its descendants, in KiB.
pub(crate) fn tree_pss_kib(root: u32) -> u64 {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse().ok());
            if let Some(ppid) = ppid {
                parents.push((pid, ppid));
            }
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(c, _)| *c),
        );
        i += 1;
    }
    tree.iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok())
        .filter_map(|rollup| {
            rollup
                .lines()
                .find_map(|line| line.strip_prefix("Pss:"))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|kib| kib.parse::<u64>().ok())
        })
        .sum()
}
