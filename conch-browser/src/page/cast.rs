//! One screencast per page at a time, shared by the live view and the steps' thumbnails
//! (LIVE-2, LIVE-6).
//!
//! A page's screencast is one per DevTools session: a second `Page.startScreencast` would
//! change the first's size and a `Page.stopScreencast` would end it. The live view
//! (conch-live) casts the page while someone watches; a step's thumbnail
//! ([`thumbnail`](super::thumbnail)) takes one small frame of a cast of its own when
//! nobody does, which costs the browser about half of a `Page.captureScreenshot` with a
//! clip (that one lays the page out at the clip's scale and back, on the page's own main
//! thread, issue 32). While the live view casts, the thumbnail is captured as before.
//!
//! [`LiveCast::begin`] makes the live view the page's caster until the [`LiveCast`] is
//! dropped, once a thumbnail's frame in progress is taken; a thumbnail casts only a page
//! nobody casts, so neither ever stops or reshapes the other's cast.
//!
//! Deliberately absent: the live view's own cast loop, its frames and its watchers
//! (conch-live). The live view's frames are not reused for thumbnails: the newest one
//! when a step settles may be from before the step's change (a loaded machine's frames
//! lag a frame or more behind the page), which a thumbnail must never show.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use conch_cdp::Session;
use tokio::sync::OwnedMutexGuard;

use crate::sync::lock;

/// Who casts one page.
#[derive(Debug, Default)]
pub(crate) struct Cast {
    /// Held by whoever runs a screencast on the page: the live view for as long as it
    /// casts it, a thumbnail for its one frame.
    owner: Arc<tokio::sync::Mutex<()>>,
    /// Whether the live view casts the page now.
    live: AtomicBool,
}

/// The casts of the pages someone casts now, by DevTools session.
fn casts() -> std::sync::MutexGuard<'static, HashMap<String, Weak<Cast>>> {
    static CASTS: OnceLock<Mutex<HashMap<String, Weak<Cast>>>> = OnceLock::new();
    lock(CASTS.get_or_init(Default::default))
}

fn key(page: &Session) -> String {
    page.id()
        .map_or_else(String::new, |id| id.as_str().to_owned())
}

impl Cast {
    /// The cast of `page`, made when nobody casts it.
    pub(crate) fn of(page: &Session) -> Arc<Cast> {
        let mut casts = casts();
        let key = key(page);
        if let Some(cast) = casts.get(&key).and_then(Weak::upgrade) {
            return cast;
        }
        casts.retain(|_, c| c.strong_count() > 0);
        let cast = Arc::new(Cast::default());
        casts.insert(key, Arc::downgrade(&cast));
        cast
    }

    /// Whether the live view casts the page now.
    pub(crate) fn live(&self) -> bool {
        self.live.load(Ordering::SeqCst)
    }

    /// The page's screencast for one frame, when nobody runs one now.
    pub(crate) fn try_own(&self) -> Option<OwnedMutexGuard<()>> {
        Arc::clone(&self.owner).try_lock_owned().ok()
    }
}

/// The live view's screencast of one page (LIVE-2): while it lives, the page's steps'
/// thumbnails never cast the page themselves.
#[derive(Debug)]
pub struct LiveCast {
    cast: Arc<Cast>,
    _owner: OwnedMutexGuard<()>,
}

impl LiveCast {
    /// Makes the live view `page`'s caster, once a thumbnail's frame in progress is taken
    /// (a few tens of milliseconds). Call it before `Page.startScreencast`, and drop it
    /// after `Page.stopScreencast`.
    pub async fn begin(page: &Session) -> LiveCast {
        let cast = Cast::of(page);
        let owner = Arc::clone(&cast.owner).lock_owned().await;
        cast.live.store(true, Ordering::SeqCst);
        LiveCast {
            cast,
            _owner: owner,
        }
    }
}

impl Drop for LiveCast {
    fn drop(&mut self) {
        self.cast.live.store(false, Ordering::SeqCst);
    }
}
