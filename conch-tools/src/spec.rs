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

const REF: &str = "Element ref from browser_read, e.g. e12";

fn build() -> Vec<ToolSpec> {
    let how = |extra: &str| {
        choice(
            &["click", "double", "right", "hover", "drag"],
            &format!("click (default), double, right, hover, or drag{extra}"),
        )
    };
    let spec = |name, description, input_schema, read_only| ToolSpec {
        name,
        description,
        input_schema,
        read_only,
    };
    vec![
        spec(
            "browser_open",
            "Open a web address in the current tab and read the page.",
            object(
                &[("url", text("Full address, e.g. https://example.com"))],
                &["url"],
            ),
            false,
        ),
        spec(
            "browser_read",
            "Read the current page: its text and controls, each control with a ref like e12. Long pages come in parts.",
            object(
                &[
                    (
                        "part",
                        json!({ "type": "integer", "description": "Which part to read, from 1" }),
                    ),
                    (
                        "find",
                        text(
                            "Text to look for on the whole page; each match comes with the row, card or form around it and its refs",
                        ),
                    ),
                ],
                &[],
            ),
            true,
        ),
        spec(
            "browser_click",
            "Click an element by its ref.",
            object(
                &[
                    ("ref", text(REF)),
                    ("how", how(" (onto ref `to`)")),
                    ("to", text("Where to drop, for drag")),
                ],
                &["ref"],
            ),
            false,
        ),
        spec(
            "browser_type",
            "Replace the text in a field. Does not press Enter.",
            object(
                &[("ref", text(REF)), ("text", text("The new text"))],
                &["ref", "text"],
            ),
            false,
        ),
        spec(
            "browser_press",
            "Press a key or shortcut: Enter, Tab, Escape, ArrowDown, Control+A.",
            object(
                &[
                    ("key", text("The key")),
                    ("ref", text("Element to press it on; else the focused one")),
                ],
                &["key"],
            ),
            false,
        ),
        spec(
            "browser_select",
            "Choose options in a drop-down list.",
            object(
                &[
                    ("ref", text(REF)),
                    (
                        "values",
                        json!({ "type": "array", "items": { "type": "string" }, "description": "Option labels or values" }),
                    ),
                ],
                &["ref", "values"],
            ),
            false,
        ),
        spec(
            "browser_scroll",
            "Scroll the page, or the element ref, and see what came into view.",
            object(
                &[
                    ("direction", choice(&["down", "up"], "down (default) or up")),
                    ("ref", text("Element to scroll; else the page")),
                    ("amount", number("How many screens, default 1")),
                ],
                &[],
            ),
            true,
        ),
        spec(
            "browser_back",
            "Go back to the previous page in this tab.",
            object(&[], &[]),
            false,
        ),
        spec(
            "browser_screenshot",
            "Take a picture of the current tab, with its size. Needed before browser_click_at.",
            object(&[], &[]),
            true,
        ),
        spec(
            "browser_wait",
            "Wait for text to appear or go away, or for some seconds (at most 30).",
            object(
                &[
                    ("text", text("Text to wait for")),
                    ("gone", text("Text to wait to disappear")),
                    ("seconds", number("Seconds to wait at most")),
                ],
                &[],
            ),
            true,
        ),
        spec(
            "browser_handoff",
            "Ask the person to take over the page, e.g. for a password, a code or a robot check.",
            object(
                &[("reason", text("What the person should do"))],
                &["reason"],
            ),
            false,
        ),
        spec(
            "browser_tabs",
            "List, open, switch or close tabs.",
            object(
                &[
                    (
                        "action",
                        choice(&["list", "open", "switch", "close"], "What to do"),
                    ),
                    ("url", text("Address to open")),
                    ("search", text("Or words to search for")),
                    ("tab", text("Tab for switch or close, e.g. t2")),
                ],
                &["action"],
            ),
            false,
        ),
        spec(
            "browser_click_at",
            "Click a point of the last screenshot, for things without a ref.",
            object(
                &[
                    ("x", number("Pixels from the left")),
                    ("y", number("Pixels from the top")),
                    ("how", how("")),
                    ("to_x", number("Drop point x, for drag")),
                    ("to_y", number("Drop point y, for drag")),
                    ("text", text("Text to type after the click")),
                    ("description", text("What is at that point")),
                ],
                &["x", "y", "description"],
            ),
            false,
        ),
        spec(
            "browser_upload",
            "Put files into a file box by ref. Files must be attached in this chat, made in it, or in the work folder.",
            object(
                &[
                    ("ref", text(REF)),
                    (
                        "files",
                        json!({ "type": "array", "items": { "type": "string" }, "description": "File paths" }),
                    ),
                ],
                &["ref", "files"],
            ),
            false,
        ),
        spec(
            "browser_form",
            "Fill many fields in one step: text boxes, drop-downs, checkboxes and radios (value true or false).",
            object(
                &[(
                    "fields",
                    json!({
                        "type": "array",
                        "items": object(&[("ref", text(REF)), ("value", text("The value"))], &["ref", "value"]),
                    }),
                )],
                &["fields"],
            ),
            false,
        ),
    ]
}
