//! A tool call read from JSON arguments: [`ToolCall`], its act kind for the permit flow
//! (TOOL-5, PERM-14), and its caption for the live view and the transcript (TOOL-6).
//!
//! Reading is lenient where a weak model tends to slip: unknown arguments are ignored, and
//! numbers may come as strings ("3"). A call that doesn't fit is one sentence naming the
//! fix.
//!
//! Deliberately absent: a caption never holds a typed value or a file's contents.

use conch_policy::ActKind;
use serde::Deserialize;
use serde_json::Value;

use crate::error::ToolError;

/// How browser_click and browser_click_at press.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum How {
    /// One left click (the default).
    #[default]
    Click,
    /// A double click.
    Double,
    /// A right click.
    Right,
    /// Move the pointer over it: reading (GES-3).
    Hover,
    /// Press, move to the drop target, release.
    Drag,
}

impl How {
    /// The act kind this way of clicking is (TOOL-5).
    pub fn act(self) -> ActKind {
        match self {
            How::Click => ActKind::Click,
            How::Double => ActKind::DoubleClick,
            How::Right => ActKind::RightClick,
            How::Hover => ActKind::Hover,
            How::Drag => ActKind::Drag,
        }
    }
}

/// Which way browser_scroll goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Further down the page (the default).
    #[default]
    Down,
    /// Back up.
    Up,
}

/// What browser_tabs does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TabAction {
    /// List the conversation's tabs.
    List,
    /// Open a tab with an address or a search.
    Open,
    /// Make another tab active.
    Switch,
    /// Close a tab.
    Close,
}

/// One field of browser_form.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FormField {
    /// The field's ref.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The value: text, an option, or `true`/`false` for a box.
    #[serde(deserialize_with = "lenient_text")]
    pub value: String,
}

/// One call of one of the fifteen tools, with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCall {
    /// browser_open.
    Open {
        /// The address.
        url: String,
    },
    /// browser_read.
    Read {
        /// Which part, from 1.
        part: Option<u32>,
        /// Text to find on the whole page.
        find: Option<String>,
    },
    /// browser_click.
    Click {
        /// The element.
        reference: String,
        /// How to click.
        how: How,
        /// The drop target, for a drag.
        to: Option<String>,
    },
    /// browser_type.
    Type {
        /// The field.
        reference: String,
        /// The text that replaces its contents.
        text: String,
        /// Whether Enter is pressed in the field after the text, judged as browser_press
        /// Enter there is (issue 30, HS-8).
        submit: bool,
    },
    /// browser_press.
    Press {
        /// The key or chord.
        key: String,
        /// The element, else the focused one.
        reference: Option<String>,
    },
    /// browser_select.
    Select {
        /// The list.
        reference: String,
        /// Option labels or values.
        values: Vec<String>,
    },
    /// browser_scroll.
    Scroll {
        /// Which way.
        direction: Direction,
        /// The element to scroll, else the page.
        reference: Option<String>,
        /// How many screens.
        amount: f64,
    },
    /// browser_back.
    Back,
    /// browser_screenshot.
    Screenshot,
    /// browser_wait.
    Wait {
        /// Text to wait for.
        text: Option<String>,
        /// Text to wait to disappear.
        gone: Option<String>,
        /// At most this many seconds.
        seconds: Option<f64>,
    },
    /// browser_handoff.
    Handoff {
        /// What the person should do.
        reason: String,
    },
    /// browser_tabs.
    Tabs {
        /// What to do.
        action: TabAction,
        /// Address to open.
        url: Option<String>,
        /// Words to search for.
        search: Option<String>,
        /// The tab to switch to or close.
        tab: Option<String>,
    },
    /// browser_click_at.
    ClickAt {
        /// Screenshot x.
        x: f64,
        /// Screenshot y.
        y: f64,
        /// How to click.
        how: How,
        /// Drop point, for a drag.
        to: Option<(f64, f64)>,
        /// Text to type after clicking.
        text: Option<String>,
        /// What the agent says is there.
        description: String,
    },
    /// browser_upload.
    Upload {
        /// The file box or its button.
        reference: String,
        /// The files, as paths.
        files: Vec<String>,
    },
    /// browser_form.
    Form {
        /// The fields to fill.
        fields: Vec<FormField>,
    },
}

#[derive(Deserialize)]
struct OpenArgs {
    #[serde(deserialize_with = "lenient_text")]
    url: String,
}

#[derive(Deserialize)]
struct ReadArgs {
    #[serde(default, deserialize_with = "lenient_opt_number")]
    part: Option<f64>,
    #[serde(default)]
    find: Option<String>,
}

#[derive(Deserialize)]
struct ClickArgs {
    #[serde(rename = "ref")]
    reference: String,
    #[serde(default)]
    how: Option<How>,
    #[serde(default)]
    to: Option<String>,
}

#[derive(Deserialize)]
struct TypeArgs {
    #[serde(rename = "ref")]
    reference: String,
    #[serde(deserialize_with = "lenient_text")]
    text: String,
    #[serde(default, deserialize_with = "lenient_bool")]
    submit: bool,
}

#[derive(Deserialize)]
struct PressArgs {
    key: String,
    #[serde(default, rename = "ref")]
    reference: Option<String>,
}

#[derive(Deserialize)]
struct SelectArgs {
    #[serde(rename = "ref")]
    reference: String,
    #[serde(deserialize_with = "one_or_many")]
    values: Vec<String>,
}

#[derive(Deserialize)]
struct ScrollArgs {
    #[serde(default)]
    direction: Option<Direction>,
    #[serde(default, rename = "ref")]
    reference: Option<String>,
    #[serde(default, deserialize_with = "lenient_opt_number")]
    amount: Option<f64>,
}

#[derive(Deserialize)]
struct WaitArgs {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    gone: Option<String>,
    #[serde(default, deserialize_with = "lenient_opt_number")]
    seconds: Option<f64>,
}

#[derive(Deserialize)]
struct HandoffArgs {
    #[serde(default)]
    reason: String,
}

#[derive(Deserialize)]
struct TabsArgs {
    action: TabAction,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    search: Option<String>,
    #[serde(default)]
    tab: Option<String>,
}

#[derive(Deserialize)]
struct ClickAtArgs {
    #[serde(deserialize_with = "lenient_number")]
    x: f64,
    #[serde(deserialize_with = "lenient_number")]
    y: f64,
    #[serde(default)]
    how: Option<How>,
    #[serde(default, deserialize_with = "lenient_opt_number")]
    to_x: Option<f64>,
    #[serde(default, deserialize_with = "lenient_opt_number")]
    to_y: Option<f64>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    description: String,
}

#[derive(Deserialize)]
struct UploadArgs {
    #[serde(rename = "ref")]
    reference: String,
    #[serde(deserialize_with = "one_or_many")]
    files: Vec<String>,
}

#[derive(Deserialize)]
struct FormArgs {
    fields: Vec<FormField>,
}

fn parse<T: serde::de::DeserializeOwned>(tool: &str, args: &Value) -> Result<T, ToolError> {
    let args = if args.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        args.clone()
    };
    serde_json::from_value(args).map_err(|e| ToolError::BadArguments {
        tool: tool.to_owned(),
        detail: e.to_string(),
    })
}

impl ToolCall {
    /// Reads a call of `tool` with JSON `args`.
    ///
    /// # Errors
    /// [`ToolError::UnknownTool`] or [`ToolError::BadArguments`], each one sentence.
    pub fn parse(tool: &str, args: &Value) -> Result<ToolCall, ToolError> {
        Ok(match tool {
            "browser_open" => {
                let a: OpenArgs = parse(tool, args)?;
                ToolCall::Open { url: a.url }
            }
            "browser_read" => {
                let a: ReadArgs = parse(tool, args)?;
                ToolCall::Read {
                    part: a.part.map(|p| p.max(1.0) as u32),
                    find: a.find.filter(|f| !f.trim().is_empty()),
                }
            }
            "browser_click" => {
                let a: ClickArgs = parse(tool, args)?;
                ToolCall::Click {
                    reference: a.reference,
                    how: a.how.unwrap_or_default(),
                    to: a.to,
                }
            }
            "browser_type" => {
                let a: TypeArgs = parse(tool, args)?;
                ToolCall::Type {
                    reference: a.reference,
                    text: a.text,
                    submit: a.submit,
                }
            }
            "browser_press" => {
                let a: PressArgs = parse(tool, args)?;
                ToolCall::Press {
                    key: a.key,
                    reference: a.reference,
                }
            }
            "browser_select" => {
                let a: SelectArgs = parse(tool, args)?;
                ToolCall::Select {
                    reference: a.reference,
                    values: a.values,
                }
            }
            "browser_scroll" => {
                let a: ScrollArgs = parse(tool, args)?;
                ToolCall::Scroll {
                    direction: a.direction.unwrap_or_default(),
                    reference: a.reference,
                    amount: a.amount.unwrap_or(1.0).clamp(0.1, 20.0),
                }
            }
            "browser_back" => ToolCall::Back,
            "browser_screenshot" => ToolCall::Screenshot,
            "browser_wait" => {
                let a: WaitArgs = parse(tool, args)?;
                ToolCall::Wait {
                    text: a.text.filter(|t| !t.is_empty()),
                    gone: a.gone.filter(|t| !t.is_empty()),
                    seconds: a.seconds,
                }
            }
            "browser_handoff" => {
                let a: HandoffArgs = parse(tool, args)?;
                ToolCall::Handoff { reason: a.reason }
            }
            "browser_tabs" => {
                let a: TabsArgs = parse(tool, args)?;
                ToolCall::Tabs {
                    action: a.action,
                    url: a.url.filter(|u| !u.trim().is_empty()),
                    search: a.search.filter(|s| !s.trim().is_empty()),
                    tab: a.tab,
                }
            }
            "browser_click_at" => {
                let a: ClickAtArgs = parse(tool, args)?;
                ToolCall::ClickAt {
                    x: a.x,
                    y: a.y,
                    how: a.how.unwrap_or_default(),
                    to: a.to_x.zip(a.to_y),
                    text: a.text,
                    description: a.description,
                }
            }
            "browser_upload" => {
                let a: UploadArgs = parse(tool, args)?;
                ToolCall::Upload {
                    reference: a.reference,
                    files: a.files,
                }
            }
            "browser_form" => {
                let a: FormArgs = parse(tool, args)?;
                ToolCall::Form { fields: a.fields }
            }
            other => return Err(ToolError::UnknownTool(other.to_owned())),
        })
    }

    /// The tool's name.
    pub fn name(&self) -> &'static str {
        match self {
            ToolCall::Open { .. } => "browser_open",
            ToolCall::Read { .. } => "browser_read",
            ToolCall::Click { .. } => "browser_click",
            ToolCall::Type { .. } => "browser_type",
            ToolCall::Press { .. } => "browser_press",
            ToolCall::Select { .. } => "browser_select",
            ToolCall::Scroll { .. } => "browser_scroll",
            ToolCall::Back => "browser_back",
            ToolCall::Screenshot => "browser_screenshot",
            ToolCall::Wait { .. } => "browser_wait",
            ToolCall::Handoff { .. } => "browser_handoff",
            ToolCall::Tabs { .. } => "browser_tabs",
            ToolCall::ClickAt { .. } => "browser_click_at",
            ToolCall::Upload { .. } => "browser_upload",
            ToolCall::Form { .. } => "browser_form",
        }
    }

    /// What the call does, for the permit flow and the class table (TOOL-5).
    pub fn act(&self) -> ActKind {
        match self {
            ToolCall::Open { .. } => ActKind::Open,
            ToolCall::Read { .. } => ActKind::Read,
            ToolCall::Click { how, .. } => how.act(),
            ToolCall::Type { .. } => ActKind::Type,
            ToolCall::Press { .. } => ActKind::Press,
            ToolCall::Select { .. } => ActKind::Select,
            ToolCall::Scroll { .. } => ActKind::Scroll,
            ToolCall::Back => ActKind::Back,
            ToolCall::Screenshot => ActKind::Screenshot,
            ToolCall::Wait { .. } => ActKind::Wait,
            ToolCall::Handoff { .. } => ActKind::Handoff,
            ToolCall::Tabs { .. } => ActKind::Tabs,
            ToolCall::ClickAt { how, .. } => match how {
                How::Hover => ActKind::Hover,
                _ => ActKind::ClickAt,
            },
            ToolCall::Upload { .. } => ActKind::Upload,
            ToolCall::Form { .. } => ActKind::Form,
        }
    }

    /// A short caption for the live view and the transcript card (TOOL-6): "Typing in
    /// e12", "Clicking e7", "Filling 12 fields". `label` is the element's name when the
    /// caller knows it. Never a typed value or a file's contents.
    pub fn caption(&self, label: Option<&str>) -> String {
        let on = |reference: &str| match label {
            Some(label) if !label.trim().is_empty() => format!("“{}”", label.trim()),
            _ => reference.to_owned(),
        };
        match self {
            ToolCall::Open { url } => format!("Opening {}", short(url)),
            ToolCall::Read {
                find: Some(find), ..
            } => format!("Looking for “{}”", short(find)),
            ToolCall::Read { part: Some(n), .. } => format!("Reading part {n} of the page"),
            ToolCall::Read { .. } => "Reading the page".to_owned(),
            ToolCall::Click { reference, how, .. } => match how {
                How::Click => format!("Clicking {}", on(reference)),
                How::Double => format!("Double-clicking {}", on(reference)),
                How::Right => format!("Right-clicking {}", on(reference)),
                How::Hover => format!("Pointing at {}", on(reference)),
                How::Drag => format!("Dragging {}", on(reference)),
            },
            ToolCall::Type {
                reference, submit, ..
            } => {
                if *submit {
                    format!("Typing in {} and pressing Enter", on(reference))
                } else {
                    format!("Typing in {}", on(reference))
                }
            }
            ToolCall::Press { key, .. } => format!("Pressing {}", short(key)),
            ToolCall::Select { reference, .. } => format!("Choosing in {}", on(reference)),
            ToolCall::Scroll { direction, .. } => match direction {
                Direction::Down => "Scrolling down".to_owned(),
                Direction::Up => "Scrolling up".to_owned(),
            },
            ToolCall::Back => "Going back".to_owned(),
            ToolCall::Screenshot => "Taking a screenshot".to_owned(),
            ToolCall::Wait { .. } => "Waiting for the page".to_owned(),
            ToolCall::Handoff { .. } => "Asking you to take over".to_owned(),
            ToolCall::Tabs { action, .. } => match action {
                TabAction::List => "Listing tabs".to_owned(),
                TabAction::Open => "Opening a tab".to_owned(),
                TabAction::Switch => "Switching tabs".to_owned(),
                TabAction::Close => "Closing a tab".to_owned(),
            },
            ToolCall::ClickAt { description, .. } => {
                format!("Clicking “{}”", short(description))
            }
            ToolCall::Upload { files, .. } => match files.len() {
                1 => "Uploading 1 file".to_owned(),
                n => format!("Uploading {n} files"),
            },
            ToolCall::Form { fields } => match fields.len() {
                1 => "Filling 1 field".to_owned(),
                n => format!("Filling {n} fields"),
            },
        }
    }
}

/// The first 60 characters of `text`, on one line.
fn short(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 60 {
        let cut: String = line.chars().take(59).collect();
        format!("{cut}…")
    } else {
        line
    }
}

fn lenient_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let value = Value::deserialize(d)?;
    number_of(&value).ok_or_else(|| serde::de::Error::custom(format!("{value} is not a number")))
}

fn lenient_opt_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let value = Value::deserialize(d)?;
    if value.is_null() {
        return Ok(None);
    }
    number_of(&value)
        .map(Some)
        .ok_or_else(|| serde::de::Error::custom(format!("{value} is not a number")))
}

fn number_of(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|n: &f64| n.is_finite())
}

fn lenient_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(serde::de::Error::custom(format!("{other} is not text"))),
    }
}

/// A boolean, or the words a weak model writes for one ("true", "false", 1, 0, null).
fn lenient_bool<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    match Value::deserialize(d)? {
        Value::Bool(b) => Ok(b),
        Value::Null => Ok(false),
        Value::Number(n) if n.as_f64() == Some(1.0) => Ok(true),
        Value::Number(n) if n.as_f64() == Some(0.0) => Ok(false),
        Value::String(s) if s.trim().eq_ignore_ascii_case("true") => Ok(true),
        Value::String(s) if s.trim().eq_ignore_ascii_case("false") || s.trim().is_empty() => {
            Ok(false)
        }
        other => Err(serde::de::Error::custom(format!(
            "{other} is not true or false"
        ))),
    }
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => Ok(vec![s]),
        Value::Array(items) => items
            .into_iter()
            .map(|item| match item {
                Value::String(s) => Ok(s),
                other => Err(serde::de::Error::custom(format!("{other} is not text"))),
            })
            .collect(),
        other => Err(serde::de::Error::custom(format!("{other} is not a list"))),
    }
}
