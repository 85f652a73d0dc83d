//! Unpacking the archive safely into an empty folder.
//!
//! Two passes. The first reads every entry's name and every link's target and refuses the
//! whole archive, before anything is written, when one would land outside the folder:
//! names must be relative and free of `..` (checked on top of zip's `enclosed_name`), no
//! entry may lie inside a link, no name may repeat, and a link's target must be relative,
//! with `..` only at its start and never climbing above the folder. That last rule is
//! stricter than "resolves inside" (it refuses `a/../b`), and it makes the check sound:
//! the only folders a target climbs out of are real ones this pass has seen, never links.
//! The second pass writes folders and files, then the links last, so no file is ever
//! written through a link; Unix modes are restored (without setuid, setgid or sticky bits).

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use super::disk::Files;
use super::error::{ArchiveProblem, FetchError};

/// More than any Chromium build unpacks to (about 600 MB); a zip bomb stops here.
const MAX_UNPACKED_BYTES: u64 = 8 << 30;

/// A link's target is read whole; real ones are a few dozen bytes.
const MAX_LINK_TARGET: u64 = 4096;

#[derive(Debug)]
enum What {
    Folder { mode: Option<u32> },
    File { mode: Option<u32> },
    Link { target: PathBuf },
}

#[derive(Debug)]
struct Entry {
    index: usize,
    /// Relative, only normal components.
    path: PathBuf,
    what: What,
}

/// Unpacks the zip at `archive` into `root`, which must not exist yet (it is created).
pub(crate) fn extract(archive: &Path, root: &Path, files: &dyn Files) -> Result<(), FetchError> {
    let file = fs::File::open(archive).map_err(|error| FetchError::local(archive, error))?;
    let mut zip = zip::ZipArchive::new(io::BufReader::new(file))
        .map_err(|error| FetchError::archive(ArchiveProblem::NotAZip(error)))?;
    let entries = survey(&mut zip)?;
    fs::create_dir(root).map_err(|error| FetchError::local(root, error))?;

    let mut unpacked: u64 = 0;
    let mut folder_modes = Vec::new();
    for entry in &entries {
        let dest = root.join(&entry.path);
        match &entry.what {
            What::Folder { mode } => {
                fs::create_dir_all(&dest).map_err(|error| FetchError::local(&dest, error))?;
                folder_modes.extend(mode.map(|mode| (dest.clone(), mode)));
            }
            What::File { mode } => {
                if let Some(parent) = dest.parent() {
                    fs::create_dir_all(parent).map_err(|error| FetchError::local(parent, error))?;
                }
                let mut reader = zip
                    .by_index(entry.index)
                    .map_err(|error| damaged(entry, error))?;
                let mut writer = files
                    .create(&dest)
                    .map_err(|error| FetchError::local(&dest, error))?;
                copy(&mut reader, &mut writer, &dest, entry, &mut unpacked)?;
                drop(writer);
                if let Some(mode) = mode {
                    set_mode(&dest, mode & 0o777)?;
                }
            }
            What::Link { .. } => {}
        }
    }
    for entry in &entries {
        if let What::Link { target } = &entry.what {
            let dest = root.join(&entry.path);
            if let Some(parent) = dest.parent() {
                fs::create_dir_all(parent).map_err(|error| FetchError::local(parent, error))?;
            }
            make_link(target, &dest)?;
        }
    }
    // Folder modes last, so a read-only folder did not stop its files being written; the
    // owner keeps full access, so the folder can be replaced or removed later.
    for (folder, mode) in folder_modes {
        set_mode(&folder, (mode & 0o777) | 0o700)?;
    }
    Ok(())
}

/// The first pass: every entry's safe path and kind, or the reason the archive is refused.
fn survey<R: Read + io::Seek>(zip: &mut zip::ZipArchive<R>) -> Result<Vec<Entry>, FetchError> {
    let mut entries = Vec::with_capacity(zip.len());
    let mut declared: u64 = 0;
    for index in 0..zip.len() {
        let mut file = zip.by_index(index).map_err(|error| {
            FetchError::archive(ArchiveProblem::Damaged {
                index,
                source: error.into(),
            })
        })?;
        let name = String::from_utf8_lossy(file.name_raw()).into_owned();
        let path = (!looks_absolute_or_climbs(&name))
            .then(|| file.enclosed_name())
            .flatten()
            .and_then(|path| normal_path(&path))
            .ok_or_else(|| {
                FetchError::archive(ArchiveProblem::UnsafePath { name: name.clone() })
            })?;
        let what = if file.is_symlink() {
            let mut target = Vec::new();
            (&mut file)
                .take(MAX_LINK_TARGET + 1)
                .read_to_end(&mut target)
                .map_err(|error| {
                    FetchError::archive(ArchiveProblem::Damaged {
                        index,
                        source: error.into(),
                    })
                })?;
            let safe = std::str::from_utf8(&target).ok().filter(|target| {
                target.len() as u64 <= MAX_LINK_TARGET && stays_inside(&path, Path::new(target))
            });
            match safe {
                Some(target) => What::Link {
                    target: PathBuf::from(target),
                },
                None => {
                    let shown = target.get(..200).unwrap_or(&target);
                    return Err(FetchError::archive(ArchiveProblem::UnsafeLink {
                        name,
                        target: String::from_utf8_lossy(shown).into_owned(),
                    }));
                }
            }
        } else if file.is_dir() {
            What::Folder {
                mode: file.unix_mode(),
            }
        } else {
            declared = declared.saturating_add(file.size());
            What::File {
                mode: file.unix_mode(),
            }
        };
        entries.push(Entry { index, path, what });
    }
    if declared > MAX_UNPACKED_BYTES {
        return Err(FetchError::archive(ArchiveProblem::TooLarge {
            limit: MAX_UNPACKED_BYTES,
        }));
    }

    // No repeats, and nothing inside a link.
    let mut seen = HashSet::new();
    for entry in &entries {
        if !seen.insert(entry.path.as_path()) {
            return Err(FetchError::archive(ArchiveProblem::Duplicate {
                name: entry.path.display().to_string(),
            }));
        }
    }
    let links: HashSet<&Path> = entries
        .iter()
        .filter(|entry| matches!(entry.what, What::Link { .. }))
        .map(|entry| entry.path.as_path())
        .collect();
    for entry in &entries {
        if let Some(link) = entry.path.ancestors().skip(1).find(|a| links.contains(a)) {
            return Err(FetchError::archive(ArchiveProblem::ThroughLink {
                name: entry.path.display().to_string(),
                link: link.display().to_string(),
            }));
        }
    }
    Ok(entries)
}

/// Whether an entry's raw name is absolute (`/x`, `\\x`, `C:x`) or has a `..` part, in
/// either separator. zip's `enclosed_name` quietly makes some of these relative; an archive
/// that has them is not one to trust at all.
fn looks_absolute_or_climbs(name: &str) -> bool {
    let mut parts = name.split(['/', '\\']);
    let first = parts.next().unwrap_or_default();
    (first.is_empty() && !name.is_empty())
        || first.contains(':')
        || first == ".."
        || parts.any(|part| part == "..")
}

/// `path` with only its normal components, or `None` if it has any other (`..`, a root, a
/// drive) or none at all.
fn normal_path(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// Whether the link at `link` (relative to the root) pointing at `target` stays inside the
/// root: relative, `..` only at the start, never above the root.
fn stays_inside(link: &Path, target: &Path) -> bool {
    if target.as_os_str().is_empty() || target.to_string_lossy().contains('\\') {
        return false;
    }
    // The link's folder, counted in components below the root.
    let mut depth = link.components().count().saturating_sub(1);
    let mut descended = false;
    for component in target.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if descended || depth == 0 {
                    return false;
                }
                depth -= 1;
            }
            Component::Normal(_) => descended = true,
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

/// Copies one entry, telling a damaged archive (reading) from a disk problem (writing).
fn copy(
    reader: &mut impl Read,
    writer: &mut dyn Write,
    dest: &Path,
    entry: &Entry,
    unpacked: &mut u64,
) -> Result<(), FetchError> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(damaged(entry, error)),
        };
        *unpacked = unpacked.saturating_add(n as u64);
        if *unpacked > MAX_UNPACKED_BYTES {
            return Err(FetchError::archive(ArchiveProblem::TooLarge {
                limit: MAX_UNPACKED_BYTES,
            }));
        }
        let chunk = buf.get(..n).unwrap_or_default();
        writer
            .write_all(chunk)
            .map_err(|error| FetchError::local(dest, error))?;
    }
    writer
        .flush()
        .map_err(|error| FetchError::local(dest, error))
}

fn damaged(
    entry: &Entry,
    error: impl Into<Box<dyn std::error::Error + Send + Sync>>,
) -> FetchError {
    FetchError::archive(ArchiveProblem::Damaged {
        index: entry.index,
        source: error.into(),
    })
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> Result<(), FetchError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|error| FetchError::local(path, error))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> Result<(), FetchError> {
    Ok(())
}

#[cfg(unix)]
fn make_link(target: &Path, dest: &Path) -> Result<(), FetchError> {
    std::os::unix::fs::symlink(target, dest).map_err(|error| FetchError::local(dest, error))
}

/// Chrome for Testing's Windows build has no links, and making one needs a privilege.
#[cfg(not(unix))]
fn make_link(_target: &Path, _dest: &Path) -> Result<(), FetchError> {
    Ok(())
}

/// Makes `path` executable by whoever may read it (the archive may not say so).
#[cfg(unix)]
pub(crate) fn ensure_executable(path: &Path) -> Result<(), FetchError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(path)
        .map_err(|error| FetchError::local(path, error))?
        .permissions()
        .mode();
    let wanted = mode | ((mode & 0o444) >> 2) | 0o100;
    if wanted == mode {
        return Ok(());
    }
    set_mode(path, wanted & 0o7777)
}

#[cfg(not(unix))]
pub(crate) fn ensure_executable(_path: &Path) -> Result<(), FetchError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_targets() {
        let inside = |link: &str, target: &str| stays_inside(Path::new(link), Path::new(target));
        // Chrome for Testing's macOS framework links.
        assert!(inside(
            "chrome-mac-x64/App.app/Contents/Frameworks/F.framework/Versions/Current",
            "148.0.7778.96"
        ));
        assert!(inside("a/F.framework/F", "Versions/Current/F"));
        assert!(inside("a/b/link", "../c/d"));
        assert!(inside("a/b/link", "../../c"));
        assert!(inside("a/link", "./c"));
        assert!(!inside("a/b/link", "../../../c"));
        assert!(!inside("link", "../x"));
        assert!(!inside("a/link", "/etc"));
        assert!(!inside("a/link", "b/../c"));
        assert!(!inside("a/link", "b/../../x"));
        assert!(!inside("a/link", ""));
        assert!(!inside("a/link", "..\\..\\x"));
    }

    #[test]
    fn names() {
        assert!(looks_absolute_or_climbs("/etc/passwd"));
        assert!(looks_absolute_or_climbs("\\\\server\\share"));
        assert!(looks_absolute_or_climbs("C:\\x"));
        assert!(looks_absolute_or_climbs("../x"));
        assert!(looks_absolute_or_climbs("a\\..\\..\\x"));
        assert!(looks_absolute_or_climbs("a/../b"));
        assert!(!looks_absolute_or_climbs("chrome-linux64/chrome"));
        assert!(!looks_absolute_or_climbs("a/..b/c.."));
        let normal = |name: &str| normal_path(Path::new(name));
        assert_eq!(normal("a/./b"), Some(PathBuf::from("a/b")));
        assert_eq!(normal("a/../b"), None);
        assert_eq!(normal("/a"), None);
        assert_eq!(normal("."), None);
    }
}
