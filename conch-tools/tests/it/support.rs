//! Test support: a browser on a temp home that finds the test Chromium, a recording
//! [`Asker`] with scripted answers, and helpers to find refs in a snapshot.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use conch_browser::discover::{FolderProbe, Os, Probe};
use conch_browser::{Browser, BrowserConfig, Home};
use conch_tools::{
    Answer, AskRequest, Asker, BoxFuture, Choice, QuestionKind, Tools, ToolsConfig, WorkFolder,
};

/// A computer with no browser at all.
#[derive(Debug)]
pub(crate) struct NoBrowsers;

impl Probe for NoBrowsers {
    fn os(&self) -> Os {
        Os::Linux
    }
    fn var(&self, _: &str) -> Option<OsString> {
        None
    }
    fn is_file(&self, _: &Path) -> bool {
        false
    }
    fn list_dir(&self, _: &Path) -> Vec<String> {
        Vec::new()
    }
}

/// A temp folder with Conch's home, a work folder and the browser's config.
pub(crate) struct Setup {
    _dir: tempfile::TempDir,
    pub(crate) config: BrowserConfig,
    pub(crate) work: PathBuf,
}

/// A temp home whose browser is the test Chromium; downloading is off.
pub(crate) fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("test set-up");
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("test set-up");
    let real = conch_fixtures::browser::executable().expect("test set-up");
    std::os::unix::fs::symlink(&real, bin.join("chromium")).expect("test set-up");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).expect("test set-up");
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.probe = Arc::new(FolderProbe { dir: bin });
    config.download = None;
    // The fixtures are served on loopback: the guard runs, letting local apps through
    // (NET-5) as a person who allowed them would.
    config.guard = Some(conch_browser::guard::GuardConfig::new(
        conch_policy::NetSettings {
            allow_localhost: true,
            ..conch_policy::NetSettings::default()
        },
    ));
    Setup {
        _dir: dir,
        config,
        work,
    }
}

/// The toolbox over a fresh browser, asking `asker`, allowing the loopback fixtures.
pub(crate) fn tools(setup: &Setup, asker: Arc<dyn Asker>) -> Tools {
    let browser = Browser::new(setup.config.clone());
    let mut config = ToolsConfig::new(asker);
    config.net.allow_localhost = true;
    config.chat_files = Arc::new(WorkFolder(Some(setup.work.clone())));
    Tools::new(browser, config)
}

/// An [`Asker`] that records every question and answers from a script: the next
/// scripted answer for the question's kind, else `fallback`.
#[derive(Debug)]
pub(crate) struct Recorder {
    site: Mutex<VecDeque<Choice>>,
    other: Mutex<VecDeque<Choice>>,
    fallback_site: Choice,
    fallback_other: Choice,
    asked: Mutex<Vec<AskRequest>>,
}

impl Recorder {
    /// Answers `site` to site questions and `other` to every other question.
    pub(crate) fn answering(site: Choice, other: Choice) -> Arc<Recorder> {
        Arc::new(Recorder {
            site: Mutex::new(VecDeque::new()),
            other: Mutex::new(VecDeque::new()),
            fallback_site: site,
            fallback_other: other,
            asked: Mutex::new(Vec::new()),
        })
    }

    /// Answers the next non-site question with `choice`.
    pub(crate) fn then_other(&self, choice: Choice) {
        self.other.lock().expect("recorder").push_back(choice);
    }

    /// Every question asked so far.
    pub(crate) fn asked(&self) -> Vec<AskRequest> {
        self.asked.lock().expect("recorder").clone()
    }

    /// The kinds of the questions asked so far.
    pub(crate) fn kinds(&self) -> Vec<QuestionKind> {
        self.asked().iter().map(|r| r.question.kind()).collect()
    }
}

impl Asker for Recorder {
    fn ask<'a>(&'a self, request: &'a AskRequest) -> BoxFuture<'a, Answer> {
        self.asked.lock().expect("recorder").push(request.clone());
        let choice = match request.question.kind() {
            QuestionKind::Site | QuestionKind::OwnChrome => self
                .site
                .lock()
                .expect("recorder")
                .pop_front()
                .unwrap_or(self.fallback_site),
            _ => self
                .other
                .lock()
                .expect("recorder")
                .pop_front()
                .unwrap_or(self.fallback_other),
        };
        Box::pin(async move { Answer::Person(choice) })
    }
}

/// The ref on the first snapshot line that holds `needle` and a ref.
pub(crate) fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|line| line.contains(needle) && line.contains("[ref="))
        .unwrap_or_else(|| panic!("no line with {needle:?} and a ref in:\n{snapshot}"));
    let start = line.find("[ref=").expect("a ref") + "[ref=".len();
    let end = line[start..].find(']').expect("a closing bracket") + start;
    line[start..end].to_owned()
}

/// Waits until the browser of `chat` has made the blank window it keeps in the launch
/// page's stead, which comes once, shortly after a launch's first load (issue 31): a
/// test that counts what a step sends counts it in the steady state after it.
pub(crate) async fn blank_window_made(chat: &conch_tools::Chat) {
    for _ in 0..200 {
        if page_targets(chat).await >= 2 {
            // Its attach reaches the target watcher a moment after the browser lists it.
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the browser never made its blank window");
}

/// How many page targets the browser of `chat` has (its tabs and blank windows).
pub(crate) async fn page_targets(chat: &conch_tools::Chat) -> usize {
    let page = chat.conversation().page().await.expect("the chat's page");
    let targets = page
        .call_raw("Target.getTargets", serde_json::json!({}))
        .await
        .expect("the browser lists its targets");
    targets["targetInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["type"] == "page")
        .count()
}
