//! The permit flow: every act asks conch-policy before any input reaches the page, and a
//! question goes to the person through the embedder's [`Asker`](crate::Asker) (PERM-3,
//! PERM-5, PERM-6, PERM-8, PERM-10, PERM-12, PERM-14, PERM-16, HS-1, HS-2, UP-9, NET-11).
//!
//! [`decide`] speaks one gate at a time: each answer is recorded in the facts and the rule
//! is asked again, so a site question may be followed by a high-stakes confirmation in
//! the same call. "This chat" answers live in the conversation; "Always" is saved to
//! browser.json's sites, and only an answer from the person can put it there. A Yes to a
//! high-stakes or upload question vouches for the rest of the step, so the site's own
//! "Are you sure?" right after it is not asked again (DLG-7).
//!
//! Deliberately absent: any path by which the agent, a tool argument or page text could
//! answer or skip a question.

use std::sync::Weak;

use conch_browser::SystemClock;
use conch_browser::page::Element;
use conch_browser::page::dialog::{Dialog, DialogHook, HookFuture};
use conch_browser::page::download::{DownloadHook, DownloadOffer};
use conch_browser::store::BrowserSettings;
use conch_policy::{
    ActKind, Choice, Decision, PermitFacts, QuestionKind, Site, SiteAllowance, decide,
};
use url::Url;

use crate::embedder::{Answer, AskRequest, AutoRequest};
use crate::error::ToolError;
use crate::tools::{ChatState, Inner};
use conch_policy::Question;

/// Runs the flow for one act; `Ok` means the act may go ahead now.
pub(crate) async fn permit(
    inner: &Inner,
    chat: &ChatState,
    element: Option<&Element>,
    tool: &str,
    mut facts: PermitFacts,
    carries: bool,
) -> Result<(), ToolError> {
    facts.allowance = allowance(inner, chat, &facts);
    facts.vouched = facts.vouched || chat.vouched();
    if facts.needs_auto_policy() {
        facts.auto = inner.config.auto_policy.decide(&AutoRequest {
            conversation: chat.id.clone(),
            tool: tool.to_owned(),
            site: facts.site.clone(),
            act: facts.act,
            carries,
            tainted: taint_note(inner, chat).is_some(),
        });
    }
    // Each gate asks at most once: site, high stakes, upload.
    for _ in 0..4 {
        let question = match decide(&facts) {
            Decision::Allow => return Ok(()),
            Decision::Refuse(refusal) => return Err(ToolError::Refused(refusal)),
            Decision::Ask(question) => question,
        };
        // The card shows the element, cut from the view around it (PERM-13, HS-2).
        let thumbnail = match element {
            Some(element) => crate::engine::thumbnail(element).await,
            None => None,
        };
        let request = AskRequest {
            conversation: chat.id.clone(),
            question: question.clone(),
            tool: tool.to_owned(),
            thumbnail,
            taint_note: taint_note(inner, chat),
        };
        let choice = match inner.config.asker.ask(&request).await {
            Answer::Nobody(sentence) => return Err(ToolError::Unanswered(sentence)),
            Answer::Person(choice) => choice,
        };
        // A choice the card did not offer (Always on a high-stakes card) counts as No.
        if !choice.allows() || !question.choices().contains(&choice) {
            return Err(ToolError::Declined {
                question: question.text().to_owned(),
            });
        }
        match question.kind() {
            QuestionKind::Site | QuestionKind::OwnChrome => {
                chat.allow_site(facts.site.as_str());
                if let Some(frame) = &facts.frame_site {
                    chat.allow_site(frame.as_str());
                }
                facts.allowance = SiteAllowance::ThisChat;
                if choice == Choice::Always && question.kind() == QuestionKind::Site {
                    save_always(inner, facts.site.as_str());
                    facts.allowance = SiteAllowance::Always;
                }
            }
            QuestionKind::HighStakes | QuestionKind::Upload | QuestionKind::Download => {
                facts.vouched = true;
                chat.vouch();
            }
        }
    }
    Err(ToolError::Page(
        "the permission check did not settle".to_owned(),
    ))
}

/// The taint guard's note for the conversation's cards (PERM-13, UP-10).
fn taint_note(inner: &Inner, chat: &ChatState) -> Option<String> {
    inner
        .config
        .taint_guard
        .as_ref()
        .and_then(|guard| guard.note(&chat.id))
}

/// What the person already said about the act's site: this chat, always, or nothing.
fn allowance(inner: &Inner, chat: &ChatState, facts: &PermitFacts) -> SiteAllowance {
    let site = facts.site.as_str();
    let frame_ok = facts
        .frame_site
        .as_ref()
        .is_none_or(|frame| chat.site_allowed(frame.as_str()) || always(inner, frame.as_str()));
    if chat.site_allowed(site) && frame_ok {
        SiteAllowance::ThisChat
    } else if always(inner, site) && frame_ok {
        SiteAllowance::Always
    } else {
        SiteAllowance::NotYet
    }
}

/// Whether browser.json's sites hold `site` (PERM-6).
fn always(inner: &Inner, site: &str) -> bool {
    let home = &inner.browser.config().home;
    BrowserSettings::load(home, &SystemClock)
        .map(|loaded| loaded.value.is_site_allowed(site))
        .unwrap_or(false)
}

/// Saves an Always answer to browser.json's sites (PERM-6). A failure to save leaves the
/// answer good for this conversation and is logged.
fn save_always(inner: &Inner, site: &str) {
    let home = &inner.browser.config().home;
    let saved = BrowserSettings::load(home, &SystemClock).and_then(|loaded| {
        let mut settings = loaded.value;
        settings.allow_site(site);
        settings.save(home)
    });
    if let Err(e) = saved {
        tracing::warn!(target: "conch_tools", %e, "the always-allowed site could not be saved");
    }
}

/// Answers a page's confirm during the agent's step through the same flow as any act on
/// its site: the site question if it was not answered, high stakes when the sentence asks
/// for a significant act, and a Yes already given in this step covers it (DLG-6, DLG-7).
#[derive(Debug)]
pub(crate) struct ConfirmHook {
    pub(crate) inner: Weak<Inner>,
    pub(crate) chat: Weak<ChatState>,
}

impl DialogHook for ConfirmHook {
    fn confirm(&self, dialog: Dialog) -> HookFuture {
        let inner = self.inner.upgrade();
        let chat = self.chat.upgrade();
        Box::pin(async move {
            let (Some(inner), Some(chat)) = (inner, chat) else {
                return false;
            };
            let Some(site) = Url::parse(&dialog.url)
                .ok()
                .and_then(|url| Site::of_url(&url).ok())
            else {
                return false;
            };
            let mut facts = PermitFacts::new(chat.mode(), ActKind::PageConfirm, site);
            if inner.config.stakes.asks_high_stakes(&dialog.message) {
                facts.significant_words = Some(dialog.message.trim().to_owned());
            }
            permit(&inner, &chat, None, "page_confirm", facts, false)
                .await
                .is_ok()
        })
    }
}

/// Asks the person about every download, in every mode, naming the file and the site,
/// never with Always (DL-1, HS-3). Nothing is kept before a Yes.
#[derive(Debug)]
pub(crate) struct DownloadAsk {
    pub(crate) inner: Weak<Inner>,
}

impl DownloadHook for DownloadAsk {
    fn ask(&self, offer: DownloadOffer) -> HookFuture {
        let inner = self.inner.upgrade();
        Box::pin(async move {
            let Some(inner) = inner else {
                return false;
            };
            let Ok(site) = Site::of_host(&offer.site) else {
                return false;
            };
            let conversation = inner.stepping.lock().map(|c| c.clone()).unwrap_or_default();
            let request = AskRequest {
                conversation,
                question: Question::download(&site, &offer.name, None),
                tool: "download".to_owned(),
                thumbnail: None,
                taint_note: None,
            };
            matches!(
                inner.config.asker.ask(&request).await,
                Answer::Person(Choice::Yes)
            )
        })
    }
}
