//! The traits the embedding application implements (REQUIREMENTS "Interfaces"): the
//! [`Asker`] that carries a question to the person and brings the answer back, the
//! [`SecretFiller`] that fills a secret field without the value reaching the model, the
//! [`ChatFiles`] an upload may draw from, the [`AutoPolicy`] of Auto mode, and the
//! [`TaintGuard`] whose note goes on the cards, and the [`ImageDescriber`] for models that
//! can't see.
//!
//! Deliberately absent: any way for the agent to answer a question. An answer reaches
//! conch-tools only through the embedder's [`Asker`] (PERM-6).

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use conch_policy::{ActKind, AutoAnswer, Choice, FieldFacts, Question, Site};
use zeroize::{ZeroizeOnDrop, Zeroizing};

/// A boxed future, for the async traits' methods.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A question for the person, with what the card shows around it.
#[derive(Debug, Clone)]
pub struct AskRequest {
    /// The conversation the act belongs to.
    pub conversation: String,
    /// The question, its words and its choices.
    pub question: Question,
    /// The tool that raised it (`browser_click`), `page_confirm` for a page's confirm,
    /// `download` for a download.
    pub tool: String,
    /// A PNG cut from the view around the element (PERM-13, HS-2); `None` for a page's
    /// confirm (a frozen page can't be pictured), a point, or a download.
    pub thumbnail: Option<Vec<u8>>,
    /// The [`TaintGuard`]'s note, when the conversation read untrusted content.
    pub taint_note: Option<String>,
}

/// What came back from a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The person chose this. A choice the question did not offer counts as No.
    Person(Choice),
    /// No one could answer (no panel, `--unattended`): the sentence says why and how to
    /// allow such acts; the act does not happen.
    Nobody(String),
}

/// Carries a question to the person and brings their answer back. Implemented by the
/// embedder: the gateway's web panel, a chat UI's permission card. Answers must come from
/// a person, never from the agent.
pub trait Asker: fmt::Debug + Send + Sync {
    /// Asks `request.question` and waits for the answer. Closing the card or no answer
    /// means [`Choice::No`].
    fn ask<'a>(&'a self, request: &'a AskRequest) -> BoxFuture<'a, Answer>;
}

/// An [`Asker`] for runs where nobody answers: every question is answered No at once, and
/// the result says so (`--unattended`, AMB-5).
#[derive(Debug, Clone, Default)]
pub struct Unattended;

impl Asker for Unattended {
    fn ask<'a>(&'a self, request: &'a AskRequest) -> BoxFuture<'a, Answer> {
        let sentence = format!(
            "Conch runs unattended, so “{}” was answered No at once; {}",
            request.question.text(),
            how_to_allow(&request.question)
        );
        Box::pin(async move { Answer::Nobody(sentence) })
    }
}

/// An [`Asker`] for a host with no way to reach the person: each question is refused
/// with a sentence saying how to allow such acts.
#[derive(Debug, Clone, Default)]
pub struct NoOneToAsk;

impl Asker for NoOneToAsk {
    fn ask<'a>(&'a self, request: &'a AskRequest) -> BoxFuture<'a, Answer> {
        let sentence = format!(
            "No one can answer “{}” here, so Conch did not do it; {}",
            request.question.text(),
            how_to_allow(&request.question)
        );
        Box::pin(async move { Answer::Nobody(sentence) })
    }
}

/// How the person can allow an act that was asked about, as the end of a sentence.
pub fn how_to_allow(question: &Question) -> String {
    use conch_policy::QuestionKind as K;
    match question.kind() {
        K::Site | K::OwnChrome => {
            let site = question.site().map(Site::as_str).unwrap_or("the site");
            format!(
                "to allow it, the person can add {site} to the sites in browser.json, or start the gateway with --trust full (or with a panel that can ask)."
            )
        }
        K::HighStakes | K::Upload | K::Download => "this always needs the person's own yes: ask them to do it themselves, or run Conch with a panel that can ask.".to_owned(),
        K::BrowserDownload => "the browser is downloaded again on the next call, or when the person presses Try again on the panel.".to_owned(),
    }
}

/// A secret the embedder hands over for filling; its `Debug` never shows it, and its
/// memory is wiped when it is dropped (issue 29).
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(Zeroizing<String>);

/// Dropping a [`SecretValue`] wipes it: the one field is [`Zeroizing`].
impl ZeroizeOnDrop for SecretValue {}

impl SecretValue {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        SecretValue(Zeroizing::new(value.into()))
    }

    /// The secret, for typing it into the page.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretValue([REDACTED])")
    }
}

/// What a [`SecretFiller`] is asked for.
#[derive(Debug, Clone)]
pub struct SecretRequest {
    /// The conversation.
    pub conversation: String,
    /// The page's site.
    pub site: Site,
    /// The page's address.
    pub url: String,
    /// What the page says about the field.
    pub field: FieldFacts,
    /// Whether the field asks for a new password (`conch_policy::is_new_password`: a
    /// `new-password` autocomplete, or a sign-up form's password field).
    pub new_password: bool,
    /// What the form's username or email field holds (typed by the agent, never secret);
    /// empty when the form has none.
    pub username: String,
}

/// Fills secret fields from the person's vault (Passwords) without the value reaching the
/// model (SEC-2). Without one, a secret field is handed to the person.
pub trait SecretFiller: fmt::Debug + Send + Sync {
    /// The value for this field, or `None` when the vault has none.
    fn secret_for<'a>(&'a self, request: &'a SecretRequest) -> BoxFuture<'a, Option<SecretValue>>;

    /// For a new-password field the vault has nothing for (issue 16): a fresh strong
    /// password, already kept for the page's site with the request's username, or `None`
    /// to hand the field to the person. A filler that can't keep it must give `None`, so a
    /// site never gets a password the person doesn't have. The default makes none.
    fn new_secret_for<'a>(
        &'a self,
        request: &'a SecretRequest,
    ) -> BoxFuture<'a, Option<SecretValue>> {
        let _ = request;
        Box::pin(async { None })
    }
}

/// The files a chat may upload from (UP-2).
pub trait ChatFiles: fmt::Debug + Send + Sync {
    /// Files the person attached in this conversation, as absolute paths.
    fn attachments(&self, conversation: &str) -> Vec<PathBuf>;
    /// Files Conch made in this conversation, as absolute paths.
    fn made(&self, conversation: &str) -> Vec<PathBuf>;
    /// The conversation's work folder, if it has one.
    fn work_folder(&self, conversation: &str) -> Option<PathBuf>;
}

/// No attachments, nothing made, and one work folder for every conversation (or none).
#[derive(Debug, Clone, Default)]
pub struct WorkFolder(pub Option<PathBuf>);

impl ChatFiles for WorkFolder {
    fn attachments(&self, _: &str) -> Vec<PathBuf> {
        Vec::new()
    }
    fn made(&self, _: &str) -> Vec<PathBuf> {
        Vec::new()
    }
    fn work_folder(&self, _: &str) -> Option<PathBuf> {
        self.0.clone()
    }
}

/// What Auto's policy is asked about an ordinary-site act (PERM-10).
#[derive(Debug, Clone)]
pub struct AutoRequest {
    /// The conversation.
    pub conversation: String,
    /// The tool.
    pub tool: String,
    /// The site.
    pub site: Site,
    /// The kind of act.
    pub act: ActKind,
    /// Whether a value is long (PERM-11).
    pub carries: bool,
    /// Whether the [`TaintGuard`] marks the conversation as having read untrusted content.
    pub tainted: bool,
}

/// Says whether a conversation has read untrusted content, and gives the note its cards
/// carry (PERM-13, UP-10).
pub trait TaintGuard: fmt::Debug + Send + Sync {
    /// The note, when the conversation is tainted; `None` otherwise.
    fn note(&self, conversation: &str) -> Option<String>;
}

/// In Auto mode, whether an ordinary-site act asks the site question (PERM-10). High
/// stakes, secrets and uploads follow their own rules whatever it says.
pub trait AutoPolicy: fmt::Debug + Send + Sync {
    /// Allow without the site question, or ask it.
    fn decide(&self, request: &AutoRequest) -> AutoAnswer;
}

/// Auto's default: no site question on an ordinary site ("Decisions that differ").
#[derive(Debug, Clone, Default)]
pub struct AutoAllows;

impl AutoPolicy for AutoAllows {
    fn decide(&self, _: &AutoRequest) -> AutoAnswer {
        AutoAnswer::Allow
    }
}

/// Describes a screenshot for a model that can't see images (TOOL-18).
pub trait ImageDescriber: fmt::Debug + Send + Sync {
    /// A description of the PNG `png`, in words.
    fn describe<'a>(&'a self, png: &'a [u8]) -> BoxFuture<'a, String>;
}

/// What the person is told when the agent hands them the browser (HAND-1, HAND-7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The conversation the handoff belongs to.
    pub conversation: String,
    /// The headline ("Conch needs you").
    pub title: String,
    /// The agent's reason, and for a gate that Conch carries on by itself.
    pub body: String,
    /// Opens the chat with the browser in front (`?browser=1`), when the embedder has one.
    pub link: Option<String>,
    /// The action's label: "Take over".
    pub action: &'static str,
    /// Whether the handoff starts at a gate, so it ends by itself (HAND-2).
    pub gate: bool,
}

/// Tells the person that the agent handed them the browser (HAND-1, HAND-7). An embedder
/// with a notifier is one where a person can take over (a live view, or a visible window).
pub trait Notifier: fmt::Debug + Send + Sync {
    /// Tells the person; it must not wait for them.
    fn notify(&self, notification: &Notification);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wiped_when_dropped<T: ZeroizeOnDrop>() {}

    /// Issue 29, SEC-2: a secret handed over for filling is wiped when dropped, and its
    /// `Debug` never shows it.
    #[test]
    fn sec_2_a_secret_value_is_wiped_when_dropped() {
        wiped_when_dropped::<SecretValue>();
        wiped_when_dropped::<Zeroizing<String>>();
        let value = SecretValue::new("canary-wipe-51c7");
        assert_eq!(value.expose(), "canary-wipe-51c7");
        assert!(!format!("{value:?}").contains("canary"));
    }
}
