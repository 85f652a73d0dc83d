//! Download file names (DL-2, DL-4, AMB-9).
//!
//! A suggested name becomes one safe file name: the last path segment only (no
//! separators, no traversal, no absolute path), no control characters or characters
//! Windows refuses, no leading dots, no trailing dots or spaces, not a Windows device
//! name, at most 200 bytes. A name already taken in Downloads gets a numbered suffix
//! before its extension, " (1)", " (2)", …, instead of overwriting. Taken names compare
//! ignoring case, as on the disks of macOS and Windows.

use std::path::{Path, PathBuf};

/// The name used when nothing is left of the suggested one.
pub const FALLBACK_NAME: &str = "download";

const MAX_NAME_BYTES: usize = 200;

const DEVICE_NAMES: &[&str] = &[
    "con", "prn", "aux", "nul", "com0", "com1", "com2", "com3", "com4", "com5", "com6", "com7",
    "com8", "com9", "lpt0", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
    "conin$", "conout$",
];

/// Makes a suggested download name safe to create inside Downloads.
pub fn safe_file_name(suggested: &str) -> String {
    let last = suggested.rsplit(['/', '\\']).next().unwrap_or_default();
    let mut name: String = last
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*') {
                '_'
            } else {
                c
            }
        })
        .collect();
    name = name
        .trim_start_matches(['.', ' '])
        .trim_end_matches(['.', ' '])
        .to_owned();
    if name.is_empty() {
        return FALLBACK_NAME.to_owned();
    }
    let stem_lower = name
        .split('.')
        .next()
        .unwrap_or_default()
        .trim_end()
        .to_ascii_lowercase();
    if DEVICE_NAMES.contains(&stem_lower.as_str()) {
        name.insert(0, '_');
    }
    truncate_keeping_extension(&name, MAX_NAME_BYTES)
}

/// Joins a suggested name onto the Downloads folder, made safe: the result is always
/// directly inside `downloads` (DL-2).
pub fn safe_join(downloads: &Path, suggested: &str) -> PathBuf {
    downloads.join(safe_file_name(suggested))
}

/// The first free name for `name` among `taken`: `report.pdf`, else `report (1).pdf`,
/// `report (2).pdf`… (DL-4). Double extensions such as `.tar.gz` stay together.
pub fn numbered_name<S: AsRef<str>>(name: &str, taken: &[S]) -> String {
    let is_taken = |candidate: &str| {
        taken
            .iter()
            .any(|t| t.as_ref().to_lowercase() == candidate.to_lowercase())
    };
    if !is_taken(name) {
        return name.to_owned();
    }
    let (stem, ext) = split_extension(name);
    (1u32..)
        .map(|n| format!("{stem} ({n}){ext}"))
        .find(|candidate| !is_taken(candidate))
        .unwrap_or_else(|| name.to_owned())
}

/// Splits `archive.tar.gz` into `archive` and `.tar.gz`, `cv.pdf` into `cv` and `.pdf`.
fn split_extension(name: &str) -> (&str, &str) {
    let lower = name.to_ascii_lowercase();
    for double in [".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst"] {
        if lower.ends_with(double) && lower.len() > double.len() {
            let at = name.len() - double.len();
            return (&name[..at], &name[at..]);
        }
    }
    match name.rfind('.') {
        Some(at) if at > 0 => (&name[..at], &name[at..]),
        _ => (name, ""),
    }
}

fn truncate_keeping_extension(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_owned();
    }
    let (stem, ext) = split_extension(name);
    let ext = if ext.len() > max / 2 { "" } else { ext };
    let mut cut = max - ext.len();
    while !stem.is_char_boundary(cut.min(stem.len())) {
        cut -= 1;
    }
    format!("{}{ext}", &stem[..cut.min(stem.len())])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dl_2_safe_join_stays_in_downloads() {
        let downloads = Path::new("/w/Downloads");
        assert_eq!(safe_join(downloads, "../../x"), Path::new("/w/Downloads/x"));
        assert_eq!(safe_join(downloads, "a/b"), Path::new("/w/Downloads/b"));
        assert_eq!(safe_join(downloads, "CON"), Path::new("/w/Downloads/_CON"));
        assert_eq!(
            safe_join(downloads, "con.txt"),
            Path::new("/w/Downloads/_con.txt")
        );
        assert_eq!(
            safe_join(downloads, ".."),
            Path::new("/w/Downloads/download")
        );
        assert_eq!(
            safe_join(downloads, "C:\\Windows\\evil.dll"),
            Path::new("/w/Downloads/evil.dll")
        );
        assert_eq!(
            safe_join(downloads, ".bashrc"),
            Path::new("/w/Downloads/bashrc")
        );
    }

    #[test]
    fn dl_2_long_names_keep_their_extension() {
        let long = format!("{}.pdf", "é".repeat(300));
        let safe = safe_file_name(&long);
        assert!(safe.len() <= MAX_NAME_BYTES);
        assert!(safe.ends_with(".pdf"));
    }

    #[test]
    fn dl_4_taken_names_get_a_number() {
        assert_eq!(numbered_name("cv.pdf", &["other.pdf"]), "cv.pdf");
        assert_eq!(numbered_name("cv.pdf", &["CV.pdf"]), "cv (1).pdf");
        assert_eq!(
            numbered_name("cv.pdf", &["cv.pdf", "cv (1).pdf"]),
            "cv (2).pdf"
        );
        assert_eq!(numbered_name("a.tar.gz", &["a.tar.gz"]), "a (1).tar.gz");
        assert_eq!(numbered_name("README", &["README"]), "README (1)");
    }
}
