//! Downloads only after the person says yes (AMB-9, DL-2, DL-4).
//!
//! A local browser downloads into a private staging folder (`Browser.setDownloadBehavior`
//! `allowAndName`: each file is named by its guid, so nothing the site names is ever
//! created there). When a download begins, the [`DownloadHook`] is asked with the safe
//! name, the site and the address; on Yes the finished file moves into the Downloads
//! folder under conch-policy's safe name, numbered (" (1)") instead of overwriting; on No
//! it is cancelled and deleted. A remote browser's downloads are refused with a sentence:
//! its disk is not ours.
//!
//! A watch belongs to one conversation ([`watch_downloads_in`], issue 29): the rules are
//! set on the browser context its pages live in (`browserContextId`: the main context, an
//! errand's, a chat's own browser), and it takes up only the downloads its
//! [`DownloadOwner`] says its own tabs started, so each question and note goes to the
//! conversation whose tab started the download, and nobody hears of anyone else's. In the
//! person's own Chrome, whose context Conch shares with the person's tabs, the browser
//! keeps its own download behaviour (the person's downloads are theirs, and never noted);
//! a download Conch's pages start there is cancelled and refused with a sentence. Files a
//! watch staged and nobody kept are removed when it is dropped (the conversation ended).
//!
//! Deliberately absent: opening or scanning the file, and any name from the site used as
//! a path without going through `safe_file_name`.

use crate::sync::lock;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use conch_cdp::Session;
use conch_policy::{Site, is_sealed_secret_name, numbered_name, safe_file_name};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::dialog::HookFuture;

/// A download waiting for the person's yes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadOffer {
    /// The file's safe name (the one it would get in Downloads before numbering).
    pub name: String,
    /// The site offering it.
    pub site: String,
    /// The address it comes from.
    pub url: String,
}

/// Asks the person whether to keep a download; `true` keeps it.
pub trait DownloadHook: Send + Sync + fmt::Debug {
    /// Decides one download.
    fn ask(&self, offer: DownloadOffer) -> HookFuture;
}

/// What became of a download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DownloadOutcome {
    /// Saved at this path in Downloads.
    Saved(PathBuf),
    /// The person said no; it was cancelled and deleted.
    Declined,
    /// Refused: the browser is remote.
    Refused,
    /// Refused: the page is in the person's own Chrome, where Conch keeps no files.
    RefusedInOwnChrome,
    /// It failed (the site or the network broke it off), or could not be moved.
    Failed(String),
}

/// A note for the next result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadNote {
    /// The file's safe name.
    pub name: String,
    /// What became of it.
    pub outcome: DownloadOutcome,
}

impl DownloadNote {
    /// One sentence for the agent.
    pub fn sentence(&self) -> String {
        let name = &self.name;
        match &self.outcome {
            DownloadOutcome::Saved(path) => {
                let file = path
                    .file_name()
                    .map_or_else(|| name.clone(), |f| f.to_string_lossy().into_owned());
                format!("The download “{name}” was saved to Downloads as “{file}”.")
            }
            DownloadOutcome::Declined => {
                format!("The person declined the download “{name}”; it was not saved.")
            }
            DownloadOutcome::Refused => format!(
                "The download “{name}” was refused: this browser runs on another machine, so Conch can't keep its files."
            ),
            DownloadOutcome::RefusedInOwnChrome => format!(
                "The download “{name}” was refused: in your own Chrome Conch keeps no files from its pages; switch to Conch's own browser to download it."
            ),
            DownloadOutcome::Failed(why) => format!("The download “{name}” failed ({why})."),
        }
    }
}

/// Where downloads go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DownloadPlaces {
    /// A local browser: the staging folder (`<home>/browser/downloads-staging`) and the
    /// Downloads folder of the workspace.
    Local {
        /// The private staging folder.
        staging: PathBuf,
        /// The Downloads folder.
        downloads: PathBuf,
    },
    /// A remote browser: every download is refused.
    Remote,
}

/// Says whether a download began in a frame was started by the watch's conversation.
pub trait DownloadOwner: Send + Sync + fmt::Debug {
    /// Whether the download begun in frame `frame_id` is this watch's to take up.
    fn started(&self, frame_id: String) -> HookFuture;
}

/// Whose downloads a watch takes up, and where its rules go.
#[derive(Debug, Clone)]
pub struct DownloadScope {
    /// The browser context whose download behaviour is set (`None`: the default one).
    pub context: Option<String>,
    /// The context is the person's too (their own Chrome): its download behaviour is left
    /// as the browser has it, and Conch's own downloads there are cancelled.
    pub shared_with_person: bool,
    /// Who decides which downloads are this watch's; `None` takes up every one.
    pub owner: Option<Arc<dyn DownloadOwner>>,
}

impl DownloadScope {
    /// Every download of the browser's default context.
    pub fn whole_browser() -> Self {
        DownloadScope {
            context: None,
            shared_with_person: false,
            owner: None,
        }
    }
}

/// How long deciding whose a download is may take before it is left alone.
const OWNER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The downloads a watch took up and has not finished with, by guid.
type Entries = Arc<Mutex<HashMap<String, Entry>>>;

/// Handles the downloads of one browser until dropped.
#[derive(Debug)]
pub struct DownloadWatch {
    notes: Arc<Mutex<Vec<DownloadNote>>>,
    task: JoinHandle<()>,
    /// What it took up, for clearing when it is dropped.
    entries: Entries,
    staging: Option<PathBuf>,
    browser: Session,
    context: Option<String>,
}

impl Drop for DownloadWatch {
    /// The conversation ended (DL-3): every download it took up and nobody kept is
    /// cancelled and its staged bytes removed.
    fn drop(&mut self) {
        self.task.abort();
        let guids: Vec<String> = lock(&self.entries).drain().map(|(guid, _)| guid).collect();
        let Some(staging) = self.staging.clone() else {
            return;
        };
        for guid in &guids {
            let _ = std::fs::remove_file(staging.join(guid));
        }
        if guids.is_empty() {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let browser = self.browser.clone();
            let context = self.context.clone();
            runtime.spawn(async move {
                for guid in guids {
                    let _ = browser
                        .call_raw("Browser.cancelDownload", cancel_params(&guid, &context))
                        .await;
                    let _ = std::fs::remove_file(staging.join(&guid));
                }
            });
        }
    }
}

fn cancel_params(guid: &str, context: &Option<String>) -> serde_json::Value {
    let mut params = json!({ "guid": guid });
    if let Some(context) = context {
        params["browserContextId"] = json!(context);
    }
    params
}

impl DownloadWatch {
    /// The notes since the last call, taken once.
    pub fn take_notes(&self) -> Vec<DownloadNote> {
        std::mem::take(&mut lock(&self.notes))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WillBegin {
    guid: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    suggested_filename: String,
    #[serde(default)]
    frame_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Progress {
    guid: String,
    state: String,
}

#[derive(Debug, Default)]
struct Entry {
    name: String,
    answer: Option<bool>,
    /// `completed` or `canceled`, once known.
    state: Option<String>,
}

/// Why downloads could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DownloadError {
    /// The staging folder could not be made.
    #[error("The downloads staging folder can't be made ({0}); check the disk.")]
    Staging(#[from] std::io::Error),
    /// The browser did not answer.
    #[error("The browser did not answer: {0}; try again.")]
    Cdp(#[from] conch_cdp::Error),
}

/// Starts handling every download of the default context of the browser behind
/// `browser` (its own session): [`watch_downloads_in`] with
/// [`DownloadScope::whole_browser`].
///
/// # Errors
/// As [`watch_downloads_in`].
pub async fn watch_downloads(
    browser: &Session,
    places: DownloadPlaces,
    hook: Arc<dyn DownloadHook>,
) -> Result<DownloadWatch, DownloadError> {
    watch_downloads_in(browser, DownloadScope::whole_browser(), places, hook).await
}

/// Starts handling the downloads `scope` takes up, in the browser behind `browser` (its
/// own session): the rules go on `scope.context`, and only downloads its owner started
/// are asked about, kept or noted.
///
/// # Errors
/// A DevTools failure while setting the download behaviour, or the staging folder can't
/// be made.
pub async fn watch_downloads_in(
    browser: &Session,
    scope: DownloadScope,
    places: DownloadPlaces,
    hook: Arc<dyn DownloadHook>,
) -> Result<DownloadWatch, DownloadError> {
    let mut begins = browser.events("Browser.downloadWillBegin");
    let mut progress = browser.events("Browser.downloadProgress");
    let mut params = match &places {
        DownloadPlaces::Local { staging, .. } => {
            std::fs::create_dir_all(staging)?;
            json!({
                "behavior": "allowAndName",
                "downloadPath": staging.to_string_lossy(),
                "eventsEnabled": true,
            })
        }
        // The person's own downloads keep the browser's behaviour; only events are asked.
        DownloadPlaces::Remote if scope.shared_with_person => {
            json!({ "behavior": "default", "eventsEnabled": true })
        }
        DownloadPlaces::Remote => json!({ "behavior": "deny", "eventsEnabled": true }),
    };
    if let Some(context) = &scope.context {
        params["browserContextId"] = json!(context);
    }
    browser
        .call_raw("Browser.setDownloadBehavior", params)
        .await?;
    let notes = Arc::new(Mutex::new(Vec::new()));
    let out = Arc::clone(&notes);
    let entries: Entries = Arc::default();
    let watch_entries = Arc::clone(&entries);
    let staging = match &places {
        DownloadPlaces::Local { staging, .. } => Some(staging.clone()),
        DownloadPlaces::Remote => None,
    };
    let context = scope.context.clone();
    let session = browser.clone();
    let browser = browser.clone();
    let task = tokio::spawn(async move {
        let (answers_tx, mut answers) = mpsc::unbounded_channel::<(String, bool)>();
        loop {
            let guid = tokio::select! {
                Some(event) = begins.next() => {
                    let Ok(begin) = event.parse::<WillBegin>() else { continue };
                    // Another conversation's download, or the person's own: not ours to
                    // ask about, keep, cancel or mention.
                    if let Some(owner) = &scope.owner {
                        let mine = tokio::time::timeout(
                            OWNER_TIMEOUT,
                            owner.started(begin.frame_id.clone()),
                        )
                        .await;
                        if mine != Ok(true) {
                            continue;
                        }
                    }
                    let name = safe_file_name(&begin.suggested_filename);
                    if places == DownloadPlaces::Remote {
                        let outcome = if scope.shared_with_person {
                            let _ = browser
                                .call_raw(
                                    "Browser.cancelDownload",
                                    cancel_params(&begin.guid, &scope.context),
                                )
                                .await;
                            DownloadOutcome::RefusedInOwnChrome
                        } else {
                            DownloadOutcome::Refused
                        };
                        push(&out, &name, outcome);
                        continue;
                    }
                    // Never saved under the name of one of Conch's sealed secrets (BE-3):
                    // cancelled before anyone is asked; its staged bytes go once it ends.
                    if is_sealed_secret_name(&name) {
                        let _ = browser
                            .call_raw(
                                "Browser.cancelDownload",
                                cancel_params(&begin.guid, &scope.context),
                            )
                            .await;
                        lock(&entries).insert(
                            begin.guid,
                            Entry { name, answer: Some(false), ..Entry::default() },
                        );
                        continue;
                    }
                    let offer = DownloadOffer {
                        name: name.clone(),
                        site: url::Url::parse(&begin.url)
                            .ok()
                            .and_then(|u| Site::of_url(&u).ok().map(|s| s.to_string()))
                            .unwrap_or_default(),
                        url: begin.url.clone(),
                    };
                    lock(&entries).insert(begin.guid.clone(), Entry { name, ..Entry::default() });
                    let ask = hook.ask(offer);
                    let tx = answers_tx.clone();
                    let guid = begin.guid.clone();
                    tokio::spawn(async move {
                        let yes = ask.await;
                        let _ = tx.send((guid, yes));
                    });
                    begin.guid
                }
                Some(event) = progress.next() => {
                    let Ok(p) = event.parse::<Progress>() else { continue };
                    if p.state == "inProgress" { continue }
                    match lock(&entries).get_mut(&p.guid) {
                        Some(entry) => entry.state = Some(p.state),
                        None => continue,
                    }
                    p.guid
                }
                Some((guid, yes)) = answers.recv() => {
                    if let Some(entry) = lock(&entries).get_mut(&guid) { entry.answer = Some(yes); }
                    guid
                }
                else => return,
            };
            let DownloadPlaces::Local { staging, downloads } = &places else {
                continue;
            };
            let Some((answer, state, name)) = lock(&entries)
                .get(&guid)
                .map(|e| (e.answer, e.state.clone(), e.name.clone()))
            else {
                continue;
            };
            let staged = staging.join(&guid);
            let outcome = match (answer, state.as_deref()) {
                (_, None) if is_sealed_secret_name(&name) => continue,
                (_, Some(_)) if is_sealed_secret_name(&name) => {
                    let _ = std::fs::remove_file(&staged);
                    DownloadOutcome::Failed(SEALED_NAME.to_owned())
                }
                (Some(false), state) => {
                    if state.is_none() {
                        let _ = browser
                            .call_raw("Browser.cancelDownload", json!({ "guid": guid }))
                            .await;
                    }
                    let _ = std::fs::remove_file(&staged);
                    DownloadOutcome::Declined
                }
                (_, Some("canceled")) => {
                    let _ = std::fs::remove_file(&staged);
                    DownloadOutcome::Failed("it was broken off".to_owned())
                }
                (Some(true), Some(_)) => match keep(&staged, downloads, &name) {
                    Ok(path) => DownloadOutcome::Saved(path),
                    Err(e) => {
                        // Not kept is not left behind.
                        let _ = std::fs::remove_file(&staged);
                        DownloadOutcome::Failed(format!("it could not be moved: {e}"))
                    }
                },
                _ => continue,
            };
            lock(&entries).remove(&guid);
            push(&out, &name, outcome);
        }
    });
    Ok(DownloadWatch {
        notes,
        task,
        entries: watch_entries,
        staging,
        browser: session,
        context,
    })
}

fn push(notes: &Mutex<Vec<DownloadNote>>, name: &str, outcome: DownloadOutcome) {
    notes
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(DownloadNote {
            name: name.to_owned(),
            outcome,
        });
}

/// Why a download named like one of Conch's sealed secrets is not kept (BE-3).
const SEALED_NAME: &str = "its name is one Conch keeps for its sealed secrets, so it was not saved";

/// Moves the staged file into `downloads` under a free safe name. The Downloads folder
/// must be a real folder, not a link (one into Conch's home would let a site's file land
/// beside the device key and the sealed files, BE-3), and nothing already there is ever
/// written over, not even when a file of that name appears meanwhile.
fn keep(staged: &Path, downloads: &Path, name: &str) -> std::io::Result<PathBuf> {
    if is_sealed_secret_name(name) {
        return Err(std::io::Error::other(SEALED_NAME));
    }
    std::fs::create_dir_all(downloads)?;
    if std::fs::symlink_metadata(downloads)?
        .file_type()
        .is_symlink()
    {
        return Err(std::io::Error::other(
            "the Downloads folder is a link, and Conch saves only into a real folder",
        ));
    }
    loop {
        let taken: Vec<String> = std::fs::read_dir(downloads)?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let target = downloads.join(numbered_name(name, &taken));
        // A hard link is made only where no file is; the staged name then goes.
        match std::fs::hard_link(staged, &target) {
            Ok(()) => {
                std::fs::remove_file(staged)?;
                return Ok(target);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => {
                let mut out = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&target)?;
                std::io::copy(&mut std::fs::File::open(staged)?, &mut out)?;
                std::fs::remove_file(staged)?;
                return Ok(target);
            }
        }
    }
}
