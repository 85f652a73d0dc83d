//! The agent the MCP benchmarks play (`bench mcp`, `bench real`): steps on elements named
//! by role and name, written once in neither server's vocabulary, and each server's refs
//! looked up in the text it gave.
//!
//! A step counts every call a server needs before the agent knows the step's outcome:
//! Playwright MCP's acts write their snapshot to a file, so its step is the act plus
//! `browser_snapshot`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp::{CallResult, McpClient};

/// An element named the way a person reads it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    pub(crate) role: &'static str,
    pub(crate) name: &'static str,
}

pub(crate) const fn t(role: &'static str, name: &'static str) -> Target {
    Target { role, name }
}

/// One step, in neither server's vocabulary.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// A page, by the path the bench resolves to an address.
    Open(&'static str),
    ReadPart(u32),
    Find(&'static str),
    Click(Target),
    /// A double click: what opens a flow node's editor or a rendered cell's source.
    DoubleClick(Target),
    Type(Target, &'static str),
    /// Typing the account's password into a sign-in field. Conch's agent types
    /// [`PASSWORD_PLACEHOLDER`] and Conch fills the password saved for the site (the step
    /// fails unless the result says so); Playwright MCP's agent, having no vault, types
    /// the password itself.
    Password(Target, &'static str),
    /// Typing into a field, then Enter.
    Submit(Target, &'static str),
    Form(Vec<(Target, &'static str)>),
    /// Choosing an option of a drop-down list by its label.
    Select(Target, &'static str),
    Hover(Target),
    Drag(Target, Target),
    /// A click that raises a confirm or an alert, which is accepted.
    DialogClick(Target),
    /// A click on a link that opens a new tab, then looking at that tab.
    NewTabClick(Target),
    Back,
    /// Waiting for text to show, then looking at the page (an app that renders late).
    Wait(&'static str),
    /// The journey's proof: the text shows on the page. Read from the last outcome when
    /// it is there; otherwise the agent waits for it, which fails when it never shows.
    Expect(&'static str),
    /// The journey's proof that something went away: the agent waits for it to go.
    Gone(&'static str),
}

/// What Conch's agent types into a password field of a site whose password is saved.
pub(crate) const PASSWORD_PLACEHOLDER: &str = "saved";

/// What one step cost.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Cost {
    pub(crate) calls: u32,
    pub(crate) chars: usize,
    pub(crate) wall: Duration,
}

impl Cost {
    fn add(&mut self, result: &CallResult) {
        self.calls += 1;
        self.chars += result.text.chars().count();
        self.wall += result.elapsed;
    }

    pub(crate) fn absorb(&mut self, other: Cost) {
        self.calls += other.calls;
        self.chars += other.chars;
        self.wall += other.wall;
    }
}

/// What must be on the page when a scenario ends, checked outside its costs so that a
/// server is never timed on a step it did not finish.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Proof {
    /// The text shows somewhere on the page (a field's value counts).
    Shows(&'static str),
    /// `first` shows before the last `then`: an item now stands inside a container that
    /// the page lists above it (a card dropped into a column).
    Before(&'static str, &'static str),
}

/// Which server, and how it names things.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Server {
    Conch,
    Playwright,
}

impl Server {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Server::Conch => "conch",
            Server::Playwright => "playwright",
        }
    }

    /// The command that starts this server with its files under `home`; Conch may reach
    /// the local apps on `ports` of 127.0.0.1. With `person`, Conch opens the person's
    /// door (questions wait for an answer there); without, it answers every question No.
    pub(crate) fn command(
        self,
        browser: &Path,
        ports: &[u16],
        home: &Path,
        node_dir: &Path,
        person: bool,
    ) -> Command {
        match self {
            Server::Conch => {
                let mut command = Command::new(crate::bench::gateway_bin());
                command
                    .arg("mcp")
                    .arg("--home")
                    .arg(home)
                    .arg("--browser")
                    .arg(browser)
                    .args(["--trust", "full"]);
                // With a person, questions go to the panel's cards; without, No at once.
                if person {
                    command.args(["--panel-port", "0"]);
                } else {
                    command.arg("--unattended");
                }
                for port in ports {
                    command.arg("--allow-host").arg(format!("127.0.0.1:{port}"));
                }
                command
            }
            Server::Playwright => {
                let mut command = Command::new("node");
                command
                    .arg(node_dir.join("node_modules/@playwright/mcp/cli.js"))
                    .args([
                        "--headless",
                        "--isolated",
                        "--no-sandbox",
                        "--executable-path",
                    ])
                    .arg(browser)
                    .arg("--output-dir")
                    .arg(home)
                    .current_dir(home);
                command
            }
        }
    }
}

/// Roles a person calls "a text field": the servers name some of them differently.
const TEXT_ROLES: [&str; 3] = ["textbox", "searchbox", "combobox"];

/// The agent's side of one server: the client, the refs it has seen and the text of the
/// last step's outcome.
pub(crate) struct Agent {
    pub(crate) server: Server,
    pub(crate) client: McpClient,
    /// `role "name"` -> ref, from every snapshot or diff text received (latest wins, but
    /// the first of several same-named elements is kept within one text).
    refs: BTreeMap<String, String>,
    /// Text shown -> the ref of the element that shows it, or for a line without a ref,
    /// of the nearest line above it that holds it (an SVG node's label, a name in a file list): what an agent clicks when
    /// it aims at a label. Role `text` of a [`Target`] looks here.
    holders: BTreeMap<String, String>,
    /// Everything the last step's calls returned.
    outcome: String,
    /// The same for the step before it.
    previous: String,
    /// Every call and its answer, for the record of a journey.
    pub(crate) transcript: String,
}

impl Agent {
    pub(crate) fn new(server: Server, client: McpClient) -> Agent {
        Agent {
            server,
            client,
            refs: BTreeMap::new(),
            holders: BTreeMap::new(),
            outcome: String::new(),
            previous: String::new(),
            transcript: String::new(),
        }
    }

    fn learn(&mut self, text: &str) {
        let mut seen_here: Vec<String> = Vec::new();
        // The lines above with a ref, by indent: the holders of a line without one.
        let mut above: Vec<(usize, String)> = Vec::new();
        for line in text.lines() {
            let indent = line.len() - line.trim_start().len();
            above.retain(|(at, _)| *at < indent);
            let Some((key, reference)) = ref_of_line(line) else {
                if let (Some(shown), Some((_, holder))) = (text_of_line(line), above.last()) {
                    self.holders.insert(shown, holder.clone());
                }
                continue;
            };
            above.push((indent, reference.clone()));
            if let Some((_, name)) = key.split_once(' ') {
                let name = name.trim_matches('"');
                if !name.is_empty() {
                    self.holders.insert(name.to_owned(), reference.clone());
                }
            }
            if seen_here.contains(&key) {
                continue;
            }
            seen_here.push(key.clone());
            self.refs.insert(key, reference);
        }
    }

    /// The ref of the first of the target's roles and names (each may list alternatives
    /// with `|`, since the servers name some elements differently; a name ending in `*`
    /// is a prefix) seen so far.
    fn find(&self, target: Target) -> Result<String, String> {
        let roles = target.role.split('|').flat_map(|role| {
            let aliases: &[&str] = if TEXT_ROLES.contains(&role) {
                &TEXT_ROLES
            } else {
                &[]
            };
            std::iter::once(role).chain(aliases.iter().copied().filter(move |r| *r != role))
        });
        for role in roles {
            if role == "text" {
                let held = target
                    .name
                    .split('|')
                    .find_map(|name| self.holders.get(name));
                if let Some(found) = held {
                    return Ok(found.clone());
                }
                continue;
            }
            for name in target.name.split('|') {
                let found = match name.strip_suffix('*') {
                    Some(prefix) => {
                        let start = format!("{role} \"{prefix}");
                        self.refs
                            .range(start.clone()..)
                            .take_while(|(key, _)| key.starts_with(&start))
                            .map(|(_, found)| found)
                            .next()
                    }
                    None => self.refs.get(&format!("{role} \"{name}\"")),
                };
                if let Some(found) = found {
                    return Ok(found.clone());
                }
            }
        }
        Err(format!(
            "{}: no ref for {} \"{}\" in what the server returned",
            self.server.label(),
            target.role,
            target.name
        ))
    }

    /// Conch: the ref of a target, reading the part that the last find named when the
    /// ref is not known yet (a find gives the matching line, not always its control).
    fn conch_ref(&mut self, target: Target, cost: &mut Cost) -> Result<String, String> {
        if let Ok(found) = self.find(target) {
            return Ok(found);
        }
        let part = self.previous.lines().find_map(|line| {
            line.strip_prefix("(part ")?
                .split(')')
                .next()?
                .parse::<u32>()
                .ok()
        });
        match part {
            Some(part) => {
                self.call(cost, "browser_read", json!({ "part": part }))?;
                self.find(target)
            }
            None => self.find(target),
        }
    }

    /// One call; its cost counts even when the server answers with an error.
    fn call(&mut self, cost: &mut Cost, name: &str, args: Value) -> Result<String, String> {
        self.transcript.push_str(&format!("> {name} {args}\n"));
        let result = self.client.call(name, args)?;
        cost.add(&result);
        self.transcript.push_str(&format!(
            "< {:.0} ms{}\n{}\n\n",
            ms(result.elapsed),
            if result.is_error { ", error" } else { "" },
            result.text
        ));
        if result.is_error {
            return Err(format!(
                "{}: {name} failed: {}",
                self.server.label(),
                result.text
            ));
        }
        self.learn(&result.text);
        self.outcome.push_str(&result.text);
        self.outcome.push('\n');
        Ok(result.text)
    }

    /// The whole page as this server reads it, not counted: Conch's parts one after
    /// another, Playwright MCP's snapshot.
    fn page_text(&mut self) -> Result<String, String> {
        let mut scratch = Cost::default();
        match self.server {
            Server::Playwright => self.call(&mut scratch, "browser_snapshot", json!({})),
            Server::Conch => {
                let mut text = String::new();
                for part in 1..=64 {
                    let answer =
                        self.call(&mut scratch, "browser_read", json!({ "part": part }))?;
                    let more = answer.contains(&format!("browser_read part {}", part + 1));
                    text.push_str(&answer);
                    if !more {
                        break;
                    }
                }
                Ok(text)
            }
        }
    }

    /// Fails unless every proof holds on the page as the server reads it now.
    pub(crate) fn prove(&mut self, proofs: &[Proof]) -> Result<(), String> {
        if proofs.is_empty() {
            return Ok(());
        }
        let text = self.page_text()?;
        for proof in proofs {
            let holds = match *proof {
                Proof::Shows(shown) => text.contains(shown),
                Proof::Before(first, then) => match (text.find(first), text.rfind(then)) {
                    (Some(a), Some(b)) => a < b,
                    _ => false,
                },
            };
            if !holds {
                return Err(format!(
                    "{}: the page does not show what the scenario should have done: {proof:?}",
                    self.server.label()
                ));
            }
        }
        Ok(())
    }

    /// Playwright MCP: the act, then a snapshot to see its outcome.
    fn pw_act(&mut self, cost: &mut Cost, name: &str, args: Value) -> Result<(), String> {
        self.call(cost, name, args)?;
        self.call(cost, "browser_snapshot", json!({}))?;
        Ok(())
    }

    /// Plays one step; `url` turns an `Open` path into an address. The cost is what the
    /// calls made took, also when the step fails.
    pub(crate) fn step(
        &mut self,
        step: &Step,
        url: &dyn Fn(&str) -> String,
        cost: &mut Cost,
    ) -> Result<(), String> {
        match step {
            Step::Expect(text) => return self.expect(text, cost),
            Step::Gone(text) => return self.wait(text, true, cost),
            _ => {}
        }
        self.previous = std::mem::take(&mut self.outcome);
        match self.server {
            Server::Conch => self.conch_step(step, url, cost),
            Server::Playwright => self.pw_step(step, url, cost),
        }
    }

    fn expect(&mut self, text: &str, cost: &mut Cost) -> Result<(), String> {
        if self.outcome.contains(text) {
            return Ok(());
        }
        self.wait(text, false, cost)
    }

    /// Waits until `text` shows (or, `gone`, goes away), waiting again while it has
    /// not, up to 20 s: Conch's wait is asked for 10 s, Playwright MCP's gives up after
    /// 5 s. Conch answers a wait that ran out with a sentence, not an error, so its answer
    /// must say it is done.
    fn wait(&mut self, text: &str, gone: bool, cost: &mut Cost) -> Result<(), String> {
        let tries = match self.server {
            Server::Conch => 2,
            Server::Playwright => 4,
        };
        let mut answer = Ok(());
        for _ in 0..tries {
            answer = self.wait_once(text, gone, cost);
            match &answer {
                Err(e) if e.contains("Waited") || e.contains("Timeout") => continue,
                _ => break,
            }
        }
        let what = if gone { "went away" } else { "showed" };
        answer.map_err(|e| format!("\"{text}\" never {what}: {e}"))
    }

    fn wait_once(&mut self, text: &str, gone: bool, cost: &mut Cost) -> Result<(), String> {
        match self.server {
            Server::Conch => {
                let key = if gone { "gone" } else { "text" };
                self.call(cost, "browser_wait", json!({ key: text, "seconds": 10 }))
                    .and_then(|answer| {
                        if answer.starts_with("Done waiting") {
                            Ok(())
                        } else {
                            Err(format!("conch: browser_wait: {answer}"))
                        }
                    })
            }
            Server::Playwright => {
                let key = if gone { "textGone" } else { "text" };
                self.call(cost, "browser_wait_for", json!({ key: text }))
                    .map(|_| ())
            }
        }
    }

    fn conch_step(
        &mut self,
        step: &Step,
        url: &dyn Fn(&str) -> String,
        cost: &mut Cost,
    ) -> Result<(), String> {
        let (name, args) = match step {
            Step::Open(page) => ("browser_open", json!({ "url": url(page) })),
            Step::ReadPart(part) => ("browser_read", json!({ "part": part })),
            Step::Find(text) => ("browser_read", json!({ "find": text })),
            Step::Click(target) | Step::DialogClick(target) | Step::NewTabClick(target) => {
                let reference = self.conch_ref(*target, cost)?;
                ("browser_click", json!({ "ref": reference }))
            }
            Step::Type(target, text) => {
                let reference = self.conch_ref(*target, cost)?;
                ("browser_type", json!({ "ref": reference, "text": text }))
            }
            Step::Password(target, _) => {
                let reference = self.conch_ref(*target, cost)?;
                let args = json!({ "ref": reference, "text": PASSWORD_PLACEHOLDER });
                let answer = self.call(cost, "browser_type", args)?;
                if !answer.contains("Filled the saved password for") {
                    return Err(format!(
                        "conch: browser_type did not fill the saved password: {answer}"
                    ));
                }
                return Ok(());
            }
            // One call, as Playwright MCP's: browser_type presses Enter after the text
            // (issue 30).
            Step::Submit(target, text) => {
                let reference = self.conch_ref(*target, cost)?;
                (
                    "browser_type",
                    json!({ "ref": reference, "text": text, "submit": true }),
                )
            }
            Step::Form(fields) => {
                let mut filled = Vec::new();
                for (target, value) in fields {
                    let reference = self.conch_ref(*target, cost)?;
                    filled.push(json!({ "ref": reference, "value": value }));
                }
                ("browser_form", json!({ "fields": filled }))
            }
            Step::Select(target, value) => {
                let reference = self.conch_ref(*target, cost)?;
                (
                    "browser_select",
                    json!({ "ref": reference, "values": [value] }),
                )
            }
            Step::Hover(target) => {
                let reference = self.conch_ref(*target, cost)?;
                ("browser_click", json!({ "ref": reference, "how": "hover" }))
            }
            Step::DoubleClick(target) => {
                let reference = self.conch_ref(*target, cost)?;
                (
                    "browser_click",
                    json!({ "ref": reference, "how": "double" }),
                )
            }
            Step::Drag(from, to) => {
                let (from, to) = (self.conch_ref(*from, cost)?, self.conch_ref(*to, cost)?);
                (
                    "browser_click",
                    json!({ "ref": from, "how": "drag", "to": to }),
                )
            }
            Step::Back => ("browser_back", json!({})),
            Step::Wait(text) => return self.wait(text, false, cost),
            Step::Expect(_) | Step::Gone(_) => return Ok(()),
        };
        self.call_only(cost, name, args)
    }

    fn call_only(&mut self, cost: &mut Cost, name: &str, args: Value) -> Result<(), String> {
        self.call(cost, name, args).map(|_| ())
    }

    fn pw_step(
        &mut self,
        step: &Step,
        url: &dyn Fn(&str) -> String,
        cost: &mut Cost,
    ) -> Result<(), String> {
        // Playwright MCP names an element by its ref and a description for the person.
        let aim = |agent: &Agent, target: &Target| -> Result<Value, String> {
            Ok(json!({ "target": agent.find(*target)?, "element": target.name }))
        };
        match step {
            Step::Open(page) => self.pw_act(cost, "browser_navigate", json!({ "url": url(page) })),
            // Playwright MCP has no parts: its page read already gave the whole page.
            Step::ReadPart(_) | Step::Expect(_) | Step::Gone(_) => Ok(()),
            Step::Wait(text) => {
                self.wait(text, false, cost)?;
                self.call_only(cost, "browser_snapshot", json!({}))
            }
            Step::Find(text) => self.call_only(cost, "browser_find", json!({ "text": text })),
            Step::Click(target) => self.pw_act(cost, "browser_click", aim(self, target)?),
            Step::DialogClick(target) => {
                self.call(cost, "browser_click", aim(self, target)?)?;
                self.pw_act(cost, "browser_handle_dialog", json!({ "accept": true }))
            }
            Step::NewTabClick(target) => {
                self.call(cost, "browser_click", aim(self, target)?)?;
                self.pw_act(
                    cost,
                    "browser_tabs",
                    json!({ "action": "select", "index": 1 }),
                )
            }
            Step::Type(target, text)
            | Step::Submit(target, text)
            | Step::Password(target, text) => {
                let mut args = aim(self, target)?;
                args["text"] = json!(text);
                if matches!(step, Step::Submit(..)) {
                    args["submit"] = json!(true);
                }
                self.pw_act(cost, "browser_type", args)
            }
            Step::Form(fields) => {
                let fields = fields
                    .iter()
                    .map(|(target, value)| {
                        Ok(json!({
                            "target": self.find(*target)?,
                            "element": target.name,
                            "name": target.name,
                            "type": "textbox",
                            "value": value,
                        }))
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                self.pw_act(cost, "browser_fill_form", json!({ "fields": fields }))
            }
            Step::Select(target, value) => {
                let mut args = aim(self, target)?;
                args["values"] = json!([value]);
                self.pw_act(cost, "browser_select_option", args)
            }
            Step::Hover(target) => self.pw_act(cost, "browser_hover", aim(self, target)?),
            Step::DoubleClick(target) => {
                let mut args = aim(self, target)?;
                args["doubleClick"] = json!(true);
                self.pw_act(cost, "browser_click", args)
            }
            Step::Drag(from, to) => {
                let args = json!({
                    "startTarget": self.find(*from)?, "startElement": from.name,
                    "endTarget": self.find(*to)?, "endElement": to.name,
                });
                self.pw_act(cost, "browser_drag", args)
            }
            Step::Back => self.pw_act(cost, "browser_navigate_back", json!({})),
        }
    }
}

/// `- button "Add to cart" [ref=e12]` -> (`button "Add to cart"`, `e12`), and
/// `- listitem [ref=e7]: Card one` -> (`listitem "Card one"`, `e7`). Both servers write
/// these shapes; states between the name and the ref are skipped.
pub(crate) fn ref_of_line(line: &str) -> Option<(String, String)> {
    let line = line.trim_start();
    // A find's match starts with its part: `(part 3) - cell "…" [ref=e9]`.
    let line = match line.strip_prefix("(part ") {
        Some(rest) => rest.split_once(')').map_or(rest, |(_, line)| line),
        None => line,
    };
    let line = line.trim_start_matches(['-', '+', ' ']);
    let start = line.find("[ref=")?;
    let end = line[start..].find(']')? + start;
    let reference = &line[start + 5..end];
    let head = &line[..start];
    let role = head.split_whitespace().next()?.trim_start_matches('\'');
    let name = match head.split_once('"') {
        Some((_, rest)) => rest.rsplit_once('"').map_or(rest, |(name, _)| name),
        // No quoted name: the text after the colon names it, else it has none. Conch's
        // hint for an unnamed control, `(hint: c13)`, comes before that colon.
        None => {
            let rest = line[end + 1..].trim_start();
            let rest = match rest.strip_prefix("(hint:") {
                Some(hinted) => hinted.split_once(')').map_or("", |(_, after)| after),
                None => rest,
            };
            let rest = rest.find(':').map_or("", |colon| &rest[colon + 1..]);
            rest.trim().trim_matches(['"', '\''])
        }
    };
    // A field's value of empty lines (an empty code editor's `\n`) reads as empty, and an
    // icon font's glyph (a private-use character) is no part of a name a person reads.
    let name: String = name
        .trim_end_matches("\\n")
        .chars()
        .filter(|c| !('\u{e000}'..='\u{f8ff}').contains(c))
        .collect();
    let name = name.trim();
    Some((format!("{role} \"{name}\""), reference.to_owned()))
}

/// `- generic: Morning tide` -> `Morning tide`: the text a line without a ref shows.
fn text_of_line(line: &str) -> Option<String> {
    let line = line.trim_start().trim_start_matches(['-', '+', ' ']);
    if line.contains("[ref=") {
        return None;
    }
    let (_, shown) = line.split_once(": ")?;
    let shown = shown.trim().trim_matches(['"', '\'']);
    (!shown.is_empty()).then(|| shown.to_owned())
}

/// A fresh folder under the system's temporary folder.
pub(crate) fn tempdir(label: &str) -> Result<PathBuf, String> {
    let unique = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "conch-bench-{label}-{}-{unique}",
        std::process::id(),
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::ref_of_line as pair;

    #[test]
    fn issue_11_refs_are_read_from_both_servers_lines_finds_and_unnamed_controls() {
        let of = |key: &str, r: &str| Some((key.to_owned(), r.to_owned()));
        assert_eq!(
            pair("  - button \"Add to cart\" [ref=e12] [cursor=pointer]"),
            of("button \"Add to cart\"", "e12")
        );
        assert_eq!(
            pair("- listitem [ref=e7]: Card one"),
            of("listitem \"Card one\"", "e7")
        );
        // A find's match names its part first.
        assert_eq!(
            pair("(part 3) - cell \"241\" [ref=e62] -> /library/books/241"),
            of("cell \"241\"", "e62")
        );
        // A field without a name, and one named by its value after the states.
        assert_eq!(
            pair("- textbox [active] [ref=e62]"),
            of("textbox \"\"", "e62")
        );
        assert_eq!(
            pair("+ - textbox [ref=e27]: New Tiddler"),
            of("textbox \"New Tiddler\"", "e27")
        );
        // Playwright quotes a line whose name holds a colon.
        assert_eq!(
            pair("- 'link \"Bold text: **Example**\" [ref=e64]':"),
            of("link \"Bold text: **Example**\"", "e64")
        );
        assert_eq!(pair("- heading \"books\" [level=1]"), None);
        // Conch's hint stands before the value; an empty code editor's value is `\n`.
        assert_eq!(
            pair("- textbox [ref=e56] (hint: harbour amp tide): # Harbour &amp; tide"),
            of("textbox \"# Harbour &amp; tide\"", "e56")
        );
        assert_eq!(pair("- textbox [ref=e76]: \\n"), of("textbox \"\"", "e76"));
        assert_eq!(
            pair("- textbox \"\u{f02b} Name\" [ref=f1e504]:"),
            of("textbox \"Name\"", "f1e504")
        );
    }

    #[test]
    fn issue_30_an_unnamed_controls_hint_is_not_taken_for_its_text() {
        // A Quasar menu's items: Conch hints at each unnamed item before its text.
        assert_eq!(
            pair("+ - listitem [ref=e9] (hint: c13): Archive"),
            Some(("listitem \"Archive\"".to_owned(), "e9".to_owned()))
        );
        assert_eq!(
            pair("- listbox [ref=e8] (hint: c27 lb):"),
            Some(("listbox \"\"".to_owned(), "e8".to_owned()))
        );
    }
}
