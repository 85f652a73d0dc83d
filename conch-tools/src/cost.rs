//! What each result costs the agent's context (issue 31): its size in characters and an
//! estimate of tokens ([`Cost`]), the conversation's running total ([`Spent`]), and the
//! person's budget, which makes the step that would pass it answer with one sentence
//! instead of the page ([`Meter::account`]).
//!
//! The token estimate ([`TOKEN_METHOD`]) is a rule, not a tokenizer: no tokenizer's
//! vocabulary is on the machines this is built on, and the common ones differ from each
//! other by more than the rule's error. Each ASCII character is a quarter of a token
//! (the usual chars/4 of English text and markup); every other character is a whole
//! token (right for CJK, an over-estimate for accented Latin, which real tokenizers
//! often merge); a PNG picture costs width × height / 750 tokens (the documented rule
//! of one vision model family), read from its header. Known error: on English prose
//! chars/4 is within about ±25% of the real tokenizers; on dense markup, numbers and
//! addresses it under-counts (those split into shorter tokens).
//!
//! The budget is the person's, never the agent's: it is set by the embedder's
//! configuration ([`crate::ToolsConfig::budget_chars`], the gateway's `--budget-chars`)
//! and per conversation by [`crate::Tools::set_budget`] (the panel). No tool argument
//! reaches it.
//!
//! A step that would pass the budget still happens (a click clicks, a form is filled,
//! never half an act); only what it would give back (the page text, its notes, a
//! picture) is withheld, and the result says so with what was spent and how to read
//! less. The sentence itself counts toward the total, as it sits in the context too.
//!
//! Deliberately absent: counting the protocol's envelope (`_meta`, JSON quoting), which
//! clients do not put in the model's context.

use std::sync::Mutex as StdMutex;

use conch_browser::sync::lock;
use serde_json::{Value, json};

use crate::result::{Content, ToolResult};

/// The `_meta` key a result's cost goes under.
pub const COST_META: &str = "dev.conch/cost";

/// How [`Cost::tokens`] is estimated, as `_meta` and the README name it.
pub const TOKEN_METHOD: &str = "ascii/4 + 1 per other char + png w*h/750";

/// What one result (or a conversation so far) costs the context.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    /// Characters of text (Unicode scalar values), pictures not included.
    pub chars: u64,
    /// The estimate of tokens, text and pictures, by [`TOKEN_METHOD`].
    pub tokens: u64,
}

impl Cost {
    /// The cost of `text`.
    pub fn of_text(text: &str) -> Cost {
        let (mut ascii, mut other) = (0u64, 0u64);
        for c in text.chars() {
            if c.is_ascii() {
                ascii += 1;
            } else {
                other += 1;
            }
        }
        Cost {
            chars: ascii + other,
            tokens: ascii.div_ceil(4) + other,
        }
    }

    /// The cost of a result's content: its text blocks and its pictures.
    pub fn of(content: &[Content]) -> Cost {
        content.iter().fold(Cost::default(), |sum, c| {
            sum.plus(match c {
                Content::Text(text) => Cost::of_text(text),
                Content::Image { data, .. } => Cost {
                    chars: 0,
                    tokens: image_tokens(data),
                },
            })
        })
    }

    /// The two costs added.
    #[must_use]
    pub fn plus(self, other: Cost) -> Cost {
        Cost {
            chars: self.chars.saturating_add(other.chars),
            tokens: self.tokens.saturating_add(other.tokens),
        }
    }
}

/// A base64 PNG's tokens, width × height / 750 from its header (`IHDR` at bytes 16..24);
/// a picture whose header can't be read counts as 1,600 tokens (a 1,200,000-pixel one).
fn image_tokens(base64: &str) -> u64 {
    const UNKNOWN: u64 = 1600;
    // 24 bytes are the first 32 base64 characters.
    let Some(head) = base64.get(..32) else {
        return UNKNOWN;
    };
    let Some(bytes) = conch_browser::page::base64::decode(head) else {
        return UNKNOWN;
    };
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" || &bytes[12..16] != b"IHDR" {
        return UNKNOWN;
    }
    let width = u64::from(u32::from_be_bytes([
        bytes[16], bytes[17], bytes[18], bytes[19],
    ]));
    let height = u64::from(u32::from_be_bytes([
        bytes[20], bytes[21], bytes[22], bytes[23],
    ]));
    (width.saturating_mul(height) / 750).max(1)
}

/// The conversation's running total once a result is counted, as the result carries it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    /// Everything the conversation's results cost so far, this one included.
    pub total: Cost,
    /// The conversation's budget in characters, if it has one.
    pub budget: Option<u64>,
    /// Whether this result is the budget's sentence, the step's own text withheld.
    pub withheld: bool,
}

/// One conversation's meter: what its results cost so far and its budget.
#[derive(Debug, Default)]
pub(crate) struct Meter {
    spent: StdMutex<Cost>,
    budget: StdMutex<Option<u64>>,
}

impl Meter {
    /// A meter with the embedder's default budget.
    pub(crate) fn new(budget: Option<u64>) -> Meter {
        Meter {
            spent: StdMutex::new(Cost::default()),
            budget: StdMutex::new(budget),
        }
    }

    /// What the conversation spent so far.
    pub(crate) fn spent(&self) -> Cost {
        *lock(&self.spent)
    }

    /// The conversation's budget in characters.
    pub(crate) fn budget(&self) -> Option<u64> {
        *lock(&self.budget)
    }

    /// Adds `cost` to the total (text an embedder put in a result); gives the new total.
    pub(crate) fn add(&self, cost: Cost) -> Cost {
        let mut spent = lock(&self.spent);
        *spent = spent.plus(cost);
        *spent
    }

    /// Sets the budget (`None`: none).
    pub(crate) fn set_budget(&self, budget: Option<u64>) {
        *lock(&self.budget) = budget;
    }

    /// Counts `result` of tool `tool`: a result that would take the total past the budget
    /// becomes the budget's sentence (an error's one sentence always passes: it is what
    /// the agent needs to go on). The result comes back with the running total.
    pub(crate) fn account(&self, tool: &str, mut result: ToolResult) -> ToolResult {
        let budget = self.budget();
        let mut spent = lock(&self.spent);
        let mut cost = Cost::of(&result.content);
        let mut withheld = false;
        if let Some(budget) = budget
            && !result.is_error
            && spent.chars.saturating_add(cost.chars) > budget
        {
            result = ToolResult {
                content: vec![Content::Text(over_budget(tool, cost, *spent, budget))],
                is_error: false,
                spent: None,
            };
            cost = Cost::of(&result.content);
            withheld = true;
        }
        *spent = spent.plus(cost);
        result.spent = Some(Spent {
            total: *spent,
            budget,
            withheld,
        });
        result
    }
}

/// The sentence a step gets instead of its result when that would pass the budget.
fn over_budget(tool: &str, cost: Cost, spent: Cost, budget: u64) -> String {
    let done = match crate::spec::tool_spec(tool) {
        Some(spec) if !spec.read_only => format!("{tool} was done; its result"),
        _ => format!("{tool}'s result"),
    };
    format!(
        "{done} ({} characters, about {} tokens) is withheld: it would pass this conversation's budget of {} characters, of which {} are spent (about {} tokens). Read less: browser_read with `find` gives only the rows with the words you need, and browser_read with `part` one part of a long page; the person can raise the budget on the panel.",
        group(cost.chars),
        group(cost.tokens),
        group(budget),
        group(spent.chars),
        group(spent.tokens),
    )
}

/// `n` with thousands separated by commas (`12,345`).
pub(crate) fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The running total in one short line ("12,345 characters (about 3,100 tokens) of
/// 50,000"), as the status and the panel say it.
pub fn spent_line(spent: Cost, budget: Option<u64>) -> String {
    let of = budget.map_or(String::new(), |b| {
        format!(" of a {}-character budget", group(b))
    });
    format!(
        "{} characters (about {} tokens){of}",
        group(spent.chars),
        group(spent.tokens)
    )
}

/// A result's cost as its `_meta` carries it under [`COST_META`].
pub(crate) fn meta(result: &ToolResult) -> Value {
    let cost = result.cost();
    let mut meta = json!({
        "chars": cost.chars,
        "tokens": cost.tokens,
        "method": TOKEN_METHOD,
    });
    if let Some(spent) = result.spent {
        meta["total"] = json!({ "chars": spent.total.chars, "tokens": spent.total.tokens });
        if let Some(budget) = spent.budget {
            meta["budgetChars"] = json!(budget);
        }
        if spent.withheld {
            meta["withheld"] = json!(true);
        }
    }
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 31: ASCII is a quarter token a character, anything else a whole one.
    #[test]
    fn cost_1_text_costs_chars_and_a_token_estimate() {
        assert_eq!(Cost::of_text(""), Cost::default());
        assert_eq!(
            Cost::of_text("abcde"),
            Cost {
                chars: 5,
                tokens: 2
            }
        );
        assert_eq!(
            Cost::of_text("日本語"),
            Cost {
                chars: 3,
                tokens: 3
            }
        );
        assert_eq!(group(1_234_567), "1,234,567");
        assert_eq!(group(12), "12");
    }

    /// Issue 31: a PNG's tokens come from its header's size.
    #[test]
    fn cost_2_a_picture_costs_its_pixels() {
        // 750 × 100 pixels: 100 tokens.
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend_from_slice(&750u32.to_be_bytes());
        png.extend_from_slice(&100u32.to_be_bytes());
        let data = conch_browser::page::base64::encode(&png);
        assert_eq!(image_tokens(&data), 100);
        assert_eq!(image_tokens("not a picture"), 1600);
    }
}
