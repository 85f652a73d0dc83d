//! Reading a page: the whole-document accessibility snapshot with refs (SNAP-1, SNAP-3),
//! through frames (SNAP-4), with secret values masked at the source (SEC-3); diffs since
//! the last read (SNAP-5, SNAP-6, SNAP-7), parts (SNAP-8, SNAP-9) and find (SNAP-11).
//!
//! The snapshot is one line per element in document order, in Playwright's shape:
//! `- button "Place order" [ref=e12]`, `- textbox "Email" [ref=e5]: a@b.c`,
//! `- heading "Cart" [level=2]`, `- link "Docs" [ref=e3] -> /docs`,
//! `- combobox "Country" [ref=e9]: France` with a `- options: France | Spain` child. Only
//! elements the agent can act on carry a ref; wrappers without a role are left out and
//! their children take their place. What a person cannot reach is left out too: hidden,
//! inert or aria-hidden content, an off-canvas drawer, a box collapsed to nothing.
//! Controls made only by script get a ref too (`- generic "New task" [ref=e4]`): an
//! element whose own style shows a hand or grip cursor, with an `onclick` or a tabindex,
//! with a click listener of the page's own (seen through DevTools, issue 30), or what
//! jQuery UI drags or drops onto; the inside of such a control gets none. SVG is read
//! too: its drawn words are text, a clickable group is named by its words and a mark by
//! its `<title>`. A control with no name gets a marked `(hint: …)` from its tooltip,
//! icon class, id or nearest words, which is never its name. A frame's content sits under its `- iframe "…":` line,
//! its refs prefixed (`f1e3`) unless the frame is same-origin (walked in place, plain
//! refs). Secret fields show `[secret]` and, when filled, `: ••••` (conch-policy's
//! `classify_field`).
//!
//! `find` returns each match with its neighbourhood: the list item, row, card, article,
//! form or dialog around it, up to [`NEIGHBOURHOOD_LINES`] lines with their refs. A card
//! that has no line of its own (one of a run of alike boxes) is delimited by marker lines
//! the reader takes out of the text.
//!
//! Deliberately absent: the tab id header (the tool layer knows the tab; see
//! [`Snapshot::header`]) and dialog handling (SNAP-12, the tool layer's).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;

use conch_cdp::{ErrorKind, Session};
use conch_policy::{FieldFacts, classify_field, page_parts};
use serde::Deserialize;
use serde_json::Value;

use super::error::PageError;
use super::world::{Frame, READ_FIRST_JS};
use crate::page::script;

/// What a secret field's filled value reads as.
pub const MASK: &str = "••••";

/// A diff bigger than this many characters comes back as the whole snapshot (AMB-4).
pub const BIG_DIFF_CHARS: usize = 4_000;

/// A diff that touches more than this share of the new snapshot's lines comes back as
/// the whole snapshot (AMB-4), in percent.
pub const BIG_DIFF_PERCENT: usize = 50;

/// A tab's reading memory, kept by the caller per tab: the last snapshot the agent
/// received (the diff baseline, SNAP-7), its document, and the highest ref each frame
/// has given so that a new document never hands out an old document's refs again.
#[derive(Debug, Default)]
pub struct Reader {
    last: Option<Baseline>,
    high_water: HashMap<String, u64>,
}

#[derive(Debug)]
struct Baseline {
    document: String,
    snapshot: Snapshot,
}

impl Reader {
    /// An empty memory: the next change is the whole snapshot.
    pub fn new() -> Reader {
        Reader::default()
    }

    /// The last snapshot the agent received, for `part` and `find` without a new read.
    pub fn last(&self) -> Option<&Snapshot> {
        self.last.as_ref().map(|b| &b.snapshot)
    }

    /// Forgets the baseline (for example after the tab was restored): the next change is
    /// the whole snapshot. Ref numbering carries on.
    pub fn forget(&mut self) {
        self.last = None;
    }

    /// The highest ref each frame gave, for installing the reader in a new document.
    pub(crate) fn high_water_mut(&mut self) -> &mut HashMap<String, u64> {
        &mut self.high_water
    }
}

/// A page's snapshot: its title, address and text (without a header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The document's title.
    pub title: String,
    /// The document's address.
    pub url: String,
    /// The snapshot lines, joined with `\n`.
    pub text: String,
    /// Items of the page that have no line of their own (a card among alike cards), as
    /// ranges of line numbers, for find's neighbourhoods.
    items: Vec<(usize, usize)>,
}

/// A line `find` matched, with its neighbourhood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The part the line is in, from 1.
    pub part: usize,
    /// The line, indentation trimmed.
    pub line: String,
    /// The item around the line (a list item, row, card, article, form or dialog), at
    /// most [`NEIGHBOURHOOD_LINES`] lines with their refs and the line among them,
    /// indented relative to its first line; just the line when it is in no item.
    pub block: Vec<String>,
}

/// The most lines of a neighbourhood `find` returns for one match.
pub const NEIGHBOURHOOD_LINES: usize = 8;

/// Roles whose line heads an item: its lines are a match's neighbourhood.
const ITEM_ROLES: &[&str] = &[
    "listitem",
    "row",
    "article",
    "form",
    "dialog",
    "alertdialog",
    "group",
    "treeitem",
];

impl Snapshot {
    /// The snapshot cut into parts of at most 16,000 characters between lines (SNAP-8).
    pub fn parts(&self) -> Vec<&str> {
        page_parts(&self.text)
    }

    /// How many parts the snapshot has (at least 1).
    pub fn part_count(&self) -> usize {
        self.parts().len()
    }

    /// Part `n` (from 1), with a first line saying which part it is and where the next
    /// one is (SNAP-9); a snapshot of one part has no such line.
    ///
    /// # Errors
    /// [`PageError::NoSuchPart`] past the last part or for part 0.
    pub fn part(&self, n: usize) -> Result<String, PageError> {
        let parts = self.parts();
        let count = parts.len();
        let Some(text) = n.checked_sub(1).and_then(|i| parts.get(i)) else {
            return Err(PageError::NoSuchPart {
                asked: n,
                parts: count,
            });
        };
        if count == 1 {
            return Ok((*text).to_owned());
        }
        let header = if n == count {
            format!("part {n} of {count} — the last part")
        } else {
            format!("part {n} of {count} — next: browser_read part {}", n + 1)
        };
        Ok(format!("{header}\n{text}"))
    }

    /// The first part, with its header when there are more (what `browser_read` shows;
    /// a new page's first result is [`Snapshot::first_look`]).
    pub fn first_part(&self) -> String {
        self.part(1).unwrap_or_default()
    }

    /// The part (from 1) that holds the byte `offset` of the text.
    pub(crate) fn part_of(&self, offset: usize) -> usize {
        let base = self.text.as_ptr() as usize;
        self.parts()
            .iter()
            .take_while(|p| p.as_ptr() as usize - base <= offset)
            .count()
            .max(1)
    }

    /// A snapshot of `text` alone, for tests of its shaping.
    #[cfg(test)]
    pub(crate) fn of_text(title: &str, url: &str, text: String) -> Snapshot {
        Snapshot {
            title: title.to_owned(),
            url: url.to_owned(),
            text,
            items: Vec::new(),
        }
    }

    /// The lines holding `needle` (case-insensitive) anywhere in the whole snapshot, with
    /// the part each is in (SNAP-11), each with its neighbourhood: the enclosing item, so
    /// the button beside a matching heading is in the answer (issue 11, class 7). Matches
    /// in one item give it once. Secret values are masked in the text, so never found.
    pub fn find(&self, needle: &str) -> Vec<Found> {
        let needle = needle.trim().to_lowercase();
        if needle.is_empty() {
            return Vec::new();
        }
        let parts = self.parts();
        let base = self.text.as_ptr() as usize;
        let starts: Vec<usize> = parts.iter().map(|p| p.as_ptr() as usize - base).collect();
        let lines: Vec<&str> = self.text.split('\n').collect();
        let mut found: Vec<Found> = Vec::new();
        let mut shown: Vec<(usize, usize)> = Vec::new();
        let mut offset = 0;
        for (i, line) in lines.iter().enumerate() {
            if line.to_lowercase().contains(&needle) {
                let range = self.neighbourhood(&lines, i);
                if !shown.contains(&range) {
                    shown.push(range);
                    let part = starts.iter().take_while(|s| **s <= offset).count().max(1);
                    found.push(Found {
                        part,
                        line: line.trim_start().to_owned(),
                        block: relative(&lines[range.0..range.1]),
                    });
                }
            }
            offset += line.len() + 1;
        }
        found
    }

    /// The lines around line `i` that make its item, at most [`NEIGHBOURHOOD_LINES`].
    fn neighbourhood(&self, lines: &[&str], i: usize) -> (usize, usize) {
        let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
        let marked = self
            .items
            .iter()
            .filter(|(s, e)| *s <= i && i < *e)
            .min_by_key(|(s, e)| e - s)
            .copied();
        // The nearest line above that heads an item and holds line i.
        let mut headed = None;
        let mut want = indent(lines[i]);
        for j in (0..i).rev() {
            let ind = indent(lines[j]);
            if ind >= want {
                continue;
            }
            want = ind;
            let body = lines[j].trim_start().strip_prefix("- ").unwrap_or("");
            let role = body.split([' ', ':']).next().unwrap_or("");
            let clickable = role == "generic" && body.contains("[ref=");
            if ITEM_ROLES.contains(&role) || clickable {
                let end = j
                    + 1
                    + lines[j + 1..]
                        .iter()
                        .take_while(|l| indent(l) > ind)
                        .count();
                headed = Some((j, end));
                break;
            }
            if ind == 0 {
                break;
            }
        }
        let range = match (marked, headed) {
            (Some(m), Some(h)) => {
                if m.1 - m.0 <= h.1 - h.0 {
                    m
                } else {
                    h
                }
            }
            (Some(r), None) | (None, Some(r)) => r,
            (None, None) => (i, i + 1),
        };
        if range.1 - range.0 <= NEIGHBOURHOOD_LINES {
            return range;
        }
        let start = i.saturating_sub(NEIGHBOURHOOD_LINES / 2).max(range.0);
        let end = (start + NEIGHBOURHOOD_LINES).min(range.1);
        (end.saturating_sub(NEIGHBOURHOOD_LINES).max(range.0), end)
    }

    /// The first line of a whole snapshot (SNAP-13): the tab, the title and the address.
    pub fn header(&self, tab: &str) -> String {
        format!("Tab {tab}: \"{}\" — {}", self.title, self.url)
    }
}

/// `lines` with their common indentation taken off.
fn relative(lines: &[&str]) -> Vec<String> {
    let common = lines
        .iter()
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .min()
        .unwrap_or(0);
    lines.iter().map(|l| l[common..].to_owned()).collect()
}

/// Who changed the page since the agent last read it (SNAP-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// The agent's own step (an act, a scroll, a wait).
    Agent,
    /// The person, while they had the tab (a takeover).
    Person,
}

/// What changed since the agent last read a tab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Nothing the snapshot shows.
    Nothing,
    /// A small line diff: `- ` lines are gone, `+ ` lines are new, under a first line that
    /// says whose change it is.
    Diff(String),
    /// A new document, or a change too big for a diff: the whole snapshot (show its
    /// [`Snapshot::first_look`]).
    Whole(Snapshot),
}

/// Reads the whole page of `page` (a tab's page session) and makes it the agent's
/// baseline in `reader`.
///
/// # Errors
/// [`PageError::Cdp`] when the browser does not answer, [`PageError::Script`] when the
/// reader fails inside the page.
pub async fn read(page: &Session, reader: &mut Reader) -> Result<Snapshot, PageError> {
    let (document, snapshot) = take(page, reader).await?;
    reader.last = Some(Baseline {
        document,
        snapshot: snapshot.clone(),
    });
    Ok(snapshot)
}

/// Reads the page and says what changed since the agent last read it (SNAP-5, SNAP-6):
/// a diff marked with `who`, the whole snapshot when the document is new or the change is
/// big ([`BIG_DIFF_CHARS`], [`BIG_DIFF_PERCENT`]), or nothing. The new snapshot becomes
/// the baseline.
///
/// # Errors
/// As [`read`].
pub async fn changes_since(
    page: &Session,
    reader: &mut Reader,
    who: Who,
) -> Result<Change, PageError> {
    let (document, snapshot) = take(page, reader).await?;
    let change = match &reader.last {
        Some(last) if last.document == document => {
            if last.snapshot.text == snapshot.text {
                Change::Nothing
            } else {
                match diff(&last.snapshot.text, &snapshot.text, who) {
                    Some(text) => Change::Diff(text),
                    None => Change::Whole(snapshot.clone()),
                }
            }
        }
        _ => Change::Whole(snapshot.clone()),
    };
    reader.last = Some(Baseline { document, snapshot });
    Ok(change)
}

/// The line diff from `old` to `new`, or `None` when it is big (AMB-4).
pub fn diff(old: &str, new: &str, who: Who) -> Option<String> {
    let changes = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .timeout(Duration::from_millis(100))
        .diff_lines(old, new);
    let mut out = String::from(match who {
        Who::Agent => "Changed since the last read (- gone, + new):",
        Who::Person => "The person changed this while they had the tab (- gone, + new):",
    });
    let mut touched = 0usize;
    for change in changes.iter_all_changes() {
        let mark = match change.tag() {
            similar::ChangeTag::Equal => continue,
            similar::ChangeTag::Delete => '-',
            similar::ChangeTag::Insert => '+',
        };
        touched += 1;
        let line = change.value().trim_end_matches('\n').trim_start();
        let _ = write!(out, "\n{mark} {line}");
        if out.len() > BIG_DIFF_CHARS * 4 {
            return None;
        }
    }
    let new_lines = new.lines().count().max(1);
    let big = out.chars().count() > BIG_DIFF_CHARS || touched * 100 > new_lines * BIG_DIFF_PERCENT;
    (!big).then_some(out)
}

/// One read of the whole page: the top document's identity and the snapshot.
async fn take(page: &Session, reader: &mut Reader) -> Result<(String, Snapshot), PageError> {
    // The page's WebSockets are watched from its first read, so that one still opening
    // at the next act is known (issue 30).
    super::world::watch_sockets(page);
    let top = Frame::top(page).await?;
    let read = match read_frame(top, &mut reader.high_water).await {
        Ok(read) => read,
        // The top frame was replaced (a swap of browsing context): find it again, once.
        Err(PageError::Cdp(e)) if matches!(e.kind(), ErrorKind::Protocol { message, .. } if message.contains("frame")) =>
        {
            Frame::forget_top(page);
            read_frame(Frame::top(page).await?, &mut reader.high_water).await?
        }
        Err(e) => return Err(e),
    };
    Ok((
        read.document,
        Snapshot {
            title: read.title,
            url: read.url,
            text: read.text,
            items: read.items,
        },
    ))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRead {
    text: String,
    fields: Vec<RawField>,
    token: String,
    title: String,
    url: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawField {
    input_type: String,
    autocomplete: String,
    label: String,
    name: String,
    id: String,
    placeholder: String,
    value: String,
    obvious: bool,
}

struct FrameRead {
    document: String,
    title: String,
    url: String,
    text: String,
    /// Item ranges (line numbers of `text`).
    items: Vec<(usize, usize)>,
}

/// Waits for a document still being parsed to reach DOMContentLoaded (at most 10 s).
const PARSED_JS: &str = script::body(include_str!("read/parsed.js"));

/// The wait's own bound, a little over the script's.
const PARSED_WAIT: Duration = Duration::from_secs(11);

/// Reads one frame's document and, in turn, the frames its world could not walk.
async fn read_frame(
    frame: Frame,
    high_water: &mut HashMap<String, u64>,
) -> Result<FrameRead, PageError> {
    // The reader goes in first, then learns which elements the page listens on for a
    // click (issue 30), then reads. A document still being parsed (an act's navigation
    // its settle's bound cut short) is read once its body is in, not half of it.
    // The first call also asks whether elements were added since the listener marks were
    // last asked, and, when none was, takes the snapshot itself (issue 32).
    let first = frame.call_reader(&READ_FIRST_JS, Some(high_water)).await?;
    let state = first
        .as_ref()
        .and_then(|v| v.get(0))
        .and_then(Value::as_str);
    let added = first
        .as_ref()
        .and_then(|v| v.get(1))
        .and_then(Value::as_bool);
    let taken = first
        .as_ref()
        .and_then(|v| v.get(2))
        .filter(|v| v.is_object())
        .cloned();
    let value = match taken {
        Some(value) => {
            frame.note_high_water(high_water, &value);
            value
        }
        None => {
            if state == Some("loading") {
                let _ = frame.evaluate_awaiting(PARSED_JS, PARSED_WAIT).await;
                if added == Some(false) {
                    // What the parser added since is asked about again.
                    frame.mark_listened().await;
                } else {
                    frame.mark_listened_if(added).await;
                }
            } else {
                frame.mark_listened_if(added).await;
            }
            frame
                .call_reader("__conch.snapshot()", Some(high_water))
                .await?
                .unwrap_or(Value::Null)
        }
    };
    let raw: RawRead = serde_json::from_value(value)
        .map_err(|e| PageError::Script(format!("the reader's answer did not fit: {e}")))?;

    let mut text = String::with_capacity(raw.text.len() + 64);
    let mut count = 0usize;
    let mut items = Vec::new();
    let mut open = Vec::new();
    for line in raw.text.split('\n') {
        match line {
            "\u{3}" => {
                open.push(count);
                continue;
            }
            "\u{4}" => {
                if let Some(start) = open.pop() {
                    items.push((start, count));
                }
                continue;
            }
            _ => {}
        }
        let body = line.trim_start_matches(' ');
        let indent = &line[..line.len() - body.len()];
        if let Some(n) = body.strip_prefix('\u{1}') {
            let Ok(n) = n.parse::<u64>() else { continue };
            let Some((child, _)) = frame.child(n).await? else {
                continue;
            };
            // A frame that cannot be read (still loading, crashed, gone) shows as empty.
            let Ok(inner) = Box::pin(read_frame(child, high_water)).await else {
                continue;
            };
            if inner.text.is_empty() {
                continue;
            }
            let prefixed = format!("[ref=f{n}");
            items.extend(inner.items.iter().map(|(s, e)| (s + count, e + count)));
            for child_line in inner.text.split('\n') {
                push_line(
                    &mut text,
                    &format!("{indent}{}", child_line.replace("[ref=", &prefixed)),
                );
                count += 1;
            }
            continue;
        }
        if let Some((head, marker)) = line.split_once('\u{2}') {
            let field = marker.parse::<usize>().ok().and_then(|i| raw.fields.get(i));
            let mut shown = head.to_owned();
            if let Some(field) = field {
                shown.push_str(&field_value(field));
            }
            push_line(&mut text, &shown);
            count += 1;
            continue;
        }
        push_line(&mut text, line);
        count += 1;
    }
    Ok(FrameRead {
        document: raw.token,
        title: raw.title,
        url: raw.url,
        text,
        items,
    })
}

fn push_line(text: &mut String, line: &str) {
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(line);
}

/// How a field's value shows: masked for a secret field (SEC-3), as is otherwise.
fn field_value(field: &RawField) -> String {
    let facts = FieldFacts {
        input_type: field.input_type.clone(),
        autocomplete: field.autocomplete.clone(),
        label: field.label.clone(),
        name: field.name.clone(),
        id: field.id.clone(),
        placeholder: field.placeholder.clone(),
    };
    let secret = field.obvious || classify_field(&facts).is_secret();
    match (secret, field.value.is_empty()) {
        (true, true) => " [secret]".to_owned(),
        (true, false) => format!(" [secret]: {MASK}"),
        (false, true) => String::new(),
        (false, false) => format!(": {}", field.value.replace("[ref=", "[ref =")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(lines: usize) -> String {
        (1..=lines)
            .map(|i| format!("- button \"Item {i}\" [ref=e{i}]"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// SNAP-5: one changed line is one removed and one added line, nothing else.
    #[test]
    fn diff_of_one_line_is_two_lines() {
        let old = page(100);
        let new = old.replace("\"Item 50\"", "\"Item fifty\"");
        let diff = diff(&old, &new, Who::Agent).unwrap();
        assert_eq!(
            diff,
            "Changed since the last read (- gone, + new):\n- - button \"Item 50\" [ref=e50]\n+ - button \"Item fifty\" [ref=e50]"
        );
        let theirs = diff_for_person(&old, &new);
        assert!(theirs.starts_with("The person changed"));
    }

    fn diff_for_person(old: &str, new: &str) -> String {
        diff(old, new, Who::Person).unwrap()
    }

    /// AMB-4: over half the lines, or over 4,000 characters, is a big change.
    #[test]
    fn big_changes_are_not_diffs() {
        let old = page(10);
        let new = old.replace("Item", "Thing");
        assert_eq!(diff(&old, &new, Who::Agent), None);
        let old = page(2_000);
        let new: String = old
            .lines()
            .map(|l| {
                if l.ends_with("0]") {
                    format!("{l} changed")
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        // 200 of 2,000 lines changed: under half, but far over 4,000 characters.
        assert_eq!(diff(&old, &new, Who::Agent), None);
    }

    /// SNAP-9, SNAP-11: a one-part snapshot has no part header; find names the part.
    #[test]
    fn parts_and_find() {
        let small = Snapshot {
            title: "t".to_owned(),
            url: "u".to_owned(),
            text: page(3),
            items: Vec::new(),
        };
        assert_eq!(small.part(1).unwrap(), small.text);
        assert_eq!(small.first_part(), small.text);
        assert!(small.part(0).is_err());
        assert_eq!(small.find("item 2")[0].part, 1);
        assert!(small.find("  ").is_empty());
        let big = Snapshot {
            title: "t".to_owned(),
            url: "u".to_owned(),
            text: page(2_000),
            items: Vec::new(),
        };
        let parts = big.parts();
        assert!(parts.len() > 2);
        let last_line_of_part_2 = parts[1].trim_end().lines().last().unwrap().trim();
        let found = big.find(last_line_of_part_2);
        assert_eq!(found.last().unwrap().part, 2, "{found:?}");
        assert_eq!(big.header("t3"), "Tab t3: \"t\" — u");
    }

    /// Issue 11, class 7 (SNAP-11): a match comes with its item: a list item's lines, a
    /// marked card's lines (once for two matches in it), at most eight lines of a long
    /// form around the match, and the line alone outside any item.
    #[test]
    fn snap_11_find_gives_each_match_its_neighbourhood() {
        let mut lines = vec![
            "- main:".to_owned(),
            "  - list:".to_owned(),
            "    - listitem:".to_owned(),
            "      - text: Thing 1".to_owned(),
            "      - button \"Add thing 1\" [ref=e1]".to_owned(),
            "    - listitem:".to_owned(),
            "      - text: Thing 2".to_owned(),
            "      - button \"Add thing 2\" [ref=e2]".to_owned(),
            "  - img \"Tent photo\"".to_owned(),
            "  - heading \"Tent\" [level=2] [ref=e3] -> /tent".to_owned(),
            "  - button \"Add to cart\" [ref=e4]".to_owned(),
            "  - img \"Pack photo\"".to_owned(),
            "  - heading \"Pack\" [level=2] [ref=e5] -> /pack".to_owned(),
            "  - button \"Add to cart\" [ref=e6]".to_owned(),
            "  - form \"Sign up\":".to_owned(),
        ];
        for i in 0..12 {
            lines.push(format!("    - textbox \"Field {i}\" [ref=e{}]", 10 + i));
        }
        lines.push("- contentinfo: Footer words".to_owned());
        let snap = Snapshot {
            title: "t".to_owned(),
            url: "u".to_owned(),
            text: lines.join("\n"),
            items: vec![(8, 11), (11, 14)],
        };
        let found = snap.find("thing 2");
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].block,
            [
                "- listitem:",
                "  - text: Thing 2",
                "  - button \"Add thing 2\" [ref=e2]"
            ]
        );
        let found = snap.find("pack");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].line, "- img \"Pack photo\"");
        assert_eq!(found[0].block.len(), 3);
        assert_eq!(found[0].block[2], "- button \"Add to cart\" [ref=e6]");
        let found = snap.find("Field 9");
        assert_eq!(found[0].block.len(), NEIGHBOURHOOD_LINES);
        assert!(found[0].block.iter().any(|l| l.contains("Field 9")));
        let found = snap.find("footer");
        assert_eq!(found[0].block, ["- contentinfo: Footer words"]);
    }
}
