//! The first look at a new page (SNAP-6, issue 11): what an open, a new tab or an act that
//! loads a new document shows the agent, instead of a whole 16,000-character part.
//!
//! A snapshot that fits in [`FIRST_LOOK_CHARS`] is shown whole. A longer one is shaped so
//! the agent can still act without reading again:
//!
//! - every line that carries a ref (controls, links, fields with their values), every
//!   heading, alert and status, and a select's `- options:` line is kept;
//! - a landmark, form, dialog, frame, tab list, menu or toolbar line is kept when it holds
//!   one of those, so a control is seen in its place;
//! - the top of the page's text is kept, in document order, as far as the bound allows;
//! - every other run of lines becomes one `- … N lines` line at its place (a single line
//!   is left out without a mark, which would cost as much as the line).
//!
//! When the kept lines alone are over the bound, the look ends at a line boundary and says
//! at which part the rest begins. The look always ends with one line of Conch's saying how
//! many lines it shows and how to read the rest (`browser_read`, its parts, find). Lines
//! are never cut or altered, so every ref in the look is the snapshot's own.
//!
//! Deliberately absent: diffs and explicit reads, which are never shaped.

use conch_policy::FIRST_LOOK_CHARS;

use super::read::Snapshot;

/// Characters kept back from the bound for the closing line.
const CLOSING_CHARS: usize = 320;

/// At least this many characters of the top of the page's text are shown, so a message
/// at the top (an error, a count, "Cart: 2 items") is seen with the controls.
const TOP_CHARS: usize = 1_200;

/// Roles whose line is kept wherever it is.
const ALWAYS: &[&str] = &["heading", "alert", "status", "options"];

/// Roles whose line is kept when it holds a line that is kept wherever it is.
const CONTAINERS: &[&str] = &[
    "banner",
    "navigation",
    "main",
    "contentinfo",
    "complementary",
    "region",
    "search",
    "form",
    "dialog",
    "alertdialog",
    "iframe",
    "tablist",
    "menu",
    "menubar",
    "toolbar",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Kept wherever it is: a ref, a heading, an alert, the options of a select.
    Key,
    /// Text or structure, kept only while the top of the page fits.
    Text,
    /// A line of structure alone (`- listitem:`): dropped without being counted.
    Bare,
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn role(line: &str) -> &str {
    let body = line.trim_start().strip_prefix("- ").unwrap_or("");
    body.split([' ', ':']).next().unwrap_or("")
}

/// Each line's kind: keys, containers that hold a key, text and bare structure.
fn kinds(lines: &[&str]) -> Vec<Kind> {
    let mut kinds: Vec<Kind> = lines
        .iter()
        .map(|line| {
            let body = line.trim_start();
            if body.contains("[ref=") || ALWAYS.contains(&role(line)) {
                Kind::Key
            } else if body
                .strip_prefix("- ")
                .and_then(|b| b.strip_suffix(':'))
                .is_some_and(|r| !r.contains([' ', '"', ':']))
            {
                Kind::Bare
            } else {
                Kind::Text
            }
        })
        .collect();
    // The open ancestors of each line; a key marks the containers above it.
    let mut open: Vec<usize> = Vec::new();
    let mut holds_key = vec![false; lines.len()];
    for (i, line) in lines.iter().enumerate() {
        let depth = indent(line);
        while open.last().is_some_and(|&a| indent(lines[a]) >= depth) {
            open.pop();
        }
        if kinds[i] == Kind::Key {
            for &a in open.iter().rev() {
                if holds_key[a] {
                    break;
                }
                holds_key[a] = true;
            }
        }
        open.push(i);
    }
    for (i, line) in lines.iter().enumerate() {
        if holds_key[i] && CONTAINERS.contains(&role(line)) {
            kinds[i] = Kind::Key;
        }
    }
    kinds
}

/// The lines shown for a look that stops before line `end` and keeps the text of the
/// lines before `top`, with the left-out runs as `- … N lines`; and how many it shows.
fn assemble(lines: &[&str], kinds: &[Kind], end: usize, top: usize) -> (String, usize) {
    let mut out = String::new();
    let mut shown = 0;
    let mut run = 0;
    let mut run_indent = 0;
    // A run of one line goes without a mark: the mark would cost as much as the line.
    let flush = |out: &mut String, run: &mut usize, run_indent: usize| {
        if *run > 1 {
            out.push_str(&" ".repeat(run_indent));
            out.push_str(&format!("- … {run} lines\n"));
        }
        *run = 0;
    };
    for (i, line) in lines.iter().enumerate().take(end) {
        let keep = kinds[i] == Kind::Key || (i < top && kinds[i] == Kind::Text);
        if keep {
            flush(&mut out, &mut run, run_indent);
            out.push_str(line);
            out.push('\n');
            shown += 1;
        } else if kinds[i] == Kind::Text {
            if run == 0 {
                run_indent = indent(line);
            }
            run += 1;
        }
    }
    flush(&mut out, &mut run, run_indent);
    (out, shown)
}

/// The largest `n` in `0..=max` for which `fits(n)`, given `fits(0)`.
fn largest(max: usize, fits: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, max);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) { lo = mid } else { hi = mid - 1 }
    }
    lo
}

impl Snapshot {
    /// The first look at this page (SNAP-6, issue 11): the whole snapshot when it fits in
    /// [`FIRST_LOOK_CHARS`], else its controls, links, headings and the top of its text,
    /// with a closing line on how to read the rest. See the module.
    pub fn first_look(&self) -> String {
        if self.text.chars().count() <= FIRST_LOOK_CHARS {
            return self.text.clone();
        }
        let lines: Vec<&str> = self.text.split('\n').collect();
        let kinds = kinds(&lines);
        let bound = FIRST_LOOK_CHARS - CLOSING_CHARS;
        let size = |end: usize, top: usize| assemble(&lines, &kinds, end, top).0.chars().count();
        let total = lines.len();
        // The top of the text is shown even when the controls alone fill the look.
        let mut text_chars = 0;
        let top_min = lines
            .iter()
            .zip(&kinds)
            .position(|(line, kind)| {
                if *kind == Kind::Text {
                    text_chars += line.chars().count() + 1;
                }
                text_chars > TOP_CHARS
            })
            .unwrap_or(total);
        let (end, top) = if size(total, top_min) <= bound {
            (
                total,
                largest(total, |top| size(total, top) <= bound).max(top_min),
            )
        } else {
            (largest(total, |end| size(end, top_min) <= bound), top_min)
        };
        let (mut look, shown) = assemble(&lines, &kinds, end, top);
        let parts = self.part_count();
        let all = if parts == 1 {
            "browser_read".to_owned()
        } else {
            format!("browser_read ({parts} parts)")
        };
        let closing = if end < total {
            let offset: usize = lines[..end].iter().map(|l| l.len() + 1).sum();
            let part = self.part_of(offset);
            format!(
                "First look: lines 1–{end} of {total}, shortened to {shown} (controls, links, headings, the top of the text). The rest: browser_read part {part} of {parts} (from line {}), or browser_read {{find: \"words\"}}.",
                end + 1
            )
        } else {
            format!(
                "First look: {total} lines shortened to {shown} (every control, link and heading, the top of the text; \"- … N lines\" marks longer runs of text left out). All of it: {all}, or browser_read {{find: \"words\"}}."
            )
        };
        look.push_str(&closing);
        look
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(text: String) -> Snapshot {
        Snapshot::of_text("Shop", "http://127.0.0.1/shop", text)
    }

    fn shop(products: usize) -> String {
        let mut text = String::from(
            "- banner:\n  - link \"Shop\" [ref=e1] -> /\n  - navigation:\n    - link \"Deals\" [ref=e2] -> /deals\n- main:\n  - heading \"All products\" [level=1]\n",
        );
        for i in 1..=products {
            text.push_str(&format!(
                "  - heading \"Product {i}\" [level=2] [ref=e{}] -> /product/{i}\n  - paragraph: A fine product, number {i}, with words that describe it at length.\n  - text: $12.{i}\n  - button \"Add to cart\" [ref=e{}]\n",
                2 * i + 1,
                2 * i + 2
            ));
        }
        text.push_str("- contentinfo:\n  - paragraph: © Fixture Shop");
        text
    }

    #[test]
    fn snap_6_a_page_that_fits_is_its_whole_snapshot() {
        let text = shop(3);
        assert_eq!(snapshot(text.clone()).first_look(), text);
    }

    #[test]
    fn snap_6_a_first_look_keeps_every_ref_and_heading_and_counts_what_it_leaves_out() {
        let text = shop(30);
        assert!(text.chars().count() > FIRST_LOOK_CHARS);
        let look = snapshot(text.clone()).first_look();
        assert!(look.chars().count() <= FIRST_LOOK_CHARS, "{look}");
        for line in text.lines() {
            if line.contains("[ref=") || line.contains("- heading") {
                assert!(
                    look.contains(&format!("{line}\n")),
                    "{line} missing:\n{look}"
                );
            }
        }
        // The landmarks around the controls are kept; the top of the text is shown.
        assert!(look.starts_with("- banner:\n"), "{look}");
        assert!(look.contains("- main:\n"), "{look}");
        assert!(look.contains("number 1, with words"), "{look}");
        // Text further down is left out and counted; the footer says how to read it.
        assert!(!look.contains("number 30, with words"), "{look}");
        assert!(look.contains("  - … 2 lines\n"), "{look}");
        // A single line left out has no mark; the footer's landmark holds no control.
        assert!(!look.contains("Fixture Shop"), "{look}");
        assert!(!look.contains("contentinfo"), "{look}");
        let last = look.lines().last().unwrap_or_default();
        assert!(last.starts_with("First look: "), "{last}");
        assert!(last.contains("browser_read"), "{last}");
        assert!(last.contains("find"), "{last}");
    }

    #[test]
    fn snap_6_a_first_look_too_long_for_its_controls_ends_at_a_line_and_names_the_part() {
        let text = shop(400);
        let snap = snapshot(text.clone());
        let look = snap.first_look();
        assert!(look.chars().count() <= FIRST_LOOK_CHARS, "{}", look.len());
        assert!(look.contains("- button \"Add to cart\" [ref=e4]\n"));
        assert!(!look.contains("Product 400\""));
        // The top of the text is there even though the controls fill the look.
        assert!(look.contains("number 1, with words"), "{look}");
        let last = look.lines().last().unwrap_or_default();
        assert!(
            last.contains(&format!("browser_read part 1 of {}", snap.part_count())),
            "{last}"
        );
        // Every line but the closing one is a line of the snapshot, in order.
        let mut rest = text.as_str();
        for line in look.lines().filter(|l| !l.starts_with("First look:")) {
            if line.trim_start().starts_with("- … ") {
                continue;
            }
            let at = rest.find(line).unwrap_or_else(|| panic!("{line}"));
            rest = &rest[at + line.len()..];
        }
    }
}
