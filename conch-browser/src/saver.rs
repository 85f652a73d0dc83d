//! Writing `tabs.json` in the background (DATA-9, issue 12): a change of tabs marks the
//! newest state to be saved and returns at once; a writer task saves it after a short
//! pause, off the async threads, so a burst of changes is one write and no conversation
//! waits for two fsyncs under the browser-wide lock.
//!
//! [`TabsSaver::flush`] waits until everything asked so far is on disk; dropping the saver
//! writes what is still pending, so nothing is lost when the runtime goes away.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::home::Home;
use crate::store::TabsFile;

/// How long the writer waits for more changes before it writes.
const PAUSE: Duration = Duration::from_millis(100);

/// The longest [`TabsSaver::flush`] waits.
const FLUSH_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, Default)]
struct Shared {
    /// The newest state not yet handed to the writer, and how many saves it answers.
    pending: Mutex<Option<(TabsFile, u64)>>,
    asked: AtomicU64,
    written: AtomicU64,
    writing: AtomicBool,
    done: tokio::sync::Notify,
    /// Files written so far (for tests).
    writes: AtomicU64,
}

/// Saves a home's tabs in the background, newest state only.
#[derive(Debug)]
pub(crate) struct TabsSaver {
    home: Home,
    shared: Arc<Shared>,
    /// Writes nothing: the errands' browser keeps its tabs in memory only (ERR-20).
    off: bool,
}

impl TabsSaver {
    pub(crate) fn new(home: Home) -> TabsSaver {
        TabsSaver {
            home,
            shared: Arc::default(),
            off: false,
        }
    }

    /// A saver that never writes (the errands' browser, ERR-20).
    pub(crate) fn off(home: Home) -> TabsSaver {
        TabsSaver {
            home,
            shared: Arc::default(),
            off: true,
        }
    }

    /// Marks `tabs` to be written soon and returns at once.
    pub(crate) fn save(&self, tabs: &TabsFile) {
        if self.off {
            return;
        }
        {
            let mut pending = self
                .shared
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let asked = self.shared.asked.fetch_add(1, Ordering::SeqCst) + 1;
            *pending = Some((tabs.clone(), asked));
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime to write from: write now.
            self.write_pending_now();
            return;
        };
        if !self.shared.writing.swap(true, Ordering::SeqCst) {
            runtime.spawn(write_in_background(
                self.home.clone(),
                Arc::clone(&self.shared),
            ));
        }
    }

    /// Waits (bounded) until every state asked for so far is written.
    pub(crate) async fn flush(&self) {
        let target = self.shared.asked.load(Ordering::SeqCst);
        let wait = async {
            loop {
                let done = self.shared.done.notified();
                tokio::pin!(done);
                done.as_mut().enable();
                if self.shared.written.load(Ordering::SeqCst) >= target {
                    return;
                }
                done.await;
            }
        };
        if tokio::time::timeout(FLUSH_WAIT, wait).await.is_err() {
            tracing::warn!(target: "conch_browser", "tabs.json was not written in time");
        }
    }

    fn write_pending_now(&self) {
        let taken = self
            .shared
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some((tabs, asked)) = taken {
            write(&self.home, &tabs);
            self.shared.writes.fetch_add(1, Ordering::SeqCst);
            self.shared.written.fetch_max(asked, Ordering::SeqCst);
            self.shared.done.notify_waiters();
        }
    }
}

impl Drop for TabsSaver {
    fn drop(&mut self) {
        // What the writer has not taken yet is written here; nothing is lost.
        self.write_pending_now();
    }
}

async fn write_in_background(home: Home, shared: Arc<Shared>) {
    loop {
        tokio::time::sleep(PAUSE).await;
        let taken = shared
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some((tabs, asked)) = taken else {
            shared.writing.store(false, Ordering::SeqCst);
            // A save may have come between the take and the store: it would wait for a
            // writer that is gone, so look once more.
            let more = shared
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some();
            if more && !shared.writing.swap(true, Ordering::SeqCst) {
                continue;
            }
            return;
        };
        let at = home.clone();
        if tokio::task::spawn_blocking(move || write(&at, &tabs))
            .await
            .is_err()
        {
            tracing::warn!(target: "conch_browser", "the tabs.json writer stopped");
        }
        shared.writes.fetch_add(1, Ordering::SeqCst);
        shared.written.fetch_max(asked, Ordering::SeqCst);
        shared.done.notify_waiters();
    }
}

fn write(home: &Home, tabs: &TabsFile) {
    if let Err(e) = tabs.save(home) {
        tracing::warn!(target: "conch_browser", error = %e, "tabs.json could not be saved");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::TabsSaver;
    use crate::home::Home;
    use crate::store::{SavedTab, TabsFile};

    fn tabs(n: u64) -> TabsFile {
        let mut tabs = TabsFile::default();
        tabs.conversation_mut("c").tabs.push(SavedTab {
            id: "t1".to_owned(),
            url: format!("http://127.0.0.1/{n}"),
            title: String::new(),
            opener: None,
            last_used: n,
        });
        tabs
    }

    /// Issue 12: a burst of changes returns at once and is one write of the newest
    /// state, not one write (two fsyncs) per change.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_burst_of_changes_is_one_write_of_the_newest() {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = Home::new(dir.path().join("home"));
        std::fs::create_dir_all(home.browser_dir()).expect("the browser folder");
        let saver = TabsSaver::new(home.clone());
        for n in 1..=500 {
            saver.save(&tabs(n));
        }
        saver.flush().await;
        let writes = saver.shared.writes.load(Ordering::SeqCst);
        assert!((1..=3).contains(&writes), "{writes} writes for one burst");
        let on_disk = std::fs::read_to_string(home.tabs_file()).expect("tabs.json");
        assert!(on_disk.contains("http://127.0.0.1/500"), "{on_disk}");
    }

    /// Issue 12: nothing asked for is lost when the saver goes away before its writer ran.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_dropped_saver_writes_what_is_pending() {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = Home::new(dir.path().join("home"));
        std::fs::create_dir_all(home.browser_dir()).expect("the browser folder");
        let saver = TabsSaver::new(home.clone());
        saver.save(&tabs(7));
        drop(saver);
        let on_disk = std::fs::read_to_string(home.tabs_file()).expect("tabs.json");
        assert!(on_disk.contains("http://127.0.0.1/7"), "{on_disk}");
    }
}
