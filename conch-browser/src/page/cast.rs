//! Who may shoot a page while the live view casts it (LIVE-2, LIVE-6).
//!
//! A step's thumbnail ([`thumbnail`](super::thumbnail)) is a `Page.captureScreenshot`
//! scaled with a clip when nobody watches: the browser lays the page out at the clip's
//! scale for it and back, which stalls a screencast running on the page at that moment
//! (the live view then sends no frame more, issue 32). So while the live view casts a
//! page, its thumbnails are captured whole and unscaled; and the live view starts its
//! cast only once a scaled capture in progress is done.
//!
//! [`LiveCast::begin`] makes the live view the page's caster until the [`LiveCast`] is
//! dropped; a scaled capture holds the page's [`Cast`] for its one call.
//!
//! Deliberately absent: the live view's own cast loop, its frames and its watchers
//! (conch-live); a screencast of a thumbnail's own (none runs without a watcher,
//! LIVE-2). The live view's frames are not reused for thumbnails: the newest one when a
//! step settles may be from before the step's change (a loaded machine's frames lag a
//! frame or more behind the page), which a thumbnail must never show.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use conch_cdp::Session;
use tokio::sync::OwnedMutexGuard;

use crate::sync::lock;

/// Who casts one page.
#[derive(Debug, Default)]
pub(crate) struct Cast {
    /// Held by the live view for as long as it casts the page, and by a scaled
    /// thumbnail's capture for its one call.
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

    /// The page for one scaled capture, when nobody casts it or shoots it now.
    pub(crate) fn try_own(&self) -> Option<OwnedMutexGuard<()>> {
        Arc::clone(&self.owner).try_lock_owned().ok()
    }
}

/// The live view's screencast of one page (LIVE-2): while it lives, the page's steps'
/// thumbnails are captured unscaled.
#[derive(Debug)]
pub struct LiveCast {
    cast: Arc<Cast>,
    _owner: OwnedMutexGuard<()>,
}

impl LiveCast {
    /// Makes the live view `page`'s caster, once a scaled capture in progress is done
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
