//! The `Runtime` domain: scripts, execution contexts, resuming held targets.

use serde::{Deserialize, Serialize};

use super::{Empty, command, event, string_enum};

/// `Runtime.enable`: turns on execution-context events.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Enable {}
command!(Enable, "Runtime.enable", Empty);

/// `Runtime.runIfWaitingForDebugger`: resumes a target held at start (auto-attach with
/// `waitForDebuggerOnStart`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunIfWaitingForDebugger {}
command!(
    RunIfWaitingForDebugger,
    "Runtime.runIfWaitingForDebugger",
    Empty
);

/// `Runtime.evaluate`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evaluate {
    /// The script.
    pub expression: String,
    /// The object group for the result's handles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_group: Option<String>,
    /// Do not pause on exceptions, and do not report them to the console.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub silent: Option<bool>,
    /// The execution context (the main world of the session's frame when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_id: Option<i64>,
    /// Return the value as JSON rather than a handle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_by_value: Option<bool>,
    /// Treat the evaluation as a user gesture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_gesture: Option<bool>,
    /// Await the result if it is a promise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub await_promise: Option<bool>,
    /// The browser-side timeout, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
    /// The context by its unique id (instead of `context_id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unique_context_id: Option<String>,
}
command!(Evaluate, "Runtime.evaluate", EvaluateResponse);

impl Evaluate {
    /// Evaluates `expression` and returns its value as JSON, awaiting promises.
    pub fn value(expression: impl Into<String>) -> Self {
        Evaluate {
            expression: expression.into(),
            return_by_value: Some(true),
            await_promise: Some(true),
            ..Evaluate::default()
        }
    }
}

/// The answer to [`Evaluate`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateResponse {
    /// The result.
    pub result: RemoteObject,
    /// Set when the script threw.
    #[serde(default)]
    pub exception_details: Option<ExceptionDetails>,
}

string_enum! {
    /// The type of a [`RemoteObject`].
    pub enum RemoteObjectType {
        /// An object (including null, arrays...; see the subtype).
        Object = "object",
        /// A function.
        Function = "function",
        /// `undefined`.
        Undefined = "undefined",
        /// A string.
        String = "string",
        /// A number.
        Number = "number",
        /// A boolean.
        Boolean = "boolean",
        /// A symbol.
        Symbol = "symbol",
        /// A bigint.
        Bigint = "bigint",
    }
}

/// A JavaScript value or a handle to one.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteObject {
    /// The type.
    #[serde(rename = "type")]
    pub object_type: RemoteObjectType,
    /// The subtype, for objects (`"null"`, `"array"`, `"node"`...).
    #[serde(default)]
    pub subtype: Option<String>,
    /// The class name, for objects.
    #[serde(default)]
    pub class_name: Option<String>,
    /// The value, for primitives and for `returnByValue`.
    #[serde(default)]
    pub value: Option<serde_json::Value>,
    /// A value JSON cannot carry (`"NaN"`, `"-0"`, `"Infinity"`, bigints).
    #[serde(default)]
    pub unserializable_value: Option<String>,
    /// A description.
    #[serde(default)]
    pub description: Option<String>,
    /// A handle, for objects not returned by value.
    #[serde(default)]
    pub object_id: Option<String>,
}

/// Why a script threw.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExceptionDetails {
    /// The exception's id.
    #[serde(default)]
    pub exception_id: i64,
    /// A short text.
    #[serde(default)]
    pub text: String,
    /// The line.
    #[serde(default)]
    pub line_number: i64,
    /// The column.
    #[serde(default)]
    pub column_number: i64,
    /// The thrown value.
    #[serde(default)]
    pub exception: Option<RemoteObject>,
}

/// An execution context.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionContextDescription {
    /// Its id.
    pub id: i64,
    /// Its origin.
    #[serde(default)]
    pub origin: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Its unique id.
    #[serde(default)]
    pub unique_id: Option<String>,
    /// Embedder data (frame id, whether it is the default world).
    #[serde(default)]
    pub aux_data: Option<serde_json::Value>,
}

/// `Runtime.executionContextCreated`.
#[derive(Debug, Clone, Deserialize)]
pub struct ExecutionContextCreated {
    /// The new context.
    pub context: ExecutionContextDescription,
}
event!(ExecutionContextCreated, "Runtime.executionContextCreated");
