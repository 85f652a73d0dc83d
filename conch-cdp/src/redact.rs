//! Redaction of what conch-cdp writes to traces and errors (SEC-8, LAUNCH-18).
//!
//! - [`url()`]: an address without its credentials: user name and password become `***`,
//!   every query value becomes `***` (the names stay, so `?apiKey=***` still says what
//!   was there), and the fragment is dropped.
//! - [`message`]: a DevTools message's params or result, as traced: typed text
//!   (`Input.insertText`, `Input.imeSetComposition`) and every field of
//!   `Input.dispatchKeyEvent` that names the key (text, key, code, the virtual key codes),
//!   a prompt's answer (`Page.handleJavaScriptDialog`'s `promptText`,
//!   `Page.javascriptDialogClosed`'s `userInput`; SEC-7), cookie
//!   values and cookie headers (any method: Network and Storage calls, replies and events),
//!   authorization headers, in both shapes (`{"Cookie": "…"}` and the `[{name, value}]`
//!   lists of `Fetch.requestPaused`, `Fetch.continueRequest`, `Fetch.fulfillRequest`),
//!   the user name and password of `Fetch.continueWithAuth`, posted form data, the values
//!   a script hands back or is handed in the Runtime domain (a field's value read back,
//!   an argument, a console message), the values of local and session storage in the
//!   DOMStorage domain (`getDOMStorageItems`' entries, `setDOMStorageItem`'s value, the
//!   old and new values of its events; ERR-9), and credentials in every string that is an
//!   address. Long strings (screenshots) are shortened.
//!
//! Deliberately absent: the content of scripts (`Runtime.evaluate`'s expression). A caller
//! that puts a secret in a script must not trace it: conch-browser types secrets with
//! `Input.*`, and hands a script the person's words (find's) as a
//! `Runtime.callFunctionOn` argument, whose value is redacted. Numbers and booleans a
//! script returns or is handed are kept.

use serde_json::Value;

/// What replaces a redacted value.
pub const REDACTED: &str = "[redacted]";

/// Strings longer than this are shortened in traces.
const MAX_TRACED_STRING: usize = 256;

/// Header names whose values are secrets.
const SECRET_HEADERS: &[&str] = &[
    "cookie",
    "set-cookie",
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "x-auth-token",
];

/// Keys whose string values are credentials wherever they appear (`Fetch.continueWithAuth`'s
/// `authChallengeResponse`).
const SECRET_KEYS: &[&str] = &["password", "username"];

/// `address` with its credentials masked: user name and password as `***`, every query
/// value as `***`, no fragment. Text that does not parse as an absolute URL but contains
/// `@`, `?` or `#` is masked whole after its scheme, to stay on the safe side.
pub fn url(address: &str) -> String {
    match url::Url::parse(address) {
        Ok(mut parsed) => {
            if !parsed.username().is_empty() {
                // `set_username` fails only for URLs that cannot have one, which then
                // have no user name either.
                let _ = parsed.set_username("***");
            }
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            if let Some(query) = parsed.query() {
                let masked = mask_query(query);
                parsed.set_query(Some(&masked));
            }
            parsed.set_fragment(None);
            parsed.into()
        }
        Err(_) => {
            if address.contains(['@', '?', '#']) {
                match address.split_once("://") {
                    Some((scheme, _)) if scheme.len() < 16 => format!("{scheme}://{REDACTED}"),
                    _ => REDACTED.to_owned(),
                }
            } else {
                address.to_owned()
            }
        }
    }
}

fn mask_query(query: &str) -> String {
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) => format!("{name}=***"),
            None if pair.is_empty() => String::new(),
            None => "***".to_owned(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// Redacts the params, result or event payload of a message of `method` in place, as it
/// is written to traces (see the module docs for what goes).
pub fn message(method: &str, value: &mut Value) {
    let typed_text_fields: &[&str] = match method {
        "Input.insertText" | "Input.imeSetComposition" => &["text"],
        // Every field that names the key: its text, its DOM key and code, and the
        // virtual key codes, which name the letter as surely as `key` does (SEC-7).
        "Input.dispatchKeyEvent" => &[
            "text",
            "unmodifiedText",
            "key",
            "code",
            "keyIdentifier",
            "windowsVirtualKeyCode",
            "nativeVirtualKeyCode",
            "commands",
        ],
        // A prompt's answer, going to the page and coming back in the closing event.
        "Page.handleJavaScriptDialog" => &["promptText"],
        "Page.javascriptDialogClosed" => &["userInput"],
        // The one cookie call whose params are the cookie itself.
        "Network.setCookie" => &["value"],
        _ => &[],
    };
    if let Value::Object(map) = value {
        for field in typed_text_fields {
            if let Some(v) = map.get_mut(*field) {
                *v = Value::String(REDACTED.to_owned());
            }
        }
    }
    if method.starts_with("Runtime.") {
        redact_script_values(value);
    }
    if method.starts_with("DOMStorage.") {
        redact_storage_values(value);
    }
    walk(value);
}

/// In a DOMStorage message (params, reply or event), every stored value: the second
/// member of each `[key, value]` entry, `value`, `newValue` and `oldValue`. Keys and
/// origins stay, as cookie names and domains do.
fn redact_storage_values(value: &mut Value) {
    let Value::Object(map) = value else { return };
    for (key, v) in map.iter_mut() {
        match key.as_str() {
            "value" | "newValue" | "oldValue" => *v = Value::String(REDACTED.to_owned()),
            "entries" => {
                if let Value::Array(entries) = v {
                    for entry in entries {
                        match entry {
                            Value::Array(pair) => {
                                for stored in pair.iter_mut().skip(1) {
                                    *stored = Value::String(REDACTED.to_owned());
                                }
                            }
                            other => *other = Value::String(REDACTED.to_owned()),
                        }
                    }
                } else {
                    *v = Value::String(REDACTED.to_owned());
                }
            }
            _ => {}
        }
    }
}

/// In a Runtime message (params, reply or event), every `value` that is not a number, a
/// boolean or null: what a script returned (`result.value`, a `preview`'s properties), the
/// arguments it was called with, and what the page logged.
fn redact_script_values(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if (key == "value" || key == "unserializableValue")
                    && matches!(v, Value::String(_) | Value::Array(_) | Value::Object(_))
                {
                    *v = Value::String(REDACTED.to_owned());
                } else {
                    redact_script_values(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_script_values),
        Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Whether `map` is one header of a `[{name, value}]` list whose value is a secret.
fn is_secret_header_entry(map: &serde_json::Map<String, Value>) -> bool {
    map.get("name")
        .and_then(Value::as_str)
        .is_some_and(|name| SECRET_HEADERS.contains(&name.to_ascii_lowercase().as_str()))
        && map.get("value").is_some_and(Value::is_string)
}

fn walk(value: &mut Value) {
    match value {
        Value::String(s) => {
            if s.contains("://") {
                let masked = url(s);
                *s = masked;
            }
            shorten(s);
        }
        Value::Array(items) => items.iter_mut().for_each(walk),
        Value::Object(map) => {
            if is_secret_header_entry(map) {
                map.insert("value".to_owned(), Value::String(REDACTED.to_owned()));
            }
            for (key, v) in map.iter_mut() {
                let lower = key.to_ascii_lowercase();
                let secret_header = (SECRET_HEADERS.contains(&lower.as_str())
                    || SECRET_KEYS.contains(&lower.as_str()))
                    && v.is_string();
                if secret_header
                    || matches!(
                        lower.as_str(),
                        "postdata" | "postdataentries" | "cookieline" | "headerstext"
                    )
                {
                    *v = Value::String(REDACTED.to_owned());
                } else if lower == "cookie" && v.is_object() {
                    redact_cookie(v);
                } else if lower == "cookies" {
                    if let Value::Array(cookies) = v {
                        cookies.iter_mut().for_each(redact_cookie);
                    } else if v.is_string() {
                        *v = Value::String(REDACTED.to_owned());
                    }
                } else {
                    walk(v);
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// A cookie object (`Network.Cookie`, `Network.CookieParam`, or `{cookie: {...}}` of the
/// blocked-cookie lists): its value goes, the rest is walked.
fn redact_cookie(cookie: &mut Value) {
    if let Value::Object(map) = cookie {
        for (key, v) in map.iter_mut() {
            if key == "value" {
                *v = Value::String(REDACTED.to_owned());
            } else if key == "cookie" && v.is_object() {
                redact_cookie(v);
            } else if key == "cookieLine" {
                *v = Value::String(REDACTED.to_owned());
            } else {
                walk(v);
            }
        }
    } else {
        walk(cookie);
    }
}

fn shorten(s: &mut String) {
    if s.len() > MAX_TRACED_STRING {
        let total = s.len();
        let mut cut = MAX_TRACED_STRING;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str(&format!("…({total} bytes)"));
    }
}
