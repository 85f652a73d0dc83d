//! The seam the fetcher writes file contents through ([`Files`]), so a test can stand in a
//! disk that fills up (LAUNCH-5) without filling a real one.
//!
//! Only file contents go through it — the downloaded archive and every unpacked file.
//! Folders, links, permissions and renames use `std::fs` directly: on a full disk the
//! contents are what fail first.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;

/// Where the fetcher writes file contents.
pub trait Files: Send + Sync + fmt::Debug {
    /// Creates the file at `path`, which must not exist yet, for writing. Its folder exists.
    ///
    /// # Errors
    /// Whatever creating the file gives; errors from the writer's `write` and `flush` are
    /// reported the same way (an `io::ErrorKind::StorageFull` error means the disk is full).
    fn create(&self, path: &Path) -> io::Result<Box<dyn Write + Send>>;
}

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealFiles;

impl Files for RealFiles {
    fn create(&self, path: &Path) -> io::Result<Box<dyn Write + Send>> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)?;
        Ok(Box::new(file))
    }
}
