//! Page scripts live in `.js` files beside the Rust module that sends them (issue 30),
//! each opening with a header of `//` lines saying what it is called with and what it
//! returns. [`body`] gives a file's script without that header, at compile time, so the
//! bytes sent to the page are the script alone.

/// The script of a page script file's text (`include_str!`): the text after its leading
/// `//` header lines, without trailing whitespace.
#[must_use]
pub const fn body(file: &str) -> &str {
    let bytes = file.as_bytes();
    let mut start = 0;
    while start + 1 < bytes.len() && bytes[start] == b'/' && bytes[start + 1] == b'/' {
        while start < bytes.len() && bytes[start] != b'\n' {
            start += 1;
        }
        if start < bytes.len() {
            start += 1;
        }
    }
    file.split_at(start).1.trim_ascii_end()
}

/// Whether `script` reads as one piece of JavaScript: its brackets pair up outside strings,
/// template literals, comments and regular expressions, and no placeholder line
/// (`PRELUDE`, `SUBMITTER_OF`, `FORM_INPUTS`) or `__PLENTY__` is left in it. For tests of
/// the scripts composed from several files; the error says where it breaks.
///
/// # Errors
/// What is wrong, and at which byte.
#[doc(hidden)]
pub fn well_formed(script: &str) -> Result<(), String> {
    for line in script.lines() {
        let line = line.trim();
        if ["PRELUDE", "SUBMITTER_OF", "FORM_INPUTS"].contains(&line)
            || line.contains("(FOCUS_HELD)")
            || line.contains("__PLENTY__")
        {
            return Err(format!("a placeholder is left: {line}"));
        }
    }
    let b = script.as_bytes();
    let mut open: Vec<u8> = Vec::new();
    let mut last = b'(';
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' | b'"' | b'`' => {
                i += 1;
                while i < b.len() && b[i] != c {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'/' if b"(,=:[!&|?{};".contains(&last)
                || script[..i].trim_end().ends_with("return") =>
            {
                let mut class = false;
                i += 1;
                while i < b.len() && (class || b[i] != b'/') {
                    match b[i] {
                        b'\\' => i += 1,
                        b'[' => class = true,
                        b']' => class = false,
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'(' | b'[' | b'{' => open.push(c),
            b')' | b']' | b'}' => {
                let want = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if open.pop() != Some(want) {
                    return Err(format!("an unpaired `{}` at byte {i}", c as char));
                }
            }
            _ => {}
        }
        if i < b.len() && !b[i].is_ascii_whitespace() {
            last = b[i];
        }
        i += 1;
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(format!("{} bracket(s) never closed", open.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::{body, well_formed};
    use std::path::{Path, PathBuf};

    /// The header goes, the script stays byte for byte, a comment inside it included.
    #[test]
    fn issue_30_a_script_file_is_sent_without_its_header() {
        assert_eq!(
            body("// Called on x.\n// Returns y.\nfunction() {\n  // kept\n  return 1;\n}\n"),
            "function() {\n  // kept\n  return 1;\n}"
        );
        assert_eq!(body("(() => 1)()\n"), "(() => 1)()");
        assert_eq!(body("// only a header\n"), "");
        assert_eq!(body(""), "");
    }

    /// The check of composed scripts catches what a broken composition leaves.
    #[test]
    fn issue_30_a_broken_script_is_told_apart() {
        assert!(well_formed("function(a) { return /[)}]/.test(a) && ')' !== `}`; }").is_ok());
        assert!(well_formed("function() {\n  PRELUDE\n  return 1;\n}").is_err());
        assert!(well_formed("function() { return (FOCUS_HELD).call(this); }").is_err());
        assert!(well_formed("function() { return [1, 2; }").is_err());
        assert!(well_formed("(() => { if (x) { return 1; })()").is_err());
    }

    /// Scripts a raw or plain string literal may still hold: short one-line expressions
    /// and getters (under [`SHORT`] bytes), and these, kept by another part of the work
    /// (the `browser_wait` probe; the reader's scripts are `.js` files already).
    const ALLOWED: &[(&str, &str)] = &[(
        "conch-tools/src/engine.rs",
        "(() => {{ const t = document.body ? document.body.innerText",
    )];

    /// A one-line script shorter than this may stay in Rust (`function() { return this[1]; }`).
    const SHORT: usize = 120;

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a source folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The string literals of Rust source, raw or plain, outside comments and char
    /// literals, with the byte each starts at.
    fn string_literals(source: &str) -> Vec<(usize, String)> {
        let b = source.as_bytes();
        let mut found = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                        i += 1;
                    }
                    i += 2;
                }
                b'r' if (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
                    && matches!(b.get(i + 1), Some(b'"' | b'#')) =>
                {
                    let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                    let open = i + 1 + hashes;
                    if b.get(open) != Some(&b'"') {
                        i += 1;
                        continue;
                    }
                    let close = format!("\"{}", "#".repeat(hashes));
                    let end = source[open + 1..]
                        .find(&close)
                        .map_or(b.len(), |e| open + 1 + e);
                    found.push((i, source[open + 1..end].to_owned()));
                    i = end + close.len();
                }
                b'"' => {
                    let start = i;
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    found.push((start, source[start + 1..i.min(b.len())].to_owned()));
                    i += 1;
                }
                b'\'' => {
                    // A char literal ('"', '\'', '\\') or a lifetime.
                    if b.get(i + 1) == Some(&b'\\') {
                        i += 2;
                        while i < b.len() && b[i] != b'\'' {
                            i += 1;
                        }
                    } else if b.get(i + 2) == Some(&b'\'') {
                        i += 2;
                    }
                    i += 1;
                }
                _ => i += 1,
            }
        }
        found
    }

    /// Whether a string literal's text reads as a page function or an expression calling
    /// one: `function(`, `(() =>`, `(a, b) => {`, `() => {`.
    fn looks_like_page_script(text: &str) -> bool {
        let t = text.trim_start();
        if t.starts_with("function(")
            || t.starts_with("function (")
            || t.starts_with("async function")
        {
            return true;
        }
        // A fragment pasted into such functions: `const name = (el) => {`.
        if let Some(rest) = t.strip_prefix("const ")
            && let Some((name, value)) = rest.split_once(" = ")
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
            && value.contains("=>")
        {
            return true;
        }
        let t = t.trim_start_matches('(');
        if !text.trim_start().starts_with('(') {
            return false;
        }
        // `(params) =>` with plain parameter names.
        let Some(close) = t.find(')') else {
            return false;
        };
        t[..close]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ',' || c == ' ' || c == '$')
            && t[close + 1..].trim_start().starts_with("=>")
    }

    /// The page scripts still held in Rust string literals, as `path: start`.
    fn scripts_in_rust(root: &Path) -> Vec<String> {
        let mut files = Vec::new();
        for dir in ["conch-browser/src", "conch-tools/src"] {
            rust_files(&root.join(dir), &mut files);
        }
        let mut left = Vec::new();
        for file in files {
            let source = std::fs::read_to_string(&file).expect("a source file");
            let name = file
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            for (at, text) in string_literals(&source) {
                let short = text.len() < SHORT && !text.contains('\n');
                let allowed = ALLOWED
                    .iter()
                    .any(|(path, start)| *path == name && text.trim_start().starts_with(start));
                if looks_like_page_script(&text) && !short && !allowed {
                    let line = source[..at].lines().count() + 1;
                    let start: String = text.trim_start().chars().take(40).collect();
                    left.push(format!("{name}:{line}: {start}"));
                }
            }
        }
        left
    }

    /// Page scripts live in `.js` files beside their module, never in a Rust string
    /// (issue 30): a new one in a string literal fails here.
    #[test]
    fn issue_30_no_page_script_lives_in_a_rust_string() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let left = scripts_in_rust(&root);
        assert!(
            left.is_empty(),
            "page scripts in Rust strings; move each into a .js file beside its module, \
             loaded with include_str!:\n{}",
            left.join("\n")
        );
    }

    /// The scan sees the shapes a page script takes in a string, and passes the rest.
    #[test]
    fn issue_30_the_scan_knows_a_page_script() {
        let long = "x".repeat(SHORT);
        let source = format!(
            "const A: &str = r#\"function(frame) {{\n  {long}\n}}\"#;\n\
             const B: &str = r\"(() => {{\n}})()\";\n\
             const C: &str = \"(watch, key) => {{ {long} }}\";\n\
             // const D: &str = \"function() {{}}\";\n\
             let c = '\"'; let d = \"<p>(not) a script</p>\";\n"
        );
        let texts: Vec<String> = string_literals(&source)
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        let scripts: Vec<&String> = texts.iter().filter(|t| looks_like_page_script(t)).collect();
        assert_eq!(scripts.len(), 3, "{texts:?}");
        assert!(!looks_like_page_script("(not) a script"));
        assert!(!looks_like_page_script("document.title"));
        assert!(looks_like_page_script(
            "\nconst submitterOf = (el) => {\n  return null;\n};\n"
        ));
        assert!(!looks_like_page_script("const x: u8 = (1) => 2;"));
    }

    /// Every page script file opens with its header, and reads as one piece of script.
    #[test]
    fn issue_30_each_script_file_says_what_it_returns() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        for dir in ["conch-browser/src", "conch-tools/src"] {
            js_files(&root.join(dir), &mut files);
        }
        assert!(files.len() > 20, "{files:?}");
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a script file");
            assert!(text.starts_with("// "), "{} has no header", file.display());
            let script = body(&text);
            assert!(!script.is_empty(), "{} is a header alone", file.display());
            // The reader's scripts carry their own placeholders, filled where installed.
            if !file.ends_with("page/snapshot.js") {
                let checked = script
                    .lines()
                    .filter(|l| !["PRELUDE", "SUBMITTER_OF", "FORM_INPUTS"].contains(&l.trim()))
                    .collect::<Vec<_>>()
                    .join("\n")
                    .replace("(FOCUS_HELD)", "(f)")
                    .replace("__PLENTY__", "1");
                well_formed(&checked).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            }
        }
    }

    fn js_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a source folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                js_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "js") {
                out.push(path);
            }
        }
    }
}
