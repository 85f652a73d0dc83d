//! What a tool call gives back: [`ToolResult`], text and at most one image, bounded
//! (TOOL-10, TOOL-12, TOOL-17, SNAP-9, SNAP-13, TAB-4).
//!
//! The text is Conch's own sentences first, then the page content (and the page's dialog
//! words) wrapped as untrusted data (conch-policy's [`wrap_untrusted`]: the page cannot
//! forge the end marker), then the footer: notes (new tabs, dialogs, blocked requests) and the
//! tab list once there are two or more tabs. Page content is at most 16,000 characters
//! per result.
//!
//! Deliberately absent: typed values and file contents, which never enter a result.

use conch_policy::{PART_CHARS, neutralise, wrap_untrusted};
use serde_json::{Value, json};

use crate::cost::{COST_META, Cost, Spent};

/// One piece of a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Text for the model.
    Text(String),
    /// A picture, base64 encoded.
    Image {
        /// The base64 bytes.
        data: String,
        /// The MIME type, `image/png`.
        mime_type: String,
    },
}

/// The result of one tool call, the same for every door.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// Text first, then an image for browser_screenshot.
    pub content: Vec<Content>,
    /// Whether the call was refused or failed (its text is then one sentence naming the
    /// next step).
    pub is_error: bool,
    /// The conversation's running total once this result was counted (issue 31); `None`
    /// for a result no conversation counted.
    pub spent: Option<Spent>,
}

impl ToolResult {
    /// A refusal or failure: one sentence (TOOL-15).
    pub fn error(sentence: impl Into<String>) -> Self {
        ToolResult {
            content: vec![Content::Text(sentence.into())],
            is_error: true,
            spent: None,
        }
    }

    /// What this result costs the context: its characters and an estimate of tokens
    /// ([`crate::cost::TOKEN_METHOD`]); the conversation's total is [`ToolResult::spent`].
    pub fn cost(&self) -> Cost {
        Cost::of(&self.content)
    }

    /// All the text of the result, joined by blank lines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                Content::Text(text) => Some(text.as_str()),
                Content::Image { .. } => None,
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// The result as MCP's `tools/call` answer, in either era: its cost (and the
    /// conversation's total) in `_meta` under [`crate::cost::COST_META`].
    pub fn to_mcp(&self) -> Value {
        let content: Vec<Value> = self
            .content
            .iter()
            .map(|c| match c {
                Content::Text(text) => json!({ "type": "text", "text": text }),
                Content::Image { data, mime_type } => {
                    json!({ "type": "image", "data": data, "mimeType": mime_type })
                }
            })
            .collect();
        json!({
            "content": content,
            "isError": self.is_error,
            "_meta": { COST_META: crate::cost::meta(self) },
        })
    }
}

/// Page content for a result: a whole snapshot (with its header), one part, or a diff.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageBody {
    /// The content, at most [`PART_CHARS`] characters of page text (a part carries its
    /// own "part 1 of 3 — next: browser_read part 2" line, SNAP-9).
    pub(crate) text: String,
}

impl PageBody {
    /// Any page text, cut to the bound at a character boundary.
    pub(crate) fn bounded(text: &str) -> PageBody {
        let text = match text.char_indices().nth(PART_CHARS) {
            Some((cut, _)) => text[..cut].to_owned(),
            None => text.to_owned(),
        };
        PageBody { text }
    }
}

/// What a call produced, before it is framed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reply {
    /// Conch's own sentences, first.
    pub(crate) lines: Vec<String>,
    /// Page content, wrapped as untrusted.
    pub(crate) page: Option<PageBody>,
    /// A picture (base64 PNG).
    pub(crate) image: Option<String>,
}

impl Reply {
    /// A reply of one sentence.
    pub(crate) fn line(sentence: impl Into<String>) -> Reply {
        Reply {
            lines: vec![sentence.into()],
            ..Reply::default()
        }
    }

    /// A reply with page content.
    pub(crate) fn page(page: PageBody) -> Reply {
        Reply {
            page: Some(page),
            ..Reply::default()
        }
    }
}

/// A tab as the footer names it.
#[derive(Debug, Clone)]
pub(crate) struct TabLine {
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) active: bool,
}

/// Frames a reply: sentences, wrapped page text, part line, notes, tabs (TOOL-17).
pub(crate) fn compose(
    reply: Reply,
    notes: &[String],
    page_notes: &[String],
    tabs: &[TabLine],
    is_error: bool,
) -> ToolResult {
    // Conch's sentences may quote a control's or an option's words: page text that must
    // not forge the wrapper's markers either.
    let mut blocks: Vec<String> = reply
        .lines
        .iter()
        .map(|line| neutralise(line).into_owned())
        .collect();
    let mut page_text = String::new();
    if let Some(page) = &reply.page {
        page_text.push_str(&page.text);
    }
    if !page_notes.is_empty() {
        if !page_text.is_empty() && !page_text.ends_with('\n') {
            page_text.push('\n');
        }
        page_text.push_str(&page_notes.join("\n"));
    }
    if reply.page.is_some() || !page_notes.is_empty() {
        blocks.push(wrap_untrusted(&page_text));
    }
    if !notes.is_empty() {
        blocks.push(notes.join("\n"));
    }
    if tabs.len() >= 2 {
        let named: Vec<String> = tabs
            .iter()
            .map(|t| {
                let title: String = neutralise(&t.title).chars().take(60).collect();
                let active = if t.active { " (active)" } else { "" };
                format!("{} “{}”{active}", t.id, title.replace(['\n', '\r'], " "))
            })
            .collect();
        blocks.push(format!("Tabs: {}.", named.join(", ")));
    }
    let mut content = vec![Content::Text(blocks.join("\n\n"))];
    if let Some(data) = reply.image {
        content.push(Content::Image {
            data,
            mime_type: "image/png".to_owned(),
        });
    }
    ToolResult {
        content,
        is_error,
        spent: None,
    }
}
