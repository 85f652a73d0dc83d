//! The filesystem half of the upload rules: where each file the agent named comes from,
//! where it really leads after every link, and how big it is (UP-2, UP-3, UP-8, UP-13).
//! conch-policy's [`check_upload`] then decides from these facts alone.
//!
//! A hard link to one of Conch's sealed secrets (its device key, a `*.secrets.json` or a
//! set-aside copy) is refused by the file's identity, as its name says nothing (BE-3).
//!
//! Deliberately absent: reading a file's contents. Only its metadata is looked at here;
//! the bytes go to the page later, and never into a result (TOOL-13).

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use conch_browser::Home;
use conch_policy::{
    FileFacts, FileOrigin, Refusal, RefusalCode, UploadPlaces, Verdict, check_upload,
    is_sealed_secret_name,
};

use crate::embedder::ChatFiles;
use crate::error::ToolError;

/// A file that passed the rules, with the facts the question names.
#[derive(Debug, Clone)]
pub(crate) struct CheckedFile {
    /// What the rules judged.
    pub(crate) facts: FileFacts,
}

/// Gathers the facts of `files` and judges them; the first refusal names its rule.
pub(crate) fn check(
    chat_files: &Arc<dyn ChatFiles>,
    home: &Home,
    conversation: &str,
    files: &[String],
) -> Result<Vec<CheckedFile>, ToolError> {
    if files.is_empty() {
        return Err(ToolError::Usage(
            "browser_upload needs at least one file; name the files to upload.".to_owned(),
        ));
    }
    let work = chat_files
        .work_folder(conversation)
        .map(|w| std::fs::canonicalize(&w).unwrap_or(w));
    let attachments: Vec<PathBuf> = chat_files
        .attachments(conversation)
        .into_iter()
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
        .collect();
    let made: Vec<PathBuf> = chat_files
        .made(conversation)
        .into_iter()
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
        .collect();
    let mut facts = Vec::with_capacity(files.len());
    for name in files {
        let requested = PathBuf::from(name);
        let full = match (&work, requested.is_absolute()) {
            (_, true) => requested.clone(),
            (Some(work), false) => work.join(&requested),
            (None, false) => requested.clone(),
        };
        let resolved = std::fs::canonicalize(&full).unwrap_or_else(|_| full.clone());
        let origin = if attachments.contains(&resolved) {
            FileOrigin::AttachedInChat
        } else if made.contains(&resolved) {
            FileOrigin::MadeInChat
        } else if work
            .as_ref()
            .is_some_and(|w| !requested.is_absolute() || requested.starts_with(w))
        {
            FileOrigin::WorkFolder
        } else {
            FileOrigin::Elsewhere
        };
        let size = std::fs::metadata(&resolved).map(|m| m.len()).unwrap_or(0);
        facts.push(FileFacts {
            origin,
            requested,
            resolved,
            links: links_on_the_way(&full),
            size,
        });
    }
    let root = home.root();
    let places = UploadPlaces {
        work_folder: work.unwrap_or_default(),
        conch_home: std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf()),
        // Resolved like the files' own paths, so a home reached through a link (`/tmp`
        // on macOS, a linked home folder) is still recognised.
        protected: home.protected_paths().iter().map(|p| resolved(p)).collect(),
    };
    if let Verdict::Refuse(refusal) = check_upload(&facts, &places) {
        return Err(refusal.into());
    }
    // A hard link to a sealed secret has a name of its own: it is found by identity
    // (BE-3, DATA-10).
    let sealed = sealed_identities(home);
    for file in &facts {
        if identity(&file.resolved).is_some_and(|id| sealed.contains(&id)) {
            return Err(Refusal::about(RefusalCode::UploadSealedSecret, file.item().name).into());
        }
    }
    // Missing files are named only after the rules, so a refusal never confirms that a
    // forbidden file exists.
    for file in &facts {
        if !file.resolved.is_file() {
            return Err(ToolError::Usage(format!(
                "There is no file “{}”; check the name, or list the work folder's files with the person.",
                file.requested.display()
            )));
        }
    }
    Ok(facts
        .into_iter()
        .map(|facts| CheckedFile { facts })
        .collect())
}

/// `path` with every link followed: the file's own, else its folder's with its name.
fn resolved(path: &Path) -> PathBuf {
    if let Ok(full) = std::fs::canonicalize(path) {
        return full;
    }
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|dir| dir.join(name))
            .unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
}

/// A file's identity on disk (device and inode on Unix), the same for every hard link.
#[cfg(unix)]
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Windows: hard links to Conch's sealed files are not looked for (their names are).
#[cfg(not(unix))]
fn identity(_path: &Path) -> Option<(u64, u64)> {
    None
}

/// The identities of the home's sealed secrets: the device key file, the sealed files
/// and their set-aside copies.
fn sealed_identities(home: &Home) -> Vec<(u64, u64)> {
    let Ok(entries) = std::fs::read_dir(home.root()) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| is_sealed_secret_name(&e.file_name().to_string_lossy()))
        .filter_map(|e| identity(&e.path()))
        .collect()
}

/// Each symbolic link met while walking `path`, as the absolute path it leads to.
fn links_on_the_way(path: &Path) -> Vec<PathBuf> {
    let mut links = Vec::new();
    let mut walked = PathBuf::new();
    for component in path.components() {
        walked.push(component);
        if !matches!(component, Component::Normal(_)) {
            continue;
        }
        let is_link = std::fs::symlink_metadata(&walked).is_ok_and(|m| m.file_type().is_symlink());
        if is_link && let Ok(target) = std::fs::read_link(&walked) {
            let target = match (target.is_absolute(), walked.parent()) {
                (true, _) | (false, None) => target,
                (false, Some(parent)) => parent.join(target),
            };
            links.push(std::fs::canonicalize(&target).unwrap_or(target));
        }
    }
    links
}
