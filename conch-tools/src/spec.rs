//! The fifteen tools as data: names, descriptions a weak model understands, plain input
//! schemas, and whether each only reads (TOOL-1, TOOL-2, TOOL-4, TOOL-5, TOOL-14).
//!
//! The schemas are written by hand, not derived: each is a top-level object whose
//! properties are strings, numbers, integers, booleans, string enums, or arrays of strings
//! or of flat objects. No `oneOf`, `anyOf`, `allOf` or `$ref`, and at most two levels. The
//! same [`ToolSpec`]s feed the MCP door's `tools/list` and the bridged function schemas,
//! so the two cannot drift apart.
//!
//! Deliberately absent: any parameter that chooses a browser, its executable, arguments,
//! profile or backend, or that names a file to read or a script to run (TOOL-13, TOOL-14).

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

/// One tool as every door shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The tool's name, e.g. `browser_click`: a public contract.
    pub name: &'static str,
    /// What it does, in words a weak model understands.
    pub description: &'static str,
    /// The JSON schema of its arguments.
    pub input_schema: Value,
    /// Whether the tool changes nothing (MCP's `readOnlyHint`). Narrower than the reading
    /// class of TOOL-5: browser_open and browser_back navigate the tab away and
    /// browser_tabs opens and closes tabs, so they are not read-only though they read;
    /// browser_click is acting as a tool, though its `how=hover` call reads.
    pub read_only: bool,
}

impl ToolSpec {
    /// The tool as MCP's `tools/list` gives it: name, description, `inputSchema` and the
    /// `readOnlyHint` annotation.
    pub fn to_mcp(&self) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": { "readOnlyHint": self.read_only },
        })
    }

    /// The tool as a bridged function schema for API engines: name, description and
    /// `parameters`, identical to the MCP definition (TOOL-2).
    pub fn to_function(&self) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "parameters": self.input_schema,
        })
    }
}

/// The names of the fifteen tools, in the order every door lists them.
pub const TOOL_NAMES: [&str; 15] = [
    "browser_open",
    "browser_read",
    "browser_click",
    "browser_type",
    "browser_press",
    "browser_select",
    "browser_scroll",
    "browser_back",
    "browser_screenshot",
    "browser_wait",
    "browser_handoff",
    "browser_tabs",
    "browser_click_at",
    "browser_upload",
    "browser_form",
];

/// The fifteen tools, built once.
pub fn tool_specs() -> &'static [ToolSpec] {
    static SPECS: OnceLock<Vec<ToolSpec>> = OnceLock::new();
    SPECS.get_or_init(build)
}

/// The tool called `name`, if there is one.
pub fn tool_spec(name: &str) -> Option<&'static ToolSpec> {
    tool_specs().iter().find(|spec| spec.name == name)
}

/// Every tool as a bridged function schema, in order (TOOL-2).
pub fn bridged_functions() -> Vec<Value> {
    tool_specs().iter().map(ToolSpec::to_function).collect()
}

/// A property of this type, with no description: its name and the tool's description
/// say enough, and each description costs every client's context (issue 31).
fn bare(kind: &str) -> Value {
    json!({ "type": kind })
}

/// A string property.
fn text(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

/// A number property.
fn number(description: &str) -> Value {
    json!({ "type": "number", "description": description })
}

/// A string enum property.
fn choice(values: &[&str], description: &str) -> Value {
    json!({ "type": "string", "enum": values, "description": description })
}

/// A string enum property, no description.
fn bare_choice(values: &[&str]) -> Value {
    json!({ "type": "string", "enum": values })
}

/// An array of strings.
fn strings(description: Option<&str>) -> Value {
    let mut schema = json!({ "type": "array", "items": { "type": "string" } });
    if let Some(description) = description {
        schema["description"] = json!(description);
    }
    schema
}

/// An object schema with these properties, the required ones listed.
fn object(properties: &[(&str, Value)], required: &[&str]) -> Value {
    let mut props = Map::new();
    for (name, schema) in properties {
        props.insert((*name).to_owned(), schema.clone());
    }
    let mut schema = json!({ "type": "object", "properties": props });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// An act's description: what it does, then what it returns, worded the same for every
/// act.
macro_rules! acts {
    ($does:literal) => {
        concat!($does, " Returns what changed.")
    };
}

/// The fifteen tools. Every description says what the tool returns; the whole
/// `tools/list` stays at most 5,000 characters (issue 31), so a property has a
/// description only where its name and the tool's description leave a doubt.
fn build() -> Vec<ToolSpec> {
    let how =
        |description: &str| choice(&["click", "double", "right", "hover", "drag"], description);
    let reference = || bare("string");
    let spec = |name, description, input_schema, read_only| ToolSpec {
        name,
        description,
        input_schema,
        read_only,
    };
    vec![
        spec(
            "browser_open",
            "Open a URL in this tab. Returns the page's text and controls with refs.",
            object(&[("url", bare("string"))], &["url"]),
            false,
        ),
        spec(
            "browser_read",
            "Read this page. Returns its text and controls with refs like e12; long pages in parts.",
            object(
                &[
                    (
                        "part",
                        json!({ "type": "integer", "description": "From 1" }),
                    ),
                    (
                        "find",
                        text("Words to find; gives each match's row or form"),
                    ),
                ],
                &[],
            ),
            true,
        ),
        spec(
            "browser_click",
            acts!("Click, hover or drag an element by ref."),
            object(
                &[
                    ("ref", reference()),
                    ("how", how("Drag onto `to`")),
                    ("to", reference()),
                ],
                &["ref"],
            ),
            false,
        ),
        spec(
            "browser_type",
            acts!("Replace a field's text; Enter if submit."),
            object(
                &[
                    ("ref", reference()),
                    ("text", bare("string")),
                    ("submit", bare("boolean")),
                ],
                &["ref", "text"],
            ),
            false,
        ),
        spec(
            "browser_press",
            acts!("Press a key or chord: Enter, Tab, Escape, Control+A."),
            object(
                &[
                    ("key", bare("string")),
                    ("ref", text("Else the focused element")),
                ],
                &["key"],
            ),
            false,
        ),
        spec(
            "browser_select",
            acts!("Choose options in a drop-down."),
            object(
                &[
                    ("ref", reference()),
                    ("values", strings(Some("Labels or values"))),
                ],
                &["ref", "values"],
            ),
            false,
        ),
        spec(
            "browser_scroll",
            "Scroll the page or an element. Returns what came into view.",
            object(
                &[
                    ("direction", bare_choice(&["down", "up"])),
                    ("ref", text("Else the page")),
                    ("amount", number("Screens, default 1")),
                ],
                &[],
            ),
            true,
        ),
        spec(
            "browser_back",
            "Go back in this tab. Returns the page.",
            object(&[], &[]),
            false,
        ),
        spec(
            "browser_screenshot",
            "Picture this tab for browser_click_at. Returns the image and its size.",
            object(&[], &[]),
            true,
        ),
        spec(
            "browser_wait",
            "Wait for text to appear or go away, or seconds (max 30). Returns whether it did.",
            object(
                &[
                    ("text", bare("string")),
                    ("gone", text("Text to wait to go away")),
                    ("seconds", bare("number")),
                ],
                &[],
            ),
            true,
        ),
        spec(
            "browser_handoff",
            "Ask the person to take over, e.g. for a password or robot check. Returns what they did.",
            object(
                &[("reason", text("What the person should do"))],
                &["reason"],
            ),
            false,
        ),
        spec(
            "browser_tabs",
            "List, open, switch or close tabs. Returns the tabs.",
            object(
                &[
                    ("action", bare_choice(&["list", "open", "switch", "close"])),
                    ("url", bare("string")),
                    ("search", text("Or words to search")),
                    ("tab", text("e.g. t2")),
                ],
                &["action"],
            ),
            false,
        ),
        spec(
            "browser_click_at",
            acts!("Click a point of the last screenshot, for things without a ref."),
            object(
                &[
                    ("x", bare("number")),
                    ("y", bare("number")),
                    ("how", how("Drag to to_x, to_y")),
                    ("to_x", bare("number")),
                    ("to_y", bare("number")),
                    ("text", text("Typed after the click")),
                    ("description", text("What is there")),
                ],
                &["x", "y", "description"],
            ),
            false,
        ),
        spec(
            "browser_upload",
            acts!("Put files of this chat or the work folder in a file box."),
            object(
                &[("ref", reference()), ("files", strings(None))],
                &["ref", "files"],
            ),
            false,
        ),
        spec(
            "browser_form",
            acts!("Fill many fields in one step; checkbox or radio: true or false."),
            object(
                &[(
                    "fields",
                    json!({
                        "type": "array",
                        "items": object(&[("ref", reference()), ("value", bare("string"))], &["ref", "value"]),
                    }),
                )],
                &["fields"],
            ),
            false,
        ),
    ]
}
