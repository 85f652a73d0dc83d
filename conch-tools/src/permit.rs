//! The permit flow: every act asks conch-policy before any input reaches the page, and a
//! question goes to the person through the embedder's [`Asker`](crate::Asker) (PERM-3,
//! PERM-5, PERM-6, PERM-8, PERM-10, PERM-12, PERM-14, PERM-16, HS-1, HS-2, UP-9, NET-11).
//!
//! The flow takes plain facts: an [`Act`] (which tool, the [`PermitFacts`] of what is done
//! on which site with which words, whether the agent's words reach the page, the element
//! the card shows) at a [`Gate`] (the embedder's traits, the home whose browser.json keeps
//! Always answers, and the conversation's [`Consent`]). It knows nothing of the chat that
//! called it.
//!
//! [`permit`] speaks one gate at a time: each answer is recorded in the facts and the rule
//! is asked again, so a site question may be followed by a high-stakes confirmation in
//! the same call. "This chat" answers live in the conversation's [`Consent`]; "Always" is
//! saved to browser.json's sites, and only an answer from the person can put it there. A
//! Yes to a high-stakes or upload question vouches for the rest of the step, so the site's
//! own "Are you sure?" right after it is not asked again (DLG-7).
//!
//! Deliberately absent: any path by which the agent, a tool argument or page text could
//! answer or skip a question.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex as StdMutex, PoisonError, Weak};

use conch_browser::page::Element;
use conch_browser::page::dialog::{Dialog, DialogHook, HookFuture};
use conch_browser::page::download::{DownloadHook, DownloadOffer};
use conch_browser::store::BrowserSettings;
use conch_browser::{Home, SystemClock};
use conch_policy::{
    ActKind, BrowserKind, Choice, Decision, Mode, PermitFacts, Question, QuestionKind, Site,
    SiteAllowance, decide,
};
use url::Url;

use crate::config::ToolsConfig;
use crate::embedder::{Answer, AskRequest, AutoRequest};
use crate::error::ToolError;

/// What the person has said in one conversation: its mode, the sites allowed for this
/// chat (PERM-5), and whether they vouched for a significant act in this step (DLG-7).
#[derive(Debug)]
pub(crate) struct Consent {
    id: String,
    mode: StdMutex<Mode>,
    sites: StdMutex<HashSet<String>>,
    vouched: AtomicBool,
}

impl Consent {
    /// Conversation `id`, in `mode`, with nothing allowed yet.
    pub(crate) fn new(id: &str, mode: Mode) -> Consent {
        Consent {
            id: id.to_owned(),
            mode: StdMutex::new(mode),
            sites: StdMutex::new(HashSet::new()),
            vouched: AtomicBool::new(false),
        }
    }

    /// The conversation's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The conversation's mode.
    pub(crate) fn mode(&self) -> Mode {
        *self.mode.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts the conversation in `mode`.
    pub(crate) fn set_mode(&self, mode: Mode) {
        *self.mode.lock().unwrap_or_else(PoisonError::into_inner) = mode;
    }

    /// A new call begins: a Yes given in the last one vouches for nothing now.
    pub(crate) fn begin_call(&self) {
        self.vouched.store(false, Ordering::SeqCst);
    }

    fn site_allowed(&self, site: &str) -> bool {
        self.sites
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(site)
    }

    fn allow_site(&self, site: &str) {
        self.sites
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(site.to_owned());
    }

    /// Forgets a "This chat" answer for `site` (PERM-7): its next act asks again.
    pub(crate) fn forget_site(&self, site: &str) {
        self.sites
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(site);
    }

    /// Whether the person vouched for a significant act in this call (DLG-7).
    pub(crate) fn vouched(&self) -> bool {
        self.vouched.load(Ordering::SeqCst)
    }

    fn vouch(&self) {
        self.vouched.store(true, Ordering::SeqCst);
    }
}

/// Where the flow asks and keeps answers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gate<'a> {
    /// The embedder's asker, Auto policy and taint guard.
    pub(crate) config: &'a ToolsConfig,
    /// The home whose browser.json keeps the Always answers (PERM-6).
    pub(crate) home: &'a Home,
    /// What the person said in this conversation.
    pub(crate) consent: &'a Consent,
}

/// Tells the embedder's sink that the person is asked `question` before the agent acts
/// (`permission.requested.browser`, PROTO-2): what about, on which site, and whether
/// allowing lends a sign-in. A question with no permission kind (a download, a failed
/// browser download) has its own card and no event.
fn requested(config: &ToolsConfig, conversation: &str, question: &Question) {
    use conch_browser::protocol::{BrowserEvent, BrowserPermission, PermissionKind};
    let Some(sink) = &config.events else { return };
    let kind = match question.kind() {
        QuestionKind::Site => PermissionKind::Site,
        QuestionKind::OwnChrome => PermissionKind::OwnChrome,
        QuestionKind::HighStakes => PermissionKind::HighStakes,
        QuestionKind::Upload => PermissionKind::Upload,
        _ => return,
    };
    sink.send(
        conversation,
        BrowserEvent::PermissionRequested(BrowserPermission {
            kind,
            site: question.site().map(ToString::to_string).unwrap_or_default(),
            lends_sign_in: question.lends_sign_in(),
        }),
    );
}

/// One act, as plain facts.
#[derive(Debug)]
pub(crate) struct Act<'a> {
    /// The tool, as the card names it.
    pub(crate) tool: &'a str,
    /// What is done, on which site, with which words (conch-policy judges these).
    pub(crate) facts: PermitFacts,
    /// Whether the agent's own words go into the page (PERM-10).
    pub(crate) carries: bool,
    /// The element the card shows, cut from the view around it (PERM-13, HS-2).
    pub(crate) card: Option<&'a Element>,
}

/// Runs the flow for one act; `Ok` means the act may go ahead now, with the site whose
/// sign-in the person's Allow lends to the errand, if it did (ERR-4, PERM-15).
pub(crate) async fn permit(gate: Gate<'_>, act: Act<'_>) -> Result<Option<Site>, ToolError> {
    let Act {
        tool,
        mut facts,
        carries,
        card,
    } = act;
    let consent = gate.consent;
    facts.allowance = allowance(gate, &facts);
    facts.vouched = facts.vouched || consent.vouched();
    if facts.needs_auto_policy() {
        facts.auto = gate.config.auto_policy.decide(&AutoRequest {
            conversation: consent.id.clone(),
            tool: tool.to_owned(),
            site: facts.site.clone(),
            act: facts.act,
            carries,
            tainted: taint_note(gate).is_some(),
        });
    }
    // Only a question that said so lends, and only once allowed (ERR-4).
    let mut lends = None;
    // Each gate asks at most once: site, high stakes, upload.
    for _ in 0..4 {
        let question = match decide(&facts) {
            Decision::Allow => return Ok(lends),
            Decision::Refuse(refusal) => return Err(ToolError::Refused(refusal)),
            Decision::Ask(question) => question,
        };
        // The card shows the element, cut from the view around it (PERM-13, HS-2).
        let thumbnail = match card {
            Some(element) => crate::engine::thumbnail(element).await,
            None => None,
        };
        let request = AskRequest {
            conversation: consent.id.clone(),
            question: question.clone(),
            tool: tool.to_owned(),
            thumbnail,
            taint_note: taint_note(gate),
        };
        requested(gate.config, &consent.id, &question);
        let choice = match gate.config.asker.ask(&request).await {
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
                if question.lends_sign_in() {
                    lends = Some(facts.site.clone());
                }
                consent.allow_site(facts.site.as_str());
                if let Some(frame) = &facts.frame_site {
                    consent.allow_site(frame.as_str());
                }
                facts.allowance = SiteAllowance::ThisChat;
                if choice == Choice::Always && question.kind() == QuestionKind::Site {
                    save_always(gate.home, facts.site.as_str());
                    facts.allowance = SiteAllowance::Always;
                }
            }
            QuestionKind::HighStakes | QuestionKind::Upload | QuestionKind::Download => {
                facts.vouched = true;
                consent.vouch();
            }
            // Never a permit's question: the toolbox asks it on its own (LAUNCH-5).
            QuestionKind::BrowserDownload => {}
        }
    }
    Err(ToolError::Page(
        "the permission check did not settle".to_owned(),
    ))
}

/// The taint guard's note for the conversation's cards (PERM-13, UP-10).
fn taint_note(gate: Gate<'_>) -> Option<String> {
    gate.config
        .taint_guard
        .as_ref()
        .and_then(|guard| guard.note(&gate.consent.id))
}

/// What the person already said about the act's site: this chat, always, or nothing.
fn allowance(gate: Gate<'_>, facts: &PermitFacts) -> SiteAllowance {
    let consent = gate.consent;
    let site = facts.site.as_str();
    let frame_ok = facts.frame_site.as_ref().is_none_or(|frame| {
        consent.site_allowed(frame.as_str()) || always(gate.home, frame.as_str())
    });
    if consent.site_allowed(site) && frame_ok {
        SiteAllowance::ThisChat
    } else if always(gate.home, site) && frame_ok {
        SiteAllowance::Always
    } else {
        SiteAllowance::NotYet
    }
}

/// Whether browser.json's sites hold `site` (PERM-6).
fn always(home: &Home, site: &str) -> bool {
    BrowserSettings::load(home, &SystemClock)
        .map(|loaded| loaded.value.is_site_allowed(site))
        .unwrap_or(false)
}

/// Saves an Always answer to browser.json's sites (PERM-6). A failure to save leaves the
/// answer good for this conversation and is logged.
fn save_always(home: &Home, site: &str) {
    let saved = BrowserSettings::update(home, &SystemClock, |settings| {
        Ok::<_, std::convert::Infallible>(settings.allow_site(site))
    });
    if let Err(e) = saved {
        tracing::warn!(target: "conch_tools", %e, "the always-allowed site could not be saved");
    }
}

/// Answers a page's confirm during the agent's step through the same flow as any act on
/// its site: the site question if it was not answered, high stakes when the sentence asks
/// for a significant act, and a Yes already given in this step covers it (DLG-6, DLG-7).
/// It holds the toolbox's configuration and the conversation's consent weakly: once
/// either is gone, the page's confirm is refused.
#[derive(Debug)]
pub(crate) struct ConfirmHook {
    pub(crate) config: Weak<ToolsConfig>,
    pub(crate) consent: Weak<Consent>,
    pub(crate) home: Home,
    /// Which browser the step acts in (BE-12: the person's own Chrome always asks).
    pub(crate) browser: BrowserKind,
}

impl DialogHook for ConfirmHook {
    fn confirm(&self, dialog: Dialog) -> HookFuture {
        let config = self.config.upgrade();
        let consent = self.consent.upgrade();
        let home = self.home.clone();
        let browser = self.browser;
        Box::pin(async move {
            let (Some(config), Some(consent)) = (config, consent) else {
                return false;
            };
            let Some(site) = Url::parse(&dialog.url)
                .ok()
                .and_then(|url| Site::of_url(&url).ok())
            else {
                return false;
            };
            let mut facts = PermitFacts::new(consent.mode(), ActKind::PageConfirm, site);
            facts.browser = browser;
            if config.stakes.asks_high_stakes(&dialog.message) {
                facts.significant_words = Some(dialog.message.trim().to_owned());
            }
            let gate = Gate {
                config: &config,
                home: &home,
                consent: &consent,
            };
            let act = Act {
                tool: "page_confirm",
                facts,
                carries: false,
                card: None,
            };
            permit(gate, act).await.is_ok()
        })
    }
}

/// Asks the person about every download, in every mode, naming the file and the site,
/// never with Always (DL-1, HS-3). Nothing is kept before a Yes. The question goes to the
/// conversation whose tab started the download: the one whose watch took it up.
#[derive(Debug)]
pub(crate) struct DownloadAsk {
    pub(crate) config: Weak<ToolsConfig>,
    pub(crate) conversation: String,
}

impl DownloadHook for DownloadAsk {
    fn ask(&self, offer: DownloadOffer) -> HookFuture {
        let config = self.config.upgrade();
        let conversation = self.conversation.clone();
        Box::pin(async move {
            let Some(config) = config else {
                return false;
            };
            let Ok(site) = Site::of_host(&offer.site) else {
                return false;
            };
            let request = AskRequest {
                conversation,
                question: Question::download(&site, &offer.name, None),
                tool: "download".to_owned(),
                thumbnail: None,
                taint_note: None,
            };
            matches!(
                config.asker.ask(&request).await,
                Answer::Person(Choice::Yes)
            )
        })
    }
}
