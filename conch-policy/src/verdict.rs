//! The shapes every rule answers in.
//!
//! A rule that may only allow or refuse returns a [`Verdict`]; the permission rule, which may
//! also need the person, returns a [`Decision`]. A [`Refusal`] carries a stable
//! [`RefusalCode`] (for logs, tests and programs) and [`Refusal::sentence`], the one plain
//! sentence the agent reads, which always names a next step. A [`Question`] is what the
//! person is asked, with its [`Choice`]s.
//!
//! Deliberately absent: no sentence ever carries the gateway's address or port (NET-10), and
//! refusals are values, never errors.

use std::fmt;

use serde::Serialize;

use crate::site::Site;

/// Allow, or refuse with a reason.
#[must_use]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "verdict", content = "refusal")]
pub enum Verdict {
    /// Go ahead.
    Allow,
    /// Don't; the refusal says why and what to do instead.
    Refuse(Refusal),
}

impl Verdict {
    /// Whether this verdict allows.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Self::Allow)
    }

    /// The refusal, when there is one.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            Self::Allow => None,
            Self::Refuse(refusal) => Some(refusal),
        }
    }

    /// `"allow"`, or the refusal's stable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Refuse(refusal) => refusal.code().as_str(),
        }
    }

    pub(crate) fn refuse(code: RefusalCode) -> Self {
        Self::Refuse(Refusal::new(code))
    }
}

impl From<Result<(), Refusal>> for Verdict {
    fn from(result: Result<(), Refusal>) -> Self {
        match result {
            Ok(()) => Self::Allow,
            Err(refusal) => Self::Refuse(refusal),
        }
    }
}

/// The permission rule's answer: allow, ask the person, or refuse.
#[must_use]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "decision", content = "detail")]
pub enum Decision {
    /// Go ahead without asking.
    Allow,
    /// Ask the person this question first. Once it is answered, record the answer in the
    /// facts and decide again: the next gate may ask too.
    Ask(Question),
    /// Don't act; the refusal says why and what to do instead.
    Refuse(Refusal),
}

impl Decision {
    /// `"allow"`, `"ask-<kind>"`, or the refusal's stable code.
    pub fn code(&self) -> String {
        match self {
            Self::Allow => "allow".to_owned(),
            Self::Ask(question) => format!("ask-{}", question.kind().as_str()),
            Self::Refuse(refusal) => refusal.code().as_str().to_owned(),
        }
    }
}

/// A rule's "no": a stable code plus, for some codes, what it was about (a file name, a
/// scheme, a site), from which the sentence is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Refusal {
    code: RefusalCode,
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<String>,
}

impl Refusal {
    /// A refusal with no subject.
    pub fn new(code: RefusalCode) -> Self {
        Self {
            code,
            subject: None,
        }
    }

    /// A refusal about something named: a file, a scheme, a key.
    pub fn about(code: RefusalCode, subject: impl Into<String>) -> Self {
        Self {
            code,
            subject: Some(subject.into()),
        }
    }

    /// The stable code.
    pub fn code(&self) -> RefusalCode {
        self.code
    }

    /// What it is about, when named.
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The plain sentence the agent reads: what happened and what to do next.
    pub fn sentence(&self) -> String {
        let about = |fallback: &str| -> String {
            match &self.subject {
                Some(subject) => format!("“{subject}”"),
                None => fallback.to_owned(),
            }
        };
        use RefusalCode as C;
        match self.code {
            C::GatewayOrigin => "That address is Conch's own, and pages Conch opens never reach it. Carry on with another address.".to_owned(),
            C::LocalApp => "That address is on this computer, and Conch opens local apps only when the person turns on “Let it open local apps” in Settings. Ask them, or use a public address.".to_owned(),
            C::PrivateNetwork => "That address is on your private network; Conch doesn't open those. Try a public address instead.".to_owned(),
            C::LinkLocal => "That address is a link-local network address; Conch doesn't open those. Try a public address instead.".to_owned(),
            C::CloudMetadata => "That is a cloud metadata address; Conch never opens those. Try a public address instead.".to_owned(),
            C::NonPublicAddress => "That address isn't a public web address; Conch doesn't open it. Try a public address instead.".to_owned(),
            C::UnreadableAddress => "Conch couldn't read that address, so it didn't open it. Check the address and try again.".to_owned(),
            C::NoAddress => "That name didn't resolve to any address. Check the address and try again.".to_owned(),
            C::UnsupportedScheme => match &self.subject {
                Some(scheme) => format!(
                    "Conch opens only http and https addresses (and about:blank), not “{scheme}” ones. Give an http or https address instead."
                ),
                None => "Conch opens only http and https addresses (and about:blank). Give an http or https address instead.".to_owned(),
            },
            C::PageSchemeCancelled => format!(
                "The page tried to go to {} address; Conch follows only http and https, so the tab stayed where it was. Carry on from this page.",
                match &self.subject { Some(s) => format!("a “{s}”"), None => "another kind of".to_owned() }
            ),
            C::PlanOnly => "This conversation is in Plan only mode: Conch can read pages but not act on them. Say what you would do instead, or ask the person to change the mode.".to_owned(),
            C::SecretField => "That is a password, code or card field, and Conch never types the agent's text into one: call browser_handoff so the person can fill it.".to_owned(),
            C::SecretKey => format!(
                "Pressing {} on a password, code or card field could type into it, so Conch refused. Only Tab, Enter, Escape and the arrow and page keys work there; call browser_handoff to fill it.",
                about("that")
            ),
            C::UploadNotFromChat => format!(
                "{} isn't a file attached in this chat, made in this chat or in the chat's work folder, so Conch won't upload it. Use one of those files.",
                about("That file")
            ),
            C::UploadOutsideWorkFolder => format!(
                "{} is outside the chat's work folder, so Conch won't upload it. Use a file inside the work folder.",
                about("That file")
            ),
            C::UploadLinkOut => format!(
                "{} is a link that leads out of the work folder, so Conch won't upload it. Copy the file into the work folder instead.",
                about("That file")
            ),
            C::UploadHidden => format!(
                "{} is hidden or sits in a hidden folder, and Conch doesn't upload those. Use a file that isn't hidden.",
                about("That file")
            ),
            C::UploadKeyFile => format!(
                "{} looks like a key or credentials file, and Conch never uploads those. Ask the person to upload it themselves if it is really needed.",
                about("That file")
            ),
            C::UploadConchFolder => format!(
                "{} is in Conch's own folder, and Conch doesn't upload its own files. Use a file from the work folder.",
                about("That file")
            ),
            C::UploadProtectedPlace => format!(
                "{} is in a place where keys and passwords live, and Conch never uploads from there. Ask the person to upload it themselves if it is really needed.",
                about("That file")
            ),
            C::UploadSealedSecret => format!(
                "{} is one of Conch's sealed secrets (its device key or a sealed secrets file), or a copy or link of one, and Conch never uploads those; nothing was sent to the page. Use another file.",
                about("That file")
            ),
            C::UploadTooMany => format!(
                "One upload takes at most {} files. Upload fewer files at a time.",
                crate::upload::MAX_FILES
            ),
            C::UploadTooLarge => "One upload takes at most 50 MB in total. Upload fewer or smaller files.".to_owned(),
            C::TooManyTabs => format!(
                "This conversation already has {} tabs open. Close one with browser_tabs close, then open the new one.",
                crate::tabs::MAX_TABS
            ),
            C::NoScreenshot => "Conch clicks by position only on a screenshot it has taken: take a screenshot first with browser_screenshot.".to_owned(),
            C::PointOutsideScreenshot => "That point is outside the last screenshot. Pick a point inside it, or take a new screenshot.".to_owned(),
            C::ErrandsBusy => "Too many errands are busy right now: wait a minute and try again.".to_owned(),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.sentence())
    }
}

/// Why a rule said no: a stable code, serialised in kebab case.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RefusalCode {
    /// The gateway's own address and port (NET-1): never allowed under any settings.
    GatewayOrigin,
    /// A loopback address without `allowLocalhost` or a matching `allowHosts` entry (NET-5).
    LocalApp,
    /// RFC 1918, ULA, CGNAT and private-only names (NET-3, AMB-14).
    PrivateNetwork,
    /// 169.254/16 and fe80::/10 (NET-3).
    LinkLocal,
    /// Cloud metadata addresses and names (NET-3).
    CloudMetadata,
    /// Unspecified, multicast, broadcast and reserved addresses (AMB-14).
    NonPublicAddress,
    /// A host the proxy or the page gave that no browser would accept.
    UnreadableAddress,
    /// A name that resolved to nothing.
    NoAddress,
    /// The agent asked for a scheme other than http, https or about:blank (NET-6).
    UnsupportedScheme,
    /// A page-initiated top-level navigation to another scheme was cancelled (NET-7).
    PageSchemeCancelled,
    /// Plan only refuses every act (PERM-9).
    PlanOnly,
    /// The agent's text never goes into a secret field (SEC-2).
    SecretField,
    /// A key that could type into a secret field (SEC-5).
    SecretKey,
    /// An upload from somewhere other than the chat or its work folder (UP-2).
    UploadNotFromChat,
    /// An upload outside the work folder, `../` included (UP-3).
    UploadOutsideWorkFolder,
    /// An upload through a link that leaves the work folder (UP-3).
    UploadLinkOut,
    /// A hidden file or a file in a hidden folder (UP-4).
    UploadHidden,
    /// A key-shaped file name (UP-5).
    UploadKeyFile,
    /// Conch's own home (UP-6).
    UploadConchFolder,
    /// Where keys live: protected paths, secret places, the browser profile (UP-7).
    UploadProtectedPlace,
    /// Conch's device key or a sealed secrets file (`*.secrets.json`, its set-aside
    /// `.corrupt-*` copies), by name, through a link, or as a hard link (BE-3, DATA-10).
    UploadSealedSecret,
    /// More than ten files (UP-8).
    UploadTooMany,
    /// More than 50 MB in total (UP-8).
    UploadTooLarge,
    /// A ninth tab (TAB-5).
    TooManyTabs,
    /// click_at before any screenshot of the tab (GES-12).
    NoScreenshot,
    /// click_at outside the last screenshot (GES-10).
    PointOutsideScreenshot,
    /// Every open errand is driven or watched (ERR-17).
    ErrandsBusy,
}

impl RefusalCode {
    /// Every code, for tests and documentation.
    pub const ALL: &'static [RefusalCode] = &[
        Self::GatewayOrigin,
        Self::LocalApp,
        Self::PrivateNetwork,
        Self::LinkLocal,
        Self::CloudMetadata,
        Self::NonPublicAddress,
        Self::UnreadableAddress,
        Self::NoAddress,
        Self::UnsupportedScheme,
        Self::PageSchemeCancelled,
        Self::PlanOnly,
        Self::SecretField,
        Self::SecretKey,
        Self::UploadNotFromChat,
        Self::UploadOutsideWorkFolder,
        Self::UploadLinkOut,
        Self::UploadHidden,
        Self::UploadKeyFile,
        Self::UploadConchFolder,
        Self::UploadProtectedPlace,
        Self::UploadSealedSecret,
        Self::UploadTooMany,
        Self::UploadTooLarge,
        Self::TooManyTabs,
        Self::NoScreenshot,
        Self::PointOutsideScreenshot,
        Self::ErrandsBusy,
    ];

    /// The stable kebab-case code, e.g. `private-network`.
    pub fn as_str(self) -> &'static str {
        use RefusalCode as C;
        match self {
            C::GatewayOrigin => "gateway-origin",
            C::LocalApp => "local-app",
            C::PrivateNetwork => "private-network",
            C::LinkLocal => "link-local",
            C::CloudMetadata => "cloud-metadata",
            C::NonPublicAddress => "non-public-address",
            C::UnreadableAddress => "unreadable-address",
            C::NoAddress => "no-address",
            C::UnsupportedScheme => "unsupported-scheme",
            C::PageSchemeCancelled => "page-scheme-cancelled",
            C::PlanOnly => "plan-only",
            C::SecretField => "secret-field",
            C::SecretKey => "secret-key",
            C::UploadNotFromChat => "upload-not-from-chat",
            C::UploadOutsideWorkFolder => "upload-outside-work-folder",
            C::UploadLinkOut => "upload-link-out",
            C::UploadHidden => "upload-hidden",
            C::UploadKeyFile => "upload-key-file",
            C::UploadConchFolder => "upload-conch-folder",
            C::UploadProtectedPlace => "upload-protected-place",
            C::UploadSealedSecret => "upload-sealed-secret",
            C::UploadTooMany => "upload-too-many",
            C::UploadTooLarge => "upload-too-large",
            C::TooManyTabs => "too-many-tabs",
            C::NoScreenshot => "no-screenshot",
            C::PointOutsideScreenshot => "point-outside-screenshot",
            C::ErrandsBusy => "errands-busy",
        }
    }
}

impl fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A question for the person, shown by the embedder's `Asker`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Question {
    kind: QuestionKind,
    text: String,
    choices: Vec<Choice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    site: Option<Site>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frame_site: Option<Site>,
    #[serde(skip_serializing_if = "Option::is_none")]
    words: Option<String>,
    lends_sign_in: bool,
}

impl Question {
    /// "Let Conch use `<site>`?" with This chat, Always and No (PERM-3). With a cross-site
    /// frame the question names that site too (PERM-16). In an errand that can borrow the
    /// main context's sign-ins the question says that Allow lends the sign-in (ERR-4), in
    /// words true of a task's errand and of a chat's own browser alike (LIVE-16).
    pub fn for_site(site: &Site, frame_site: Option<&Site>, lends_sign_in: bool) -> Self {
        let frame_site = frame_site.filter(|frame| *frame != site).cloned();
        let mut text = match &frame_site {
            Some(frame) => format!("Let Conch use {site}, and {frame} inside it?"),
            None => format!("Let Conch use {site}?"),
        };
        if lends_sign_in {
            text.push_str(&format!(
                " Allowing also lends your sign-in on {site} to this conversation's own browser."
            ));
        }
        Self {
            kind: QuestionKind::Site,
            text,
            choices: vec![Choice::ThisChat, Choice::Always, Choice::No],
            site: Some(site.clone()),
            frame_site,
            words: None,
            lends_sign_in,
        }
    }

    /// The same question for the person's own Chrome: asked every conversation, and
    /// Always is never offered (BE-12).
    pub fn own_chrome(site: &Site, frame_site: Option<&Site>) -> Self {
        let frame_site = frame_site.filter(|frame| *frame != site).cloned();
        let text = match &frame_site {
            Some(frame) => {
                format!("Let Conch use {site}, and {frame} inside it, in your own Chrome?")
            }
            None => format!("Let Conch use {site} in your own Chrome?"),
        };
        Self {
            kind: QuestionKind::OwnChrome,
            text,
            choices: vec![Choice::ThisChat, Choice::No],
            site: Some(site.clone()),
            frame_site,
            words: None,
            lends_sign_in: false,
        }
    }

    /// The high-stakes confirmation: asked every time, never with Always (HS-1, HS-2).
    /// `doing` is the act in words ("click", "answer yes to").
    pub fn high_stakes(site: &Site, doing: &str, words: &str) -> Self {
        Self {
            kind: QuestionKind::HighStakes,
            text: format!("Let Conch {doing} “{words}” on {site}?"),
            choices: vec![Choice::Yes, Choice::No],
            site: Some(site.clone()),
            frame_site: None,
            words: Some(words.to_owned()),
            lends_sign_in: false,
        }
    }

    /// The upload question: each file with where it comes from, and the site; never
    /// Always (UP-9). It stands in for the site question for that call.
    pub fn upload(site: &Site, files: &[crate::upload::UploadItem]) -> Self {
        let named: Vec<String> = files
            .iter()
            .map(|file| format!("“{}” ({})", file.name, file.origin.words()))
            .collect();
        let list = join_words(&named);
        Self {
            kind: QuestionKind::Upload,
            text: format!("Upload {list} to {site}?"),
            choices: vec![Choice::Yes, Choice::No],
            site: Some(site.clone()),
            frame_site: None,
            words: None,
            lends_sign_in: false,
        }
    }

    /// The download question: the file and the site, never Always (DL-1).
    pub fn download(site: &Site, file_name: &str, size: Option<u64>) -> Self {
        let size = match size {
            Some(bytes) => format!(" ({})", human_size(bytes)),
            None => String::new(),
        };
        Self {
            kind: QuestionKind::Download,
            text: format!("Save “{file_name}”{size} from {site} to Downloads?"),
            choices: vec![Choice::Yes, Choice::No],
            site: Some(site.clone()),
            frame_site: None,
            words: None,
            lends_sign_in: false,
        }
    }

    /// The browser's download failed: the fetcher's one plain sentence naming the cause,
    /// with exactly one button, Try again (LAUNCH-5). It names no site.
    pub fn browser_download_failed(sentence: &str) -> Self {
        Self {
            kind: QuestionKind::BrowserDownload,
            text: sentence.to_owned(),
            choices: vec![Choice::TryAgain],
            site: None,
            frame_site: None,
            words: None,
            lends_sign_in: false,
        }
    }

    /// What kind of question this is.
    pub fn kind(&self) -> QuestionKind {
        self.kind
    }

    /// The words shown to the person.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The buttons, in order. Closing the card or giving no answer means No.
    pub fn choices(&self) -> &[Choice] {
        &self.choices
    }

    /// The site asked about (the top-level page's).
    pub fn site(&self) -> Option<&Site> {
        self.site.as_ref()
    }

    /// The frame's site, when the act is inside a frame of another site (PERM-16).
    pub fn frame_site(&self) -> Option<&Site> {
        self.frame_site.as_ref()
    }

    /// The control's or the page's words, for a high-stakes question.
    pub fn words(&self) -> Option<&str> {
        self.words.as_deref()
    }

    /// Whether an Allow lends the site's sign-in to the errand (ERR-4).
    pub fn lends_sign_in(&self) -> bool {
        self.lends_sign_in
    }

    /// The question as MCP elicitation may carry it, or `None` when it must go to the
    /// person's own UI. Only a site question that lends nothing may go, and then only with
    /// This chat and No: never Always, high stakes, uploads, downloads or own Chrome
    /// (AMB-5, "Decisions that differ").
    pub fn for_elicitation(&self) -> Option<Question> {
        if self.kind != QuestionKind::Site || self.lends_sign_in {
            return None;
        }
        let mut reduced = self.clone();
        reduced.choices = vec![Choice::ThisChat, Choice::No];
        Some(reduced)
    }
}

/// What a [`Question`] is about; matches `BrowserPermission.kind` (PROTO-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum QuestionKind {
    /// The per-site question.
    Site,
    /// The per-site question in the person's own Chrome.
    OwnChrome,
    /// The confirmation of a significant act.
    HighStakes,
    /// An upload.
    Upload,
    /// A download.
    Download,
    /// The browser could not be downloaded (LAUNCH-5).
    BrowserDownload,
}

impl QuestionKind {
    /// The stable name, e.g. `high-stakes`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Site => "site",
            Self::OwnChrome => "own-chrome",
            Self::HighStakes => "high-stakes",
            Self::Upload => "upload",
            Self::Download => "download",
            Self::BrowserDownload => "browser-download",
        }
    }
}

/// A button on a question card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Choice {
    /// Allow for this conversation only (PERM-5).
    ThisChat,
    /// Allow in every conversation; saved to browser.json (PERM-6).
    Always,
    /// Go ahead, this once.
    Yes,
    /// Don't. Also what closing the card or no answer means.
    No,
    /// Download the browser again: the one button of a failed download (LAUNCH-5).
    TryAgain,
}

impl Choice {
    /// The button's label.
    pub fn label(self) -> &'static str {
        match self {
            Self::ThisChat => "This chat",
            Self::Always => "Always",
            Self::Yes => "Yes",
            Self::No => "No",
            Self::TryAgain => "Try again",
        }
    }

    /// Whether this answer lets the act go ahead.
    pub fn allows(self) -> bool {
        !matches!(self, Self::No)
    }
}

fn join_words(items: &[String]) -> String {
    match items {
        [] => "no files".to_owned(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn human_size(bytes: u64) -> String {
    const MB: u64 = 1_000_000;
    const KB: u64 = 1_000;
    if bytes >= MB {
        format!("{:.1} MB", bytes as f64 / MB as f64)
    } else if bytes >= KB {
        format!("{} KB", bytes.div_ceil(KB))
    } else {
        format!("{bytes} bytes")
    }
}
