//! Tidy checks, run as tests by `cargo test`: the layers of the root `ARCHITECTURE.md`,
//! conch-policy's short dependency allowlist, the shared lint table, module docs, no stubs
//! or ignored tests, and every requirement ID the workspace cites stated in
//! `docs/requirements.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::cmd;

/// Which internal crates each crate may depend on (normal and build dependencies), as the
/// code map of the root `ARCHITECTURE.md` draws them. Any crate may also dev-depend on
/// `conch-fixtures`, the test support.
const LAYERS: &[(&str, &[&str])] = &[
    ("conch-policy", &[]),
    ("conch-cdp", &[]),
    ("conch-browser", &["conch-cdp", "conch-policy"]),
    (
        "conch-live",
        &["conch-browser", "conch-cdp", "conch-policy"],
    ),
    ("conch-tools", &["conch-browser", "conch-policy"]),
    (
        "conch-panel",
        &["conch-browser", "conch-live", "conch-policy", "conch-tools"],
    ),
    (
        "conch-gateway",
        &[
            "conch-cdp",
            "conch-policy",
            "conch-browser",
            "conch-live",
            "conch-tools",
            "conch-panel",
        ],
    ),
    ("conch-fixtures", &[]),
    ("xtask", &[]),
];

/// conch-policy's only permitted normal dependencies: think twice before adding one.
const POLICY_ALLOWLIST: &[&str] = &["url", "psl", "ipnet", "thiserror", "serde"];

struct Package {
    name: String,
    manifest: PathBuf,
    /// (dependency name, kind: "normal" | "dev" | "build")
    deps: Vec<(String, String)>,
}

fn workspace_packages() -> Vec<Package> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(cmd::root())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata failed");
    let metadata: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata is JSON");
    metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| Package {
            name: p["name"].as_str().unwrap_or_default().to_owned(),
            manifest: PathBuf::from(p["manifest_path"].as_str().unwrap_or_default()),
            deps: p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| {
                    (
                        d["name"].as_str().unwrap_or_default().to_owned(),
                        d["kind"].as_str().unwrap_or("normal").to_owned(),
                    )
                })
                .collect(),
        })
        .collect()
}

fn internal_names(packages: &[Package]) -> Vec<&str> {
    packages.iter().map(|p| p.name.as_str()).collect()
}

/// The violations of the layer table in a set of packages: pure, so it is tested below.
fn layer_violations(packages: &[Package]) -> Vec<String> {
    let layers: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let internal = internal_names(packages);
    let mut bad = Vec::new();
    for package in packages {
        let Some(allowed) = layers.get(package.name.as_str()) else {
            bad.push(format!(
                "{} is not in xtask's layer table: add it with its allowed dependencies",
                package.name
            ));
            continue;
        };
        for (dep, kind) in &package.deps {
            if !internal.contains(&dep.as_str()) {
                continue;
            }
            let ok = allowed.contains(&dep.as_str()) || (kind == "dev" && dep == "conch-fixtures");
            if !ok {
                bad.push(format!(
                    "{} depends on {dep} ({kind}), against the layers in ARCHITECTURE.md (repository root)",
                    package.name
                ));
            }
        }
    }
    bad
}

fn policy_violations(packages: &[Package]) -> Vec<String> {
    packages
        .iter()
        .filter(|p| p.name == "conch-policy")
        .flat_map(|p| &p.deps)
        .filter(|(dep, kind)| kind != "dev" && !POLICY_ALLOWLIST.contains(&dep.as_str()))
        .map(|(dep, _)| {
            format!("conch-policy depends on {dep}, outside its allowlist {POLICY_ALLOWLIST:?}")
        })
        .collect()
}

#[test]
fn internal_dependencies_follow_the_layers() {
    let bad = layer_violations(&workspace_packages());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn conch_policy_stays_within_its_allowlist() {
    let packages = workspace_packages();
    assert!(packages.iter().any(|p| p.name == "conch-policy"));
    let bad = policy_violations(&packages);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The checks themselves must be able to fail: an upward edge and a foreign dependency.
#[test]
fn tidy_catches_upward_edges_and_foreign_policy_deps() {
    let package = |name: &str, deps: &[(&str, &str)]| Package {
        name: name.to_owned(),
        manifest: PathBuf::new(),
        deps: deps
            .iter()
            .map(|(d, k)| ((*d).to_owned(), (*k).to_owned()))
            .collect(),
    };
    let packages = vec![
        package("conch-policy", &[("tokio", "normal"), ("insta", "dev")]),
        package("conch-cdp", &[("conch-browser", "normal")]),
        package(
            "conch-browser",
            &[("conch-cdp", "normal"), ("conch-fixtures", "dev")],
        ),
        package("conch-fixtures", &[]),
    ];
    assert_eq!(
        layer_violations(&packages),
        [
            "conch-cdp depends on conch-browser (normal), against the layers in ARCHITECTURE.md (repository root)"
        ]
    );
    assert_eq!(policy_violations(&packages).len(), 1);
}

#[test]
fn every_crate_uses_the_workspace_lints() {
    for package in workspace_packages() {
        let text = std::fs::read_to_string(&package.manifest).expect("manifest");
        assert!(
            text.contains("[lints]\nworkspace = true"),
            "{} does not say [lints] workspace = true",
            package.name
        );
    }
}

fn rust_sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != "target" && name != ".git" && name != "node_modules" {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&cmd::root(), &mut out);
    out
}

/// Every library and binary source file opens with a `//!` doc saying what it is for.
#[test]
fn every_module_starts_with_a_doc_comment() {
    let missing: Vec<String> = rust_sources()
        .into_iter()
        .filter(|p| {
            p.components()
                .any(|c| c.as_os_str() == "src" || c.as_os_str() == "examples")
        })
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without a //! doc:\n{}",
        missing.join("\n")
    );
}

/// A stub is not done, and an ignored test proves nothing.
#[test]
fn no_stubs_or_ignored_tests() {
    let needles = [
        concat!("to", "do!("),
        concat!("unimple", "mented!("),
        concat!("#[", "ignore"),
        concat!("#[", "should_panic"),
    ];
    let found: Vec<String> = rust_sources()
        .into_iter()
        .flat_map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            needles
                .iter()
                .filter(|n| text.contains(*n))
                .map(|n| format!("{}: {n}", p.display()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The prefixes of requirement IDs (`NET-3`, `SEC-1`, …), one per area of
/// `docs/requirements.md`.
const REQUIREMENT_PREFIXES: &[&str] = &[
    "LAUNCH", "DATA", "TOOL", "SNAP", "PERM", "HS", "SEC", "NET", "UP", "DL", "TAB", "GES", "DLG",
    "FORM", "BOT", "HAND", "LIVE", "BE", "ERR", "PROTO", "AMB",
];

/// The requirement IDs `text` cites: `NET-3` as a whole word, and a test named after one,
/// ID first in snake case (`fn net_3_…`). Pure, so it is tested below.
fn cited_requirements(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    // The digits that start `tail` when a non-word follows them (`NET-3`, not `NET-3a`).
    let number = |tail: &str, then: fn(Option<u8>) -> bool| {
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0 && then(tail.as_bytes().get(digits).copied()))
            .then(|| tail[..digits].to_owned())
    };
    let mut found = Vec::new();
    for (at, &b) in bytes.iter().enumerate() {
        if !b.is_ascii_alphabetic() || (at > 0 && word(bytes[at - 1])) {
            continue;
        }
        let rest = &text[at..];
        let after_fn = bytes[..at].ends_with(b"fn ");
        for prefix in REQUIREMENT_PREFIXES {
            let head = &rest.as_bytes()[..rest.len().min(prefix.len() + 1)];
            if head.len() <= prefix.len()
                || !head[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
            {
                continue;
            }
            let tail = &rest[prefix.len() + 1..];
            let cited = match head[prefix.len()] {
                b'-' if &head[..prefix.len()] == prefix.as_bytes() => number(tail, |n| {
                    !n.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
                }),
                // `fn net_3_keep_alive…`: a test named after its requirement.
                b'_' if after_fn && head[..prefix.len()].iter().all(u8::is_ascii_lowercase) => {
                    number(tail, |n| n == Some(b'_'))
                }
                _ => None,
            };
            if let Some(n) = cited {
                found.push(format!("{prefix}-{n}"));
            }
        }
    }
    found
}

/// The IDs `docs/requirements.md` states: the first cell of each table row.
fn stated_requirements(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("| "))
        .filter_map(|row| row.split(" |").next())
        .filter(|id| cited_requirements(id).first().is_some_and(|c| c == id))
        .map(str::to_owned)
        .collect()
}

/// Each citation in `files` (path, text) that `stated` lacks, as "path: ID".
fn unresolved_citations(files: &[(String, String)], stated: &[String]) -> Vec<String> {
    let mut bad: Vec<String> = files
        .iter()
        .flat_map(|(path, text)| {
            cited_requirements(text)
                .into_iter()
                .filter(|id| !stated.contains(id))
                .map(move |id| format!("{path}: {id}"))
        })
        .collect();
    bad.dedup();
    bad
}

/// The workspace's Rust and Markdown files, but the requirements file itself.
fn citing_files() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != "target" && name != ".git" && name != "node_modules" {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
                out.push(path);
            }
        }
    }
    let root = cmd::root();
    let mut paths = Vec::new();
    walk(&root, &mut paths);
    paths
        .into_iter()
        .filter(|p| !p.ends_with("docs/requirements.md"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let shown = p.strip_prefix(&root).unwrap_or(&p).display().to_string();
            (shown, text)
        })
        .collect()
}

/// Every requirement ID the code, tests and docs cite is stated in `docs/requirements.md`,
/// so it resolves inside the repository.
#[test]
fn every_cited_requirement_resolves() {
    let path = cmd::root().join("docs/requirements.md");
    let text = std::fs::read_to_string(&path).expect("docs/requirements.md is readable");
    let stated = stated_requirements(&text);
    assert!(stated.len() > 100, "only {} rows were read", stated.len());
    let files = citing_files();
    assert!(files.iter().any(|(p, _)| p.ends_with("tidy.rs")));
    let bad = unresolved_citations(&files, &stated);
    assert!(
        bad.is_empty(),
        "requirement IDs cited but not stated in docs/requirements.md (add their rows):\n{}",
        bad.join("\n")
    );
}

/// The check itself must be able to fail: a fake citation, in both spellings, has no row.
#[test]
fn tidy_catches_a_citation_without_a_row() {
    let rows = "| ID | Requirement | Crate |\n| --- | --- | --- |\n\
                | NET-3 | Private addresses are refused. | conch-policy |\n\
                | SEC-1 | Secret fields. | conch-policy |\n";
    let stated = stated_requirements(rows);
    assert_eq!(stated, ["NET-3", "SEC-1"]);
    // Assembled, so this file cites nothing it does not mean to.
    let fake = concat!("NET", "-", "999");
    let files = vec![
        (
            "a.rs".to_owned(),
            format!("/// {fake}: a rule nobody wrote.\n/// (NET-3, SEC-1)\nfn x() {{}}"),
        ),
        (
            "b.rs".to_owned(),
            concat!("#[test]\nfn ", "sec", "_77_", "a_test() {}").to_owned(),
        ),
        (
            "c.rs".to_owned(),
            // Not citations: a longer word, a lone prefix, letters after the digits.
            "SUNSET-3 PIN-12 NET- UP-2x TOOL-1_b sec_1_x fn setup_3_()".to_owned(),
        ),
    ];
    assert_eq!(
        unresolved_citations(&files, &stated),
        [
            format!("a.rs: {fake}"),
            concat!("b.rs: SEC", "-77").to_owned()
        ]
    );
}
