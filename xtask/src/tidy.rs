//! Tidy checks, run as tests by `cargo test`: the layers of ARCHITECTURE.md, conch-policy's
//! short dependency allowlist, the shared lint table, module docs, and no stubs or
//! ignored tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::cmd;

/// Which internal crates each crate may depend on (normal and build dependencies).
/// Any crate may also dev-depend on `conch-fixtures`, the test support.
const LAYERS: &[(&str, &[&str])] = &[
    ("conch-policy", &[]),
    ("conch-cdp", &[]),
    ("conch-browser", &["conch-cdp", "conch-policy"]),
    ("conch-live", &["conch-browser", "conch-cdp"]),
    ("conch-tools", &["conch-browser", "conch-policy"]),
    (
        "conch-gateway",
        &[
            "conch-cdp",
            "conch-policy",
            "conch-browser",
            "conch-live",
            "conch-tools",
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
                    "{} depends on {dep} ({kind}), against ARCHITECTURE.md's layers",
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
        ["conch-cdp depends on conch-browser (normal), against ARCHITECTURE.md's layers"]
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
