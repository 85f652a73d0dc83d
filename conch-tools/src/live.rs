//! What the person sees of the agent's steps: the agent's cursor where it acted, with a
//! caption (LIVE-5), and a `browser.step` for the transcript card with a thumbnail of the
//! view (LIVE-6, DATA-8), the conversation's first carrying the open-the-panel flag
//! (LIVE-7). Both go to the conversation's [`Wheel`](conch_browser::Wheel) (the live view
//! subscribes there) and to the embedder's [`EventSink`] (PROTO-2).
//!
//! A step records what it touched ([`touched`], [`pressed_at`]) in a task-local [`Touch`]
//! that [`scoped`] gives back with the call's outcome, so no tool threads it through.
//! Nothing is captured when nobody listens: no live watcher and no sink means no
//! screenshot. The thumbnail is taken after the result is composed, off the agent's path.
//!
//! Deliberately absent: anything the agent typed (captions never carry a typed value,
//! TOOL-6) and the person's input (conch-live, SEC-7).

use std::cell::RefCell;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use conch_browser::protocol::{BrowserActionKind, BrowserEvent, BrowserStep, EventSink};
use conch_browser::wheel::Activity;
use conch_browser::{Conversation, Home};

use crate::call::{How, TabAction, ToolCall};

/// The most `<home>/browser/shots/` holds; the least recently written go first (AMB-28).
pub const SHOTS_CAP_BYTES: u64 = 500 * 1024 * 1024;

/// How many thumbnails are written between two looks at the folder's size.
const PRUNE_EVERY: u64 = 50;

tokio::task_local! {
    static TOUCH: RefCell<Touch>;
}

/// What a step touched: the element's name and where the pointer acted.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Touch {
    /// The first element the step acted on, by its words.
    pub(crate) name: Option<String>,
    /// Where the pointer acted, in the viewport.
    pub(crate) at: Option<(f64, f64)>,
    /// Whether anyone listens, so a point worth a DevTools call is measured.
    listened: bool,
}

/// Runs `step` and gives what it touched with its outcome; `listened` says whether anyone
/// watches or records the conversation.
pub(crate) async fn scoped<F: Future>(listened: bool, step: F) -> (F::Output, Touch) {
    let touch = Touch {
        listened,
        ..Touch::default()
    };
    TOUCH
        .scope(RefCell::new(touch), async {
            let out = step.await;
            let touch = TOUCH.with(|t| t.borrow().clone());
            (out, touch)
        })
        .await
}

/// The step acts on an element with these words (the first one named wins: a drag's
/// start).
pub(crate) fn touched(words: &str) {
    let _ = TOUCH.try_with(|t| {
        let mut t = t.borrow_mut();
        if t.name.is_none() && !words.trim().is_empty() {
            t.name = Some(words.trim().chars().take(60).collect());
        }
    });
}

/// The pointer acted at `at` (the last act of a step wins).
pub(crate) fn pressed_at(at: Option<(f64, f64)>) {
    if at.is_none() {
        return;
    }
    let _ = TOUCH.try_with(|t| t.borrow_mut().at = at);
}

/// The pointer is over `el` (a field typed in, a list chosen from): its centre is
/// measured only when someone listens.
pub(crate) async fn over(el: &conch_browser::page::Element) {
    let listened = TOUCH.try_with(|t| t.borrow().listened).unwrap_or(false);
    if listened {
        pressed_at(conch_browser::page::act::centre(el).await);
    }
}

/// The action kind of a call, for the step card (PROTO-3, AMB-29: click_at is a click,
/// hover or drag with a position); `None` for a handoff, which has its own event.
fn kind_of(call: &ToolCall) -> Option<BrowserActionKind> {
    Some(match call {
        ToolCall::Open { .. } => BrowserActionKind::Navigate,
        ToolCall::Read { .. } => BrowserActionKind::Read,
        ToolCall::Click { how, .. } | ToolCall::ClickAt { how, .. } => match how {
            How::Hover => BrowserActionKind::Hover,
            How::Drag => BrowserActionKind::Drag,
            _ => BrowserActionKind::Click,
        },
        ToolCall::Type { .. } => BrowserActionKind::Type,
        ToolCall::Press { .. } => BrowserActionKind::Press,
        ToolCall::Select { .. } => BrowserActionKind::Select,
        ToolCall::Scroll { .. } => BrowserActionKind::Scroll,
        ToolCall::Back => BrowserActionKind::History,
        ToolCall::Screenshot => BrowserActionKind::Screenshot,
        ToolCall::Wait { .. } => BrowserActionKind::Wait,
        ToolCall::Tabs {
            action: TabAction::List,
            ..
        } => BrowserActionKind::Read,
        ToolCall::Tabs { .. } => BrowserActionKind::Tab,
        ToolCall::Upload { .. } => BrowserActionKind::Upload,
        ToolCall::Form { .. } => BrowserActionKind::Form,
        ToolCall::Handoff { .. } => return None,
    })
}

/// The pointer's kind for the cursor, for acts that use the pointer.
fn pointer_kind(kind: BrowserActionKind) -> Option<&'static str> {
    Some(match kind {
        BrowserActionKind::Click => "click",
        BrowserActionKind::Hover => "hover",
        BrowserActionKind::Drag => "drag",
        BrowserActionKind::Type => "type",
        BrowserActionKind::Select => "select",
        BrowserActionKind::Upload => "click",
        _ => return None,
    })
}

/// Where one finished step is told: the conversation, its home and the embedder's sink.
pub(crate) struct Told<'a> {
    /// The conversation.
    pub(crate) conv: &'a Conversation,
    /// Conch's home, for the thumbnails.
    pub(crate) home: &'a Home,
    /// The embedder's sink, if any.
    pub(crate) sink: Option<&'a Arc<dyn EventSink>>,
}

/// Tells the live view and the sink about a step that was done: the cursor at once, the
/// step card once its thumbnail is written (in the background). Nothing when nobody
/// listens.
pub(crate) fn step_done(told: &Told<'_>, call: &ToolCall, touch: &Touch, summary: Option<String>) {
    let wheel = told.conv.wheel();
    if !wheel.watched() && told.sink.is_none() {
        return;
    }
    let Some(kind) = kind_of(call) else { return };
    let caption = call.caption(touch.name.as_deref());
    if let (Some((x, y)), Some(pointer)) = (touch.at, pointer_kind(kind)) {
        wheel.publish(Activity::Cursor {
            x,
            y,
            kind: pointer.to_owned(),
            caption: caption.clone(),
        });
    }
    let conv = told.conv.clone();
    let shots = told.home.shots_dir();
    let sink = told.sink.cloned();
    let open_panel = wheel.first_browse();
    // Thumbnails are made in the background; steps are told in the order they were taken.
    let mut turn = wheel.step_turn();
    tokio::spawn(async move {
        let (tab, thumbnail) = match conv.active_page().await {
            Some((tab, page)) => {
                let shot = conch_browser::page::thumbnail(&page).await.ok();
                let path = match shot {
                    Some(jpeg) => write_shot(&shots, conv.id(), &jpeg).await,
                    None => None,
                };
                (tab, path)
            }
            None => (String::new(), None),
        };
        let step = BrowserStep {
            kind,
            caption,
            tab,
            thumbnail: thumbnail.map(|p| shot_name(&p)),
            change_summary: summary,
            open_panel,
        };
        turn.wait().await;
        if let Some(sink) = sink {
            sink.send(conv.id(), BrowserEvent::Step(step.clone()));
        }
        conv.wheel().publish(Activity::Step(step));
        drop(turn);
    });
}

/// Tells the live view and the sink about a handoff opening or ending (HAND-1, HAND-6).
pub(crate) fn handoff(
    conv: &Conversation,
    sink: Option<&Arc<dyn EventSink>>,
    handoff: conch_browser::protocol::BrowserHandoff,
) {
    if let Some(sink) = sink {
        sink.send(conv.id(), BrowserEvent::Handoff(handoff.clone()));
    }
    conv.wheel().publish(Activity::Handoff(handoff));
}

/// A thumbnail's path as the event names it: relative to Conch's home.
fn shot_name(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("browser/shots/{file}")
}

static WRITTEN: AtomicU64 = AtomicU64::new(0);

/// Writes one thumbnail as `<conversation>-<time>-<n>.jpg`; `None` when it can't be
/// written (a full disk costs the card its picture, never the step).
async fn write_shot(dir: &Path, conversation: &str, jpeg: &[u8]) -> Option<PathBuf> {
    let n = WRITTEN.fetch_add(1, Ordering::Relaxed);
    let millis = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let safe: String = conversation
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let path = dir.join(format!("{safe}-{millis}-{n}.jpg"));
    tokio::fs::create_dir_all(dir).await.ok()?;
    tokio::fs::write(&path, jpeg).await.ok()?;
    if n % PRUNE_EVERY == PRUNE_EVERY - 1 {
        let dir = dir.to_path_buf();
        let _ = tokio::task::spawn_blocking(move || prune_shots(&dir, SHOTS_CAP_BYTES)).await;
    }
    Some(path)
}

/// Removes the least recently written files of `dir` until it holds at most `cap` bytes
/// (AMB-28).
pub(crate) fn prune_shots(dir: &Path, cap: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(SystemTime, u64, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            if !meta.is_file() {
                return None;
            }
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
    files.sort();
    for (_, len, path) in files {
        if total <= cap {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amb_28_shots_past_the_cap_go_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        for (i, name) in ["a.jpg", "b.jpg", "c.jpg"].iter().enumerate() {
            let path = dir.path().join(name);
            std::fs::write(&path, vec![0u8; 100]).unwrap();
            let when = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000 + i as u64);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        prune_shots(dir.path(), 250);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["b.jpg", "c.jpg"]);
    }

    #[tokio::test]
    async fn live_5_a_step_records_the_first_name_and_the_last_point() {
        let ((), touch) = scoped(false, async {
            touched("Card one");
            touched("Done column");
            pressed_at(Some((10.0, 20.0)));
            pressed_at(None);
            pressed_at(Some((30.0, 40.0)));
        })
        .await;
        assert_eq!(touch.name.as_deref(), Some("Card one"));
        assert_eq!(touch.at, Some((30.0, 40.0)));
        // Outside a step nothing is recorded and nothing fails.
        touched("nowhere");
        pressed_at(Some((1.0, 1.0)));
    }
}
