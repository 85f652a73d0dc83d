//! Questions as cards on the person's panel: the gateway's default [`Asker`] (PERM-3,
//! PERM-6, HS-2, UP-9, DL-1, issue 14).
//!
//! [`PanelAsker::ask`] puts a card on the [`Board`] and waits for the person's answer,
//! at most `--ask-timeout` (5 minutes by default); no answer, or the call being cancelled,
//! is No. Every watcher of the conversation's live socket gets the card as
//! `{type:'question', …}` (and the cards still open when it joins); while a panel watches
//! the conversation the question keeps waiting, and the timeout counts from when the last
//! watcher left (issue 28); the person answers
//! with `{type:'answer', id, choice}`. The first answer wins: a second one, from another
//! tab of the panel or a stale card, gets "That question was already answered." Every
//! watcher hears `{type:'questionClosed', id}` when a card is answered, expires or is
//! withdrawn. A watcher that fell behind on these events is set right with
//! [`Board::catch_up`] (issue 28), so no card and no closing is lost to it.
//!
//! Deliberately absent: any way for the agent to answer (PERM-6): answers come only from
//! the person's signed-in socket.

use conch_browser::sync::lock;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use conch_policy::{Choice, QuestionKind, Site};
use conch_tools::{Answer, AskRequest, Asker, BoxFuture};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{broadcast, oneshot};

/// How many card events a slow watcher may fall behind before it skips ahead (and is
/// then caught up, [`Board::catch_up`]).
const CARD_EVENTS: usize = 64;

/// How many recent closings the board remembers, to tell a watcher that fell behind how
/// each card it missed the closing of came down.
const CLOSINGS_KEPT: usize = 256;

/// The open questions of every conversation. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Board {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    next: AtomicU64,
    open: Mutex<HashMap<String, Open>>,
    events: broadcast::Sender<(String, CardEvent)>,
    /// The latest closings, oldest first: each card's id and how it came down.
    closed: Mutex<VecDeque<(String, &'static str)>>,
    timeout: Duration,
    /// How many panels watch a conversation: a question waits while one does, and its
    /// timeout counts from when the last one left (issue 28).
    watchers: std::sync::OnceLock<Watchers>,
}

/// Says how many watch a conversation.
struct Watchers(Box<dyn Fn(&str) -> usize + Send + Sync>);

impl std::fmt::Debug for Watchers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watchers")
    }
}

/// One card waiting for the person.
#[derive(Debug)]
struct Open {
    conversation: String,
    card: Card,
    choices: Vec<Choice>,
    answer: Option<oneshot::Sender<Choice>>,
}

/// A question card as the panel draws it: the live socket's `question` event (PROTO-8).
///
/// Its fields are in alphabetical order, the order the loose JSON it replaced went out
/// in, so the wire text is unchanged (docs/live-protocol.md).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Card {
    /// The buttons, in the question's order.
    choices: Vec<CardChoice>,
    /// The conversation the question is for.
    conversation: String,
    /// The cross-site frame the site question also names (PERM-16).
    #[serde(skip_serializing_if = "Option::is_none")]
    frame_site: Option<Site>,
    /// The card's id on the board (`q1`); empty until posted.
    id: String,
    /// What the question is about.
    kind: QuestionKind,
    /// Allowing also lends the person's sign-in (ERR-4).
    lends_sign_in: bool,
    /// The site asked about; none for the browser's download.
    #[serde(skip_serializing_if = "Option::is_none")]
    site: Option<Site>,
    /// The note that the page's words came from someone else, if they did.
    #[serde(skip_serializing_if = "Option::is_none")]
    taint_note: Option<String>,
    /// The question in one sentence.
    text: String,
    /// A PNG data URL of the page, if there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    thumbnail: Option<String>,
    /// The tool that asks.
    tool: String,
    /// Always `question`.
    #[serde(rename = "type")]
    tag: &'static str,
    /// The words of a significant act (HS-2).
    #[serde(skip_serializing_if = "Option::is_none")]
    words: Option<String>,
}

impl Card {
    /// The card's id on the board.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }
}

/// One button of a [`Card`].
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CardChoice {
    /// The protocol's name for it (`thisChat`, `always`, `yes`, `no`, `tryAgain`): what
    /// the person's `answer` sends back.
    id: Choice,
    /// The button's words.
    label: &'static str,
}

/// A card came down: the live socket's `questionClosed` event (PROTO-8).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CardClosed {
    /// `answered`, `expired` or `withdrawn`.
    how: &'static str,
    /// The card's id.
    id: String,
    /// Always `questionClosed`.
    #[serde(rename = "type")]
    tag: &'static str,
}

impl CardClosed {
    /// The id of the card that came down.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }
}

/// What the board tells a conversation's watchers.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub(crate) enum CardEvent {
    /// A new card.
    Question(Box<Card>),
    /// A card came down.
    Closed(CardClosed),
    /// A browser event beside the cards (`browser.status`, `permission.requested.browser`:
    /// PROTO-2), as the runtime wrote it.
    Browser(Value),
}

/// Why an answer was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum AnswerError {
    /// The card was answered already, expired, or never was.
    #[error("That question was already answered.")]
    Closed,
    /// The choice is not one of the card's buttons.
    #[error("That is not one of the question's choices.")]
    NotOffered,
}

/// A choice's id on the card: the protocol's own name for it (`thisChat`, `always`,
/// `yes`, `no`), as conch-policy serialises it.
fn choice_id(choice: Choice) -> Value {
    serde_json::to_value(choice).unwrap_or(Value::Null)
}

impl Board {
    /// An empty board whose questions wait at most `timeout`.
    pub fn new(timeout: Duration) -> Board {
        Board {
            inner: Arc::new(Inner {
                next: AtomicU64::new(1),
                open: Mutex::new(HashMap::new()),
                events: broadcast::Sender::new(CARD_EVENTS),
                closed: Mutex::new(VecDeque::new()),
                timeout,
                watchers: std::sync::OnceLock::new(),
            }),
        }
    }

    /// Tells the board who watches (the live view's count), once.
    pub(crate) fn set_watchers(&self, watchers: impl Fn(&str) -> usize + Send + Sync + 'static) {
        let _ = self.inner.watchers.set(Watchers(Box::new(watchers)));
    }

    /// Whether a panel watches `conversation` now.
    fn watched(&self, conversation: &str) -> bool {
        self.inner
            .watchers
            .get()
            .is_some_and(|w| (w.0)(conversation) > 0)
    }

    /// Card events from now on, with the conversation each belongs to.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<(String, CardEvent)> {
        self.inner.events.subscribe()
    }

    /// Sends `event` to every live socket of `conversation`, beside its cards (PROTO-2).
    pub(crate) fn tell(&self, conversation: &str, event: Value) {
        let _ = self
            .inner
            .events
            .send((conversation.to_owned(), CardEvent::Browser(event)));
    }

    /// The cards of `conversation` still open, oldest first.
    pub(crate) fn open_for(&self, conversation: &str) -> Vec<Card> {
        let open = lock(&self.inner.open);
        let mut cards: Vec<(u64, Card)> = open
            .iter()
            .filter(|(_, o)| o.conversation == conversation)
            .map(|(id, o)| {
                let n = id.trim_start_matches('q').parse().unwrap_or(0);
                (n, o.card.clone())
            })
            .collect();
        cards.sort_by_key(|(n, _)| *n);
        cards.into_iter().map(|(_, card)| card).collect()
    }

    /// What a watcher of `conversation` that fell behind on card events needs to be right
    /// again (issue 28): the closing of each card it was `shown` that is no longer open
    /// (how it came down, while the board remembers; else `withdrawn`), then every card
    /// still open, oldest first, again (the panel replaces a card it already shows).
    pub(crate) fn catch_up(&self, conversation: &str, shown: &HashSet<String>) -> Vec<CardEvent> {
        let open = self.open_for(conversation);
        let mut gone: Vec<&String> = shown
            .iter()
            .filter(|id| !open.iter().any(|card| card.id == **id))
            .collect();
        gone.sort();
        let closed = lock(&self.inner.closed);
        let mut events: Vec<CardEvent> = gone
            .into_iter()
            .map(|id| {
                let how = closed
                    .iter()
                    .rev()
                    .find(|(closed, _)| closed == id)
                    .map_or("withdrawn", |(_, how)| *how);
                CardEvent::Closed(CardClosed {
                    how,
                    id: id.clone(),
                    tag: "questionClosed",
                })
            })
            .collect();
        events.extend(
            open.into_iter()
                .map(|card| CardEvent::Question(Box::new(card))),
        );
        events
    }

    /// How many cards of `conversation` wait.
    pub(crate) fn count_for(&self, conversation: &str) -> usize {
        lock(&self.inner.open)
            .values()
            .filter(|o| o.conversation == conversation)
            .count()
    }

    /// The person's answer to card `id` of `conversation`: the first one wins.
    pub(crate) fn answer(
        &self,
        conversation: &str,
        id: &str,
        choice: &str,
    ) -> Result<Choice, AnswerError> {
        let mut open = lock(&self.inner.open);
        let card = open
            .get_mut(id)
            .filter(|o| o.conversation == conversation)
            .ok_or(AnswerError::Closed)?;
        let chosen = card
            .choices
            .iter()
            .copied()
            .find(|c| choice_id(*c) == choice)
            .ok_or(AnswerError::NotOffered)?;
        let sender = card.answer.take().ok_or(AnswerError::Closed)?;
        // The asker may have given up this instant; the card closes either way.
        let _ = sender.send(chosen);
        Ok(chosen)
    }

    /// Puts `card` up for `conversation`; gives its id and where the answer comes.
    fn post(
        &self,
        conversation: &str,
        mut card: Card,
        choices: Vec<Choice>,
    ) -> (String, oneshot::Receiver<Choice>) {
        let id = format!("q{}", self.inner.next.fetch_add(1, Ordering::Relaxed));
        card.id.clone_from(&id);
        let (tx, rx) = oneshot::channel();
        lock(&self.inner.open).insert(
            id.clone(),
            Open {
                conversation: conversation.to_owned(),
                card: card.clone(),
                choices,
                answer: Some(tx),
            },
        );
        let _ = self
            .inner
            .events
            .send((conversation.to_owned(), CardEvent::Question(Box::new(card))));
        (id, rx)
    }

    /// The agent of `conversation` went away: each of its questions still waiting ends at
    /// once (No, as a question nobody waits for), and its card is taken down.
    pub(crate) fn withdraw_for(&self, conversation: &str) {
        for open in lock(&self.inner.open)
            .values_mut()
            .filter(|o| o.conversation == conversation)
        {
            // Dropping the sender ends the asker's wait; it takes its card down.
            drop(open.answer.take());
        }
    }

    /// Takes card `id` down and tells the watchers how it closed.
    fn close(&self, id: &str, how: &'static str) {
        let closed = lock(&self.inner.open).remove(id);
        if let Some(open) = closed {
            {
                let mut recent = lock(&self.inner.closed);
                if recent.len() == CLOSINGS_KEPT {
                    recent.pop_front();
                }
                recent.push_back((id.to_owned(), how));
            }
            let _ = self.inner.events.send((
                open.conversation,
                CardEvent::Closed(CardClosed {
                    how,
                    id: id.to_owned(),
                    tag: "questionClosed",
                }),
            ));
        }
    }
}

/// The card of `request`, as the panel draws it; its id comes when it is posted.
fn card_of(request: &AskRequest) -> Card {
    let question = &request.question;
    Card {
        choices: question
            .choices()
            .iter()
            .map(|c| CardChoice {
                id: *c,
                label: c.label(),
            })
            .collect(),
        conversation: request.conversation.clone(),
        frame_site: question.frame_site().cloned(),
        id: String::new(),
        kind: question.kind(),
        lends_sign_in: question.lends_sign_in(),
        site: question.site().cloned(),
        taint_note: request.taint_note.clone(),
        text: question.text().to_owned(),
        thumbnail: request.thumbnail.as_ref().map(|png| {
            format!(
                "data:image/png;base64,{}",
                conch_browser::page::base64::encode(png)
            )
        }),
        tool: request.tool.clone(),
        tag: "question",
        words: question.words().map(str::to_owned),
    }
}

/// The gateway's [`Asker`]: a card on the panel, waiting for the person.
#[derive(Debug, Clone)]
pub struct PanelAsker {
    /// The board the cards go on, which the panel's live socket shows.
    pub board: Board,
    /// Where the person answers, for the sentence when nobody did.
    pub link: String,
}

/// Takes the card down however the wait ends (the call cancelled included).
struct Withdraw<'a> {
    board: &'a Board,
    id: String,
    how: &'static str,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        self.board.close(&self.id, self.how);
    }
}

impl Asker for PanelAsker {
    fn ask<'a>(&'a self, request: &'a AskRequest) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            let (id, answer) = self.board.post(
                &request.conversation,
                card_of(request),
                request.question.choices().to_vec(),
            );
            tracing::info!(
                conversation = request.conversation,
                card = id,
                "a question waits for the person on the panel"
            );
            let mut withdraw = Withdraw {
                board: &self.board,
                id,
                how: "withdrawn",
            };
            // The wait never ends while a panel watches the conversation: the timeout
            // counts from when the last watcher left (issue 28).
            let timeout = self.board.inner.timeout;
            // Watchers are looked at this often, so the wait ends at most a look early.
            let look = (timeout / 4).min(Duration::from_secs(1));
            let mut answer = answer;
            let mut deadline = tokio::time::Instant::now() + timeout;
            let outcome = loop {
                let now = tokio::time::Instant::now();
                let wait = deadline.saturating_duration_since(now).min(look);
                match tokio::time::timeout(wait, &mut answer).await {
                    Ok(answered) => break Ok(answered),
                    Err(elapsed) => {
                        if self.board.watched(&request.conversation) {
                            deadline = tokio::time::Instant::now() + timeout;
                        } else if tokio::time::Instant::now() >= deadline {
                            break Err(elapsed);
                        }
                    }
                }
            };
            match outcome {
                Ok(Ok(choice)) => {
                    withdraw.how = "answered";
                    Answer::Person(choice)
                }
                Ok(Err(_)) => Answer::Person(Choice::No),
                Err(_) => {
                    withdraw.how = "expired";
                    Answer::Nobody(format!(
                        "Nobody answered “{}” within {} s on the panel ({}), so Conch did not do it; ask the person to open the panel and try again.",
                        request.question.text(),
                        self.board.inner.timeout.as_secs(),
                        self.link,
                    ))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use conch_policy::Question;
    use serde_json::json;

    /// A card event as the panel reads it.
    fn value(event: (String, CardEvent)) -> (String, Value) {
        (event.0, serde_json::to_value(event.1).expect("JSON"))
    }

    fn request(conversation: &str) -> AskRequest {
        let site = Site::of_host("shop.test").expect("a site");
        AskRequest {
            conversation: conversation.to_owned(),
            question: Question::for_site(&site, None, false),
            tool: "browser_click".to_owned(),
            thumbnail: Some(vec![1, 2, 3]),
            taint_note: None,
        }
    }

    fn asker(timeout: Duration) -> PanelAsker {
        PanelAsker {
            board: Board::new(timeout),
            link: "http://127.0.0.1:7391/".to_owned(),
        }
    }

    /// LAUNCH-5: a failed browser download is a card in the fetcher's own sentence with
    /// exactly one button, Try again, and no site; pressing it is the answer.
    #[tokio::test]
    async fn launch_5_a_failed_download_is_a_card_with_one_button() {
        let asker = asker(Duration::from_secs(30));
        let mut events = asker.board.subscribe();
        let sentence = "Conch couldn't download Chromium: there isn't enough free disk space. Free up some space and try again.";
        let request = AskRequest {
            conversation: "c1".to_owned(),
            question: Question::browser_download_failed(sentence),
            tool: "browser-download".to_owned(),
            thumbnail: None,
            taint_note: None,
        };
        let asking = asker.ask(&request);
        tokio::pin!(asking);
        let (_, card) = tokio::select! {
            event = events.recv() => value(event.expect("a card")),
            _ = &mut asking => panic!("answered with no answer"),
        };
        assert_eq!(card["kind"], "browserDownload");
        assert_eq!(card["text"], sentence);
        assert_eq!(
            card["choices"],
            json!([{"id": "tryAgain", "label": "Try again"}])
        );
        assert!(card.get("site").is_none(), "{card}");
        let id = card["id"].as_str().expect("an id").to_owned();
        assert_eq!(
            asker.board.answer("c1", &id, "no"),
            Err(AnswerError::NotOffered)
        );
        assert_eq!(
            asker.board.answer("c1", &id, "tryAgain"),
            Ok(Choice::TryAgain)
        );
        assert_eq!(asking.await, Answer::Person(Choice::TryAgain));
    }

    /// PERM-3: the card carries the question, the site, the choices and the picture; the
    /// person's This chat comes back; the first answer wins and a second is told so.
    #[tokio::test]
    async fn perm_3_a_card_waits_for_the_persons_answer_and_the_first_wins() {
        let asker = asker(Duration::from_secs(30));
        let mut events = asker.board.subscribe();
        let request = request("c1");
        let asking = asker.ask(&request);
        tokio::pin!(asking);
        let card = tokio::select! {
            event = events.recv() => value(event.unwrap()),
            _ = &mut asking => panic!("answered with no answer"),
        };
        assert_eq!(card.0, "c1");
        let card = card.1;
        assert_eq!(card["type"], "question");
        assert_eq!(card["kind"], "site");
        assert_eq!(card["site"], "shop.test");
        assert_eq!(card["text"], "Let Conch use shop.test?");
        assert_eq!(
            card["choices"],
            json!([{"id": "thisChat", "label": "This chat"}, {"id": "always", "label": "Always"}, {"id": "no", "label": "No"}])
        );
        assert_eq!(card["thumbnail"], "data:image/png;base64,AQID");
        let id = card["id"].as_str().unwrap().to_owned();
        assert_eq!(asker.board.open_for("c1").len(), 1);
        assert_eq!(asker.board.count_for("c2"), 0);
        assert_eq!(
            asker.board.answer("c2", &id, "thisChat"),
            Err(AnswerError::Closed),
            "another conversation's socket can't answer it"
        );
        assert_eq!(
            asker.board.answer("c1", &id, "yes"),
            Err(AnswerError::NotOffered)
        );
        assert_eq!(
            asker.board.answer("c1", &id, "thisChat"),
            Ok(Choice::ThisChat)
        );
        assert_eq!(asking.await, Answer::Person(Choice::ThisChat));
        assert_eq!(
            asker.board.answer("c1", &id, "no"),
            Err(AnswerError::Closed),
            "a stale card answered twice"
        );
        let closed = value(events.recv().await.unwrap()).1;
        assert_eq!(
            closed,
            json!({"type": "questionClosed", "id": id, "how": "answered"})
        );
        assert!(asker.board.open_for("c1").is_empty());
    }

    /// Issue 14: no answer within the timeout is a sentence naming where to answer, and
    /// the card comes down.
    #[tokio::test]
    async fn perm_3_no_answer_in_time_is_no_with_a_sentence() {
        let asker = asker(Duration::from_millis(100));
        let request = request("c1");
        match asker.ask(&request).await {
            Answer::Nobody(sentence) => {
                assert!(sentence.contains("Nobody answered"), "{sentence}");
                assert!(sentence.contains("http://127.0.0.1:7391/"), "{sentence}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(asker.board.count_for("c1"), 0);
    }

    /// The wire text of every card event `asker` sends while asking `request` and being
    /// answered `choice`: the card, the card as a late watcher gets it, the closing.
    async fn wire(asker: &PanelAsker, request: &AskRequest, choice: &str) -> Vec<String> {
        let mut events = asker.board.subscribe();
        let asking = asker.ask(request);
        tokio::pin!(asking);
        let card = tokio::select! {
            event = events.recv() => event.expect("a card").1,
            _ = &mut asking => panic!("answered with no answer"),
        };
        let late = asker.board.open_for(&request.conversation);
        let id = match &card {
            CardEvent::Question(card) => card.id.clone(),
            CardEvent::Closed(_) | CardEvent::Browser(_) => panic!("a card first"),
        };
        asker
            .board
            .answer(&request.conversation, &id, choice)
            .expect("answered");
        asking.await;
        let closed = events.recv().await.expect("a closing").1;
        let mut sent = vec![serde_json::to_string(&card).expect("JSON")];
        sent.extend(late.iter().map(|c| serde_json::to_string(c).expect("JSON")));
        sent.push(serde_json::to_string(&closed).expect("JSON"));
        sent
    }

    /// PROTO-8: the question card is a public protocol: every kind of card, with every
    /// optional field, and its closing go out byte for byte as they did when cards were
    /// built as loose JSON (the golden file was written by that code).
    #[tokio::test]
    async fn proto_8_live_question_cards_are_byte_identical() {
        let asker = asker(Duration::from_secs(30));
        let site = Site::of_host("shop.test").expect("a site");
        let frame = Site::of_host("pay.test").expect("a site");
        let questions = [
            (Question::for_site(&site, Some(&frame), true), "always"),
            (Question::own_chrome(&site, None), "thisChat"),
            (Question::high_stakes(&site, "click", "Pay £12"), "yes"),
            (Question::download(&site, "report.pdf", Some(2048)), "no"),
            (
                Question::browser_download_failed("Conch couldn't download Chromium."),
                "tryAgain",
            ),
        ];
        let mut sent = Vec::new();
        for (n, (question, choice)) in questions.into_iter().enumerate() {
            let request = AskRequest {
                conversation: format!("c{n}"),
                question,
                tool: "browser_click".to_owned(),
                thumbnail: (n == 0).then(|| vec![1, 2, 3]),
                taint_note: (n == 0).then(|| "This page was written by someone else.".to_owned()),
            };
            sent.extend(wire(&asker, &request, choice).await);
        }
        insta::assert_snapshot!("live_question_cards", sent.join("\n"));
    }

    /// AMB-5 (issue 28): a question waits while a panel watches its conversation, for
    /// longer than the timeout; after the last watcher leaves it expires once the timeout
    /// has passed since then.
    #[tokio::test]
    async fn amb_5_a_question_waits_while_watched_and_times_out_after_the_watcher_left() {
        let asker = asker(Duration::from_millis(200));
        let watched = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let seen = Arc::clone(&watched);
        asker.board.set_watchers(move |conversation| {
            usize::from(conversation == "c1" && seen.load(Ordering::SeqCst))
        });
        let request = request("c1");
        let mut ask = asker.ask(&request);
        let started = tokio::time::Instant::now();
        assert!(
            tokio::time::timeout(Duration::from_millis(700), &mut ask)
                .await
                .is_err(),
            "still waiting after 3.5 timeouts while watched"
        );
        assert_eq!(asker.board.count_for("c1"), 1);
        watched.store(false, Ordering::SeqCst);
        let left = tokio::time::Instant::now();
        match ask.await {
            Answer::Nobody(sentence) => assert!(sentence.contains("Nobody answered")),
            other => panic!("{other:?}"),
        }
        // Counted from leaving, to within one look at the watchers (a quarter).
        let after = left.elapsed();
        assert!(
            after >= Duration::from_millis(150),
            "counted from leaving: {after:?}"
        );
        assert!(started.elapsed() >= Duration::from_millis(850));
    }

    /// A cancelled call takes its card down.
    #[tokio::test]
    async fn perm_3_a_cancelled_question_takes_its_card_down() {
        let asker = asker(Duration::from_secs(30));
        let request = request("c1");
        let asking = asker.ask(&request);
        let _ = tokio::time::timeout(Duration::from_millis(50), asking).await;
        assert_eq!(asker.board.count_for("c1"), 0);
    }
}
