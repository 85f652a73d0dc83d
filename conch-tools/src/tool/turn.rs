//! One call's turn: what a tool works with (the conversation, its pages, the toolbox's
//! configuration) and the steps every act shares: the site and the permit facts of its
//! target, the permit flow, the agent's step for the page's dialogs and downloads, and
//! what changed afterwards.
//!
//! Deliberately absent: any one tool's behaviour; that is in the tool's own module.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use conch_browser::page::Element;
use conch_browser::page::dialog::StepGuard;
use conch_browser::page::download::{
    DownloadOwner, DownloadPlaces, DownloadScope, watch_downloads_in,
};
use conch_browser::{Browser, Conversation, Home};
use conch_policy::{
    ActKind, BrowserKind, CommitContext, Control, Mode, NavigationBy, PermitFacts, Site, Size,
    Verdict, classify_field, navigation_verdict, verdict_for_url,
};
use url::Url;

use crate::config::ToolsConfig;
use crate::engine::{self, Pages, TargetFacts};
use crate::error::ToolError;
use crate::permit::{Act, ConfirmHook, DownloadAsk, Gate, permit};
use crate::result::Reply;
use crate::state::{ChatState, Followup, Inner, lock};

/// One call of one tool in one conversation.
#[derive(Debug)]
pub(crate) struct Turn<'a> {
    inner: &'a Inner,
    chat: &'a ChatState,
    /// The conversation where it browses for this call (LIVE-16).
    conv: Conversation,
    /// The tool called, as the person's card names it.
    tool: &'static str,
    /// What the call does (TOOL-5).
    act: ActKind,
    /// The commit this call's act was judged significant for, if any (issue 30).
    pending: std::sync::Mutex<Option<Pending>>,
    /// When the call began, for whether the person took the wheel during it (HAND-8).
    began: std::time::Instant,
}

/// A commit judged significant in this call, for the one question per act (issue 30).
#[derive(Debug, Clone)]
struct Pending {
    /// The stem it is significant for.
    stem: String,
    /// Whether it is in a dialog that opened after the dialogs were last marked.
    fresh_dialog: bool,
}

impl<'a> Turn<'a> {
    /// A call of `tool`, doing `act`, in conversation `chat`.
    pub(crate) fn new(
        inner: &'a Inner,
        chat: &'a ChatState,
        conv: Conversation,
        tool: &'static str,
        act: ActKind,
    ) -> Turn<'a> {
        Turn {
            inner,
            chat,
            conv,
            tool,
            act,
            pending: std::sync::Mutex::new(None),
            began: std::time::Instant::now(),
        }
    }

    /// Whether the person took the wheel since this call began: they drive now, or their
    /// input reached the page meanwhile (LIVE-8, HAND-8). A call that acts more than once
    /// (a form's fields, a typed text's submit) asks before each later act and stops
    /// there: its next act would land among the person's own, on a page the agent has not
    /// seen. The agent's next call waits for the wheel as any does.
    pub(crate) fn person_took_the_wheel(&self) -> bool {
        let wheel = self.conv.wheel();
        wheel.state().person_drives
            || wheel
                .since_person_input()
                .is_some_and(|since| since < self.began.elapsed())
    }

    /// The runtime's view of the conversation.
    pub(crate) fn conv(&self) -> &Conversation {
        &self.conv
    }

    /// The conversation's readers and dialog watches.
    pub(crate) fn pages(&self) -> &'a Pages {
        &self.chat.pages
    }

    /// The toolbox's configuration.
    pub(crate) fn config(&self) -> &'a ToolsConfig {
        &self.inner.config
    }

    /// The browser's home.
    pub(crate) fn home(&self) -> &'a Home {
        &self.browser().config().home
    }

    fn browser(&self) -> &'a Browser {
        &self.inner.browser
    }

    /// The conversation's id.
    pub(crate) fn conversation_id(&self) -> &'a str {
        self.chat.consent.id()
    }

    /// The conversation's mode.
    pub(crate) fn mode(&self) -> Mode {
        self.chat.consent.mode()
    }

    /// Whether the conversation's engine sees images (TOOL-18).
    pub(crate) fn vision(&self) -> bool {
        self.chat.vision.load(Ordering::SeqCst)
    }

    /// The size of the last screenshot, for click_at (GES-12).
    pub(crate) fn last_screenshot(&self) -> Option<Size> {
        *lock(&self.chat.screenshot)
    }

    /// Remembers the size of the screenshot just taken.
    pub(crate) fn remember_screenshot(&self, size: Size) {
        *lock(&self.chat.screenshot) = Some(size);
    }

    /// The site of the active tab's page, for the permit flow.
    pub(crate) async fn site(&self) -> Result<Site, ToolError> {
        let conv = self.conv();
        if engine::active_tab(conv).await?.is_none() {
            return Err(ToolError::NoPage);
        }
        let url = engine::current_url(conv).await?;
        let parsed = Url::parse(&url).map_err(|_| ToolError::NoPage)?;
        Site::of_url(&parsed).map_err(|_| ToolError::NoPage)
    }

    /// The permit facts of this call's act on `target`.
    pub(crate) fn facts(&self, site: Site, target: &TargetFacts) -> PermitFacts {
        let mut facts = self.bare_facts(site);
        facts.significant_words = self.judge(target, &target.words);
        facts.secret_target = target.secret || classify_field(&target.field).is_secret();
        // An act inside a frame of another site names that site too (PERM-16).
        facts.frame_site = target
            .document_url
            .as_deref()
            .and_then(|u| Url::parse(u).ok())
            .and_then(|u| Site::of_url(&u).ok())
            .filter(|frame| *frame != facts.site);
        facts
    }

    /// The permit facts of this call's act on `site` alone, with no target yet.
    pub(crate) fn bare_facts(&self, site: Site) -> PermitFacts {
        let mut facts = PermitFacts::new(self.mode(), self.act, site);
        facts.browser = self.browser_kind();
        facts
    }

    /// Which browser this call acts in: the person's own Chrome asks in every
    /// conversation, whatever the mode or the always-allowed sites (BE-12).
    pub(crate) fn browser_kind(&self) -> BrowserKind {
        if self.browser().in_persons_browser(self.conversation_id()) {
            BrowserKind::OwnChrome
        } else {
            BrowserKind::Conch
        }
    }

    /// The control's words when they name a significant act (HS-1): a control of `role`
    /// (empty when unknown), so a link whose name is a long description is navigation.
    pub(crate) fn significant(&self, role: &str, words: &str) -> Option<String> {
        self.config()
            .stakes
            .on_control(role, words)
            .map(|_| words.trim().to_owned())
    }

    /// The words a question shows when acting on `target`, whose own words are `words`,
    /// is high stakes (issue 30, HS-1, HS-7): only an act that commits is, by its own words
    /// or its context (its form, its dialog, a confirmation sentence near it); a link with
    /// a real address, an option, a radio and a field never are, and a checkbox only by its
    /// own words. The commit is remembered for the one question per act.
    pub(crate) fn judge(&self, target: &TargetFacts, words: &str) -> Option<String> {
        let control = Control {
            role: &target.role,
            tag: &target.tag,
            input_type: &target.field.input_type,
            href: target.commit.href.as_deref(),
            editable: target.editable,
        };
        let context = CommitContext {
            form: target.commit.form.clone(),
            dialog: target.commit.dialog.clone(),
            text: target.commit.text.clone(),
        };
        let found = self.config().stakes.on_commit(&control, words, &context)?;
        *lock(&self.pending) = Some(Pending {
            stem: found.significant.stem.clone(),
            fresh_dialog: target.commit.dialog_fresh,
        });
        let own = words.trim();
        Some(match found.context {
            None => own.to_owned(),
            Some(context) if own.is_empty() => context,
            Some(context) => format!("{own} (“{context}”)"),
        })
    }

    /// Runs the permit flow for this call's act: `facts` judged, `carries` when the
    /// agent's words go into the page, `card` the element the question shows.
    pub(crate) async fn permit(
        &self,
        card: Option<&Element>,
        mut facts: PermitFacts,
        carries: bool,
    ) -> Result<(), ToolError> {
        let gate = Gate {
            config: self.config(),
            home: self.home(),
            consent: &self.chat.consent,
        };
        // In an errand the site question says Allow lends the sign-in (ERR-4); the
        // browser knows whether the conversation is one, never a tool argument (ERR-1).
        facts.errand_lends = self.browser().errand_lends(self.conversation_id());
        // One question per irreversible act (issue 30): the act just after a commit the
        // person said Yes to, on the same tab, that commits in a dialog which opened since,
        // for the same word, is that commit's own confirmation. Any act ends the cover.
        let followup = lock(&self.chat.followup).take();
        let pending = lock(&self.pending).clone();
        let tab = engine::active_tab(self.conv()).await.ok().flatten();
        let covered = match (&followup, &pending, &tab) {
            (Some(followup), Some(pending), Some(tab)) => {
                pending.fresh_dialog && followup.tab == *tab && followup.stem == pending.stem
            }
            _ => false,
        };
        if covered && facts.significant_words.is_some() {
            facts.vouched = true;
        }
        let act = Act {
            tool: self.tool,
            facts,
            carries,
            card,
        };
        let lends = permit(gate, act).await?;
        if !covered
            && let (Some(pending), Some(tab)) = (pending, tab)
            && self.chat.consent.vouched()
            && engine::mark_open_dialogs(self.conv(), card).await
        {
            *lock(&self.chat.followup) = Some(Followup {
                tab,
                stem: pending.stem,
            });
        }
        if let Some(site) = lends {
            // The person allowed it in the errand: its sign-in is lent before the act
            // (PERM-15). A lend that fails leaves the errand signed out, as before.
            if let Err(e) = self
                .browser()
                .lend_sign_in(self.conversation_id(), site.as_str())
                .await
            {
                tracing::warn!(target: "conch_tools", error = %e, "a sign-in could not be lent to the errand");
            }
        }
        Ok(())
    }

    /// Marks the agent's step on the conversation's tabs, for the page's dialogs.
    pub(crate) async fn step(&self) -> Vec<StepGuard> {
        self.watch_downloads().await;
        let hook = Arc::new(ConfirmHook {
            config: Arc::downgrade(&self.inner.config),
            consent: Arc::downgrade(&self.chat.consent),
            home: self.home().clone(),
            browser: self.browser_kind(),
        });
        self.pages()
            .step(self.conv(), self.mode(), hook)
            .await
            .unwrap_or_default()
    }

    /// Installs this conversation's download watch on the browser context its pages live
    /// in, once per context and launch (DL-1, AMB-9, issue 29): each download's question
    /// and note go to the conversation whose tab started it. No lock shared by the
    /// toolbox is held meanwhile: the page (and a launch) is reached first, and only this
    /// conversation's watch is locked.
    async fn watch_downloads(&self) {
        let Some(downloads) = self.inner.config.downloads.clone() else {
            return;
        };
        let conv = self.conv();
        let Ok(page) = conv.page().await else {
            return;
        };
        // A chat in the main browser is in its default context, named by no id (the
        // browser sends no download events for it when it is named); an errand, or a chat
        // with a browser of its own, is in a context of its own.
        let context = match conv.session() {
            None => None,
            Some(_) => page
                .call_raw("Target.getTargetInfo", serde_json::json!({}))
                .await
                .ok()
                .and_then(|info| {
                    info["targetInfo"]["browserContextId"]
                        .as_str()
                        .map(str::to_owned)
                }),
        };
        let key = (conv.launches().await, context.clone());
        let mut current = self.chat.downloads.lock().await;
        if current.as_ref().is_some_and(|(at, _)| *at == key) {
            return;
        }
        // A remote browser's files are on its own disk: refused with a sentence (DL-5).
        let places = if conv.downloads_to_disk() {
            DownloadPlaces::Local {
                staging: self.home().browser_dir().join("downloads-staging"),
                downloads,
            }
        } else {
            DownloadPlaces::Remote
        };
        let scope = DownloadScope {
            context,
            shared_with_person: conv.shares_context_with_person(),
            owner: Some(Arc::new(StartedBy(conv.clone()))),
        };
        let hook = Arc::new(DownloadAsk {
            config: Arc::downgrade(&self.inner.config),
            conversation: self.conversation_id().to_owned(),
        });
        // The old watch (another context or launch) goes first, with what it staged.
        *current = None;
        match watch_downloads_in(&page.connection().browser(), scope, places, hook).await {
            Ok(watch) => *current = Some((key, watch)),
            Err(e) => tracing::warn!(target: "conch_tools", %e, "downloads can't be watched"),
        }
    }

    /// What changed after an act, after `lines`.
    pub(crate) async fn changed(&self, lines: Vec<String>) -> Result<Reply, ToolError> {
        let mut reply = Reply {
            lines,
            ..Reply::default()
        };
        match self.pages().changes(self.conv()).await {
            Ok(Some(body)) => reply.page = Some(body),
            Ok(None) => reply
                .lines
                .push("Nothing on the page changed that a read shows.".to_owned()),
            // The act was done; the page it left runs a script that never ends, so its
            // outcome can't be read. Say so rather than fail an act that happened.
            Err(ToolError::Busy { seconds }) => reply.lines.push(format!(
                "Done, but the page then stopped answering: a script of its own has kept it busy for {seconds} s, so what changed can't be read. Wait and call browser_read, or open another page."
            )),
            Err(other) => return Err(other),
        }
        // The act's own effects landed, but the page keeps changing on its own (a clock,
        // a chart, a feed): the agent waits for the words it needs (issue 30).
        if engine::still_changing(self.conv()).await {
            reply.lines.push(engine::STILL_CHANGING.to_owned());
        }
        Ok(reply)
    }

    /// Judges an address the agent asked to open: http, https or about:blank only (NET-6),
    /// and never a refused place (NET-1, NET-3, NET-5).
    pub(crate) fn check_address(&self, address: &str) -> Result<Url, ToolError> {
        let trimmed = address.trim();
        let url = Url::parse(trimmed).or_else(|e| match e {
            // "example.com" without a scheme: https is meant.
            url::ParseError::RelativeUrlWithoutBase if !trimmed.contains(' ') => {
                Url::parse(&format!("https://{trimmed}"))
            }
            other => Err(other),
        });
        let url = url.map_err(|_| ToolError::BadAddress(trimmed.to_owned()))?;
        if let Verdict::Refuse(refusal) = navigation_verdict(&url, NavigationBy::Agent) {
            return Err(refusal.into());
        }
        if let Verdict::Refuse(refusal) = verdict_for_url(&url, &self.config().net) {
            return Err(refusal.into());
        }
        Ok(url)
    }

    /// The notes after a page opened, with the person's "decline cookie banners"
    /// setting (browser.json) applied.
    pub(crate) async fn after_open(&self) -> Vec<String> {
        engine::after_open(self.conv(), self.decline_banners()).await
    }

    /// The person's "decline cookie banners" setting (browser.json).
    fn decline_banners(&self) -> bool {
        conch_browser::store::BrowserSettings::load(self.home(), &conch_browser::SystemClock)
            .map(|loaded| loaded.value.decline_cookie_banners)
            .unwrap_or(false)
    }
}

/// A conversation as the owner of the downloads its own tabs start (DL-1, issue 29).
#[derive(Debug)]
struct StartedBy(Conversation);

impl DownloadOwner for StartedBy {
    fn started(&self, frame_id: String) -> conch_browser::page::dialog::HookFuture {
        let conv = self.0.clone();
        Box::pin(async move { conv.started_download(&frame_id).await })
    }
}
