//! Placement on a pool of remote browsers (issue 32). On a pool every conversation, chat
//! or task, browses apart from every other, as an errand does (ERR-1): its browser is an
//! errands' browser of its own (`Side::Errands`, so a context of its own, sealed when set
//! aside, disposed when it ends, ERR-10, ERR-11, ERR-18), whose driver, [`Placement`],
//! takes a place on the least-loaded address that answers and opens a connection of its
//! own there (an address that gives a fresh browser per connection, as browserless does,
//! gives it one). At most `per_endpoint` conversations share an address; past that a
//! conversation waits its turn in a first-come queue, told how many are ahead (on the
//! person's view as `browser.status`, and to the agent's door through
//! [`Pool::waits`], which sends it as MCP progress), for at most
//! [`BrowserConfig::pool_wait`], then refused with a sentence. A call that stops (the
//! person's Stop, the client's cancel) while it waits, while its connection opens or
//! while the browser it reached is set up leaves the line and frees what it took: a place
//! is a guard, freed however its holder goes, and a browser dropped without letting go
//! closes its connection.
//!
//! A connection closed by the other side is decided on once, when it drops: its address
//! is taken out of the pool when nothing answers there any more, and the person's view
//! of the conversation is told at once over the stale frame. The conversation moves off
//! that address (to another with room, else back where it was), its tabs reopening on
//! its next call, or at once when someone watches it or holds its wheel (its browser saw
//! the connection die, ERR-19), and its next result says where in one note, which stands
//! for ERR-19's "Reopened a task's browser as it was." rather than adding to it. The person who held the wheel keeps it
//! on the reopened tabs (what they had typed and not sent is lost, and they are told);
//! when nothing is left to reopen them on, the wheel goes back to the agent, whose
//! waiting call hears why. Letting go (the conversation ended, or sat idle: nobody at
//! its wheel, watching it, or waiting in a handoff, a question or a call of its agent,
//! for the idle time since that ended) closes the connection and frees the place for the
//! next in line.
//!
//! Deliberately absent: the guard's proxy (a remote browser gets the CDP-only guard), and
//! seeding or lending sign-ins ([`Abilities::POOL`], ERR-3, ERR-4). Elsewhere the source
//! of a lend is the main context: one persistent jar the person signs in to, shared by
//! every chat (ERR-2) and outliving every conversation, from which a site's cookies are
//! copied on the person's Allow and taken back on revoking (ERR-8). A pool has no such
//! jar: every chat has a context of its own, disposed when it ends and set aside when
//! idle. Lending from a chat's context was weighed and left out: several chats may be
//! signed in to the same site as different accounts while the Allow card names a site,
//! not a chat, so which sign-in went would be Conch's guess, not the person's choice; the
//! source comes and goes (ended, or sealed aside), so the same Allow would lend or not by
//! timing; and it would share one chat's sign-in further than the rules ever share a
//! chat's (chats on a pool see none of each other's). Lending from Conch's own local
//! profile was left out too: on a pool nothing runs on this computer, reading its
//! cookies means launching it, and a lend would copy the person's local sign-ins onto
//! machines that whoever runs the fleet can read. A task on a pool starts signed out and
//! signs in through a handoff or Passwords, as under Auto and Full trust (ERR-5).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::future::BoxFuture;

use super::*;
use crate::backend::{Backend, ConnectError, Connected, Facts};

/// What the agent and the person read while every address of the pool is at its cap.
pub fn waiting_sentence(ahead: usize) -> String {
    match ahead {
        0 => "Waiting for a free browser: next in line.".to_owned(),
        n => format!("Waiting for a free browser: {n} ahead."),
    }
}

/// What the agent reads in its next result after waiting for a place.
fn waited_sentence(ahead: usize) -> String {
    format!(
        "Waited for a free browser of the pool: every one was busy, with {ahead} ahead of this conversation."
    )
}

/// The refusal after waiting [`BrowserConfig::pool_wait`] in vain.
fn full_sentence(wait: Duration, endpoints: usize, cap: usize) -> String {
    format!(
        "No browser of the pool came free within {} s: all {endpoints} are busy with {cap} conversations each. Try again in a while, or ask the person to raise the cap (conch-gateway backend set pool --per-endpoint N).",
        wait.as_secs().max(1)
    )
}

/// What a call that waited for a place hears when its conversation ended meanwhile.
const ENDED: &str = "This conversation ended while it waited for a free browser of the pool.";

/// What the person's live view says over the stale frame when the address of its
/// conversation stopped answering: the tabs are being reopened elsewhere, and what the
/// person typed there and had not sent is gone with it (BE-4). With no address of the
/// pool left, elsewhere is Conch's own local browser, BE-4's fallback.
fn lost_sentence(from: &str, others_left: bool) -> String {
    let to = if others_left {
        "on another browser of the pool"
    } else {
        "on Conch's own local browser, as no other browser of the pool answers"
    };
    format!(
        "{from} stopped answering, so Conch is reopening this conversation's tabs {to}; anything typed there and not sent is lost."
    )
}

/// What the person's live view says when the connection of its conversation dropped
/// while its address still answers: the tabs reopen there.
fn dropped_sentence(from: &str) -> String {
    format!(
        "The connection to {} dropped, so Conch is reopening this conversation's tabs; anything typed there and not sent is lost.",
        from.trim_start_matches("The browser at ")
    )
}

/// What the agent reads after its conversation moved off an address that died.
fn moved_sentence(from: &str, to: &str) -> String {
    format!(
        "{from} stopped answering and was taken out of the pool, so this conversation moved to {to} and its tabs were reopened there."
    )
}

/// What the agent reads after its connection dropped while its address still answered:
/// it moved to another address of the pool when one had room (`to`), or came back where
/// it was.
fn dropped_moved_sentence(from: &str, to: Option<&str>) -> String {
    let from = from.trim_start_matches("The browser at ");
    match to {
        Some(to) => format!(
            "The connection to {from} dropped, so this conversation moved to {to} and its tabs were reopened there."
        ),
        None => format!(
            "The connection to {from} dropped, so this conversation's tabs were reopened there."
        ),
    }
}

/// The pool's places, under one lock.
#[derive(Debug, Default)]
struct Places {
    /// How many conversations hold a connection on each address.
    load: Vec<usize>,
    /// Why each address was taken out, if it was.
    out: Vec<Option<String>>,
    /// The tickets waiting, first come first.
    queue: VecDeque<u64>,
    next_ticket: u64,
    /// Sentences for conversations' next results.
    notes: HashMap<String, Vec<String>>,
}

impl Places {
    /// The live address with the fewest conversations below `cap`, the first on a tie;
    /// `avoid` (the address whose connection just dropped) only when no other has room.
    fn least_loaded(&self, cap: usize, avoid: Option<usize>) -> Option<usize> {
        (0..self.load.len())
            .filter(|i| self.out[*i].is_none() && self.load[*i] < cap)
            .min_by_key(|i| (Some(*i) == avoid, self.load[*i]))
    }

    fn note(&mut self, id: &str, sentence: String) {
        self.notes.entry(id.to_owned()).or_default().push(sentence);
    }
}

/// A pool of DevTools addresses and the conversations placed on them.
pub(super) struct Pool {
    /// The addresses (secret: a token may ride in the query, BE-3).
    endpoints: Vec<String>,
    per_endpoint: usize,
    wait: Duration,
    places: StdMutex<Places>,
    freed: tokio::sync::Notify,
    /// Each conversation's own browser.
    browsers: StdMutex<HashMap<String, Browser>>,
    /// Whether each conversation's browser was taken off the pool (it ended): a call of
    /// it still waiting or connecting then gives up, and takes no place.
    ended: StdMutex<HashMap<String, Arc<AtomicBool>>>,
    probe: Arc<dyn Probe + Send + Sync>,
    events: Option<Arc<dyn crate::protocol::EventSink>>,
    /// Each conversation's place in line while it waits (the waiting sentence), `None`
    /// once placed or refused: what the agent's door sends as progress (issue 32).
    waits: StdMutex<HashMap<String, tokio::sync::watch::Sender<Option<String>>>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field(
                "endpoints",
                &self
                    .endpoints
                    .iter()
                    .map(|e| remote::shown(e))
                    .collect::<Vec<_>>(),
            )
            .field("per_endpoint", &self.per_endpoint)
            .field("places", &self.places)
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// The pool `remote` names for a runtime on `config`, if it is one.
    pub(super) fn of(config: &BrowserConfig) -> Option<Arc<Pool>> {
        let Some(remote::Remote::Pool {
            endpoints,
            per_endpoint,
        }) = config.remote.as_ref()
        else {
            return None;
        };
        Some(Arc::new(Pool {
            places: StdMutex::new(Places {
                load: vec![0; endpoints.len()],
                out: vec![None; endpoints.len()],
                ..Places::default()
            }),
            endpoints: endpoints.clone(),
            per_endpoint: (*per_endpoint).max(1),
            wait: config.pool_wait,
            freed: tokio::sync::Notify::new(),
            browsers: StdMutex::default(),
            ended: StdMutex::default(),
            probe: Arc::clone(&config.probe),
            events: config.events.clone(),
            waits: StdMutex::default(),
        }))
    }

    /// What the person reads about address `index`.
    fn shown(&self, index: usize) -> String {
        format!("The browser at {}", remote::shown(&self.endpoints[index]))
    }

    /// Conversation `id`'s own browser on the pool, made on first need (nothing connects
    /// until it browses).
    pub(super) fn browser_for(self: &Arc<Self>, main: &Browser, id: &str) -> Browser {
        let mut browsers = lock(&self.browsers);
        if let Some(browser) = browsers.get(id) {
            return browser.clone();
        }
        let mut config = main.inner.config.clone();
        config.home = Home::new(main.inner.config.home.browser_dir().join("pool"));
        config.remote = None;
        let browser = Browser::build(
            config,
            Some(&ErrandsOf {
                main: Arc::downgrade(&main.inner),
                owner: main.inner.owner.clone(),
                guard: Arc::clone(&main.inner.backend.guard),
                guard_log: Arc::clone(&main.inner.backend.guard_log),
                borrowed: Arc::default(),
                // One sealed file of set-aside errands, one writer (ERR-11).
                aside: Some(Arc::clone(&main.inner.errand.aside)),
            }),
        );
        let ended = Arc::new(AtomicBool::new(false));
        lock(&self.ended).insert(id.to_owned(), Arc::clone(&ended));
        *lock(&browser.inner.backend.chosen) = Arc::new(Placement {
            pool: Arc::downgrade(self),
            id: id.to_owned(),
            ended,
            shown: main
                .inner
                .config
                .remote
                .as_ref()
                .map_or_else(|| "the pool".to_owned(), remote::Remote::shown),
            last: StdMutex::new(None),
        });
        browsers.insert(id.to_owned(), browser.clone());
        browser
    }

    /// Every conversation's browser on the pool now.
    pub(super) fn browsers(&self) -> Vec<Browser> {
        lock(&self.browsers).values().cloned().collect()
    }

    /// Conversation `id`'s place in line: the waiting sentence while it waits for a
    /// place, `None` otherwise.
    pub(super) fn waits(&self, id: &str) -> tokio::sync::watch::Receiver<Option<String>> {
        lock(&self.waits)
            .entry(id.to_owned())
            .or_insert_with(|| tokio::sync::watch::Sender::new(None))
            .subscribe()
    }

    /// Says where conversation `id` stands in line (`None`: no longer waiting) to
    /// whoever follows it.
    fn in_line(&self, id: &str, sentence: Option<&str>) {
        if let Some(waits) = lock(&self.waits).get(id) {
            waits.send_if_modified(|now| {
                let changed = now.as_deref() != sentence;
                *now = sentence.map(str::to_owned);
                changed
            });
        }
    }

    /// Takes conversation `id`'s browser off the pool (it ended), if it has one. A call of
    /// it still waiting in line or connecting gives up at once, taking no place.
    pub(super) fn remove(&self, id: &str) -> Option<Browser> {
        lock(&self.waits).remove(id);
        lock(&self.places).notes.remove(id);
        if let Some(ended) = lock(&self.ended).remove(id) {
            ended.store(true, Ordering::SeqCst);
            self.freed.notify_waiters();
        }
        lock(&self.browsers).remove(id)
    }

    /// Lets every conversation's browser go, each errand set aside first (ERR-12).
    pub(super) async fn let_all_go(&self) {
        for browser in self.browsers() {
            browser.set_every_errand_aside().await;
            Box::pin(browser.shutdown()).await;
        }
    }

    /// Takes every address back in (Repair, BE-4): the next places try them again.
    pub(super) fn take_all_back(&self) {
        let mut places = lock(&self.places);
        for out in &mut places.out {
            *out = None;
        }
    }

    /// What Health says of the pool: the addresses taken out, if any.
    pub(super) fn health(&self) -> Option<String> {
        let places = lock(&self.places);
        let out: Vec<String> = (0..self.endpoints.len())
            .filter(|i| places.out[*i].is_some())
            .map(|i| remote::shown(&self.endpoints[i]))
            .collect();
        (!out.is_empty()).then(|| {
            format!(
                "Taken out of the pool because nothing answers there: {}. Repair tries again.",
                out.join(", ")
            )
        })
    }

    /// Waits, first come first served, for a place on the least-loaded live address
    /// (`avoid` only when no other has room), at most [`Pool::wait`]; gives the place,
    /// freed when dropped. Says where it stands in line meanwhile ([`Pool::waits`]).
    async fn take_place(
        self: &Arc<Self>,
        id: &str,
        avoid: Option<usize>,
        ended: &AtomicBool,
    ) -> Result<Slot, ConnectError> {
        let ticket = {
            let mut places = lock(&self.places);
            let ticket = places.next_ticket;
            places.next_ticket += 1;
            places.queue.push_back(ticket);
            ticket
        };
        // However the wait ends (placed, refused, or its call stopped or cancelled and
        // this future dropped), the ticket leaves the line and the next one looks again.
        let _in_line = InLine {
            pool: self,
            id,
            ticket,
        };
        let index = self.wait_in_line(id, ticket, avoid, ended).await?;
        Ok(Slot {
            pool: Arc::downgrade(self),
            index,
            freed: AtomicBool::new(false),
        })
    }

    async fn wait_in_line(
        &self,
        id: &str,
        ticket: u64,
        avoid: Option<usize>,
        ended: &AtomicBool,
    ) -> Result<usize, ConnectError> {
        let deadline = tokio::time::Instant::now() + self.wait;
        let mut told: Option<usize> = None;
        let mut first_ahead: Option<usize> = None;
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if ended.load(Ordering::SeqCst) {
                // Its ticket leaves the line as the guard drops.
                return Err(ended_error());
            }
            {
                let mut places = lock(&self.places);
                if places.out.iter().all(Option::is_some) {
                    places.queue.retain(|t| *t != ticket);
                    drop(places);
                    self.freed.notify_waiters();
                    return Err(ConnectError::Unreachable(self.none_left()));
                }
                let ahead = places.queue.iter().position(|t| *t == ticket).unwrap_or(0);
                if ahead == 0
                    && let Some(index) = places.least_loaded(self.per_endpoint, avoid)
                {
                    places.load[index] += 1;
                    places.queue.pop_front();
                    if let Some(ahead) = first_ahead {
                        places.note(id, waited_sentence(ahead));
                    }
                    drop(places);
                    // The next in line looks again.
                    self.freed.notify_waiters();
                    return Ok(index);
                }
                first_ahead.get_or_insert(ahead);
                if told != Some(ahead) {
                    told = Some(ahead);
                    drop(places);
                    let sentence = waiting_sentence(ahead);
                    self.in_line(id, Some(&sentence));
                    self.tell(id, false, &sentence);
                }
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                lock(&self.places).queue.retain(|t| *t != ticket);
                self.freed.notify_waiters();
                return Err(ConnectError::Browser(BrowserError::ErrandsBusy(
                    full_sentence(self.wait, self.endpoints.len(), self.per_endpoint),
                )));
            }
        }
    }

    /// Tells the person's view of conversation `id` where it stands (its progress, or
    /// its browser lost and reopened), with whether its browser runs.
    fn tell(&self, id: &str, running: bool, sentence: &str) {
        tracing::info!(target: "conch_browser", "{sentence}");
        if let Some(events) = &self.events {
            events.send(
                id,
                crate::protocol::BrowserEvent::Status(crate::protocol::BrowserStatus {
                    running,
                    backend: Backend::Pool.as_str().to_owned(),
                    message: sentence.to_owned(),
                    open_panel: false,
                    download: None,
                }),
            );
        }
    }

    /// The phrase for a pool with no address left.
    fn none_left(&self) -> String {
        let places = lock(&self.places);
        let out: Vec<String> = (0..self.endpoints.len())
            .map(|i| {
                format!(
                    "{}: {}",
                    remote::shown(&self.endpoints[i]),
                    places.out[i].as_deref().unwrap_or("busy")
                )
            })
            .collect();
        format!("no browser of the pool answers ({})", out.join("; "))
    }

    /// Frees a place on address `index`.
    fn free(&self, index: usize) {
        {
            let mut places = lock(&self.places);
            places.load[index] = places.load[index].saturating_sub(1);
        }
        self.freed.notify_waiters();
    }

    /// Takes address `index` out of the pool, saying why.
    fn take_out(&self, index: usize, why: String) {
        tracing::warn!(target: "conch_browser", address = %remote::shown(&self.endpoints[index]), why = %why, "a browser of the pool is taken out");
        lock(&self.places).out[index] = Some(why);
        self.freed.notify_waiters();
    }

    /// Whether something still listens at address `index`.
    async fn answers(&self, index: usize) -> bool {
        let Ok(url) = url::Url::parse(&self.endpoints[index]) else {
            return false;
        };
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
            return false;
        };
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        matches!(
            tokio::time::timeout(
                Duration::from_secs(2),
                tokio::net::TcpStream::connect((host.as_str(), port)),
            )
            .await,
            Ok(Ok(_))
        )
    }

    /// Opens a connection of its own on address `index` and asks that a browser answers.
    async fn open(&self, index: usize) -> Result<(Connection, Facts), String> {
        let address = remote::Remote::Cdp(self.endpoints[index].clone());
        let opened = remote::open(&address, self.probe.as_ref(), &[])
            .await
            .map_err(|e| e.to_string())?;
        match opened
            .connection
            .browser()
            .call(&conch_cdp::protocol::browser::GetVersion {})
            .await
        {
            Ok(version) => Ok((
                opened.connection,
                Facts {
                    browser: address.shown(),
                    version: version.product,
                    executable: None,
                    user_agent: version.user_agent,
                    why: None,
                },
            )),
            Err(e) => {
                opened.connection.close();
                Err(format!("it did not answer as a browser ({e})"))
            }
        }
    }
}

/// The refusal of a call whose conversation ended while it waited or connected.
fn ended_error() -> ConnectError {
    ConnectError::Browser(BrowserError::ErrandsBusy(ENDED.to_owned()))
}

/// A place taken on address `index`: freed once, by [`Slot::free`] or when dropped, so
/// a call that stops anywhere between taking it and letting its connection go (while the
/// connection opens, while the browser on it is set up, or a browser dropped without
/// letting go) never leaves it counted as load.
#[derive(Debug)]
struct Slot {
    pool: Weak<Pool>,
    index: usize,
    freed: AtomicBool,
}

impl Slot {
    fn free(&self) {
        if !self.freed.swap(true, Ordering::SeqCst)
            && let Some(pool) = self.pool.upgrade()
        {
            pool.free(self.index);
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.free();
    }
}

/// A conversation's ticket in the pool's line, taken out of it when dropped.
struct InLine<'a> {
    pool: &'a Pool,
    id: &'a str,
    ticket: u64,
}

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        let left = {
            let mut places = lock(&self.pool.places);
            let before = places.queue.len();
            places.queue.retain(|t| *t != self.ticket);
            places.queue.len() != before
        };
        self.pool.in_line(self.id, None);
        if left {
            self.pool.freed.notify_waiters();
        }
    }
}

/// Watches a conversation's connection on its place: when it closes, the place is freed;
/// closed by the other side, the loss is decided at once ([`Pool::lose`]: the address
/// taken out when nothing answers there any more, the person's view told).
async fn watch(pool: Weak<Pool>, connection: Connection, place: Arc<Place>) {
    connection.closed().await;
    let Some(pool) = pool.upgrade() else { return };
    if !place.closing.load(Ordering::SeqCst) {
        pool.lose(&place).await;
    }
    place.slot.free();
}

impl Pool {
    /// Conversation `place.id` lost its connection on its place, closed by the other
    /// side: decided once, by whichever comes first (the connection's watcher, or the
    /// conversation's next placement), so the move is decided when the connection drops,
    /// not by how a later connect fares. When nothing answers at the address any more it
    /// is taken out of the pool; either way the person's view of the conversation is told
    /// at once (a `browser.status` shown over the stale frame, BE-4). Gives whether the
    /// address was taken out.
    async fn lose(&self, place: &Place) -> bool {
        let index = place.slot.index;
        let out = *place
            .lost
            .get_or_init(|| async {
                if self.answers(index).await {
                    self.tell(&place.id, false, &dropped_sentence(&self.shown(index)));
                    false
                } else {
                    self.take_out(index, "it stopped answering".to_owned());
                    let others_left = lock(&self.places).out.iter().any(Option::is_none);
                    self.tell(
                        &place.id,
                        false,
                        &lost_sentence(&self.shown(index), others_left),
                    );
                    true
                }
            })
            .await;
        place.slot.free();
        out
    }
}

/// One conversation's place on an address: whose it is, whether Conch closes it, and
/// what was decided when the other side closed it ([`Pool::lose`]).
#[derive(Debug)]
struct Place {
    id: String,
    slot: Slot,
    closing: AtomicBool,
    /// Once its connection was lost: whether its address was taken out then.
    lost: tokio::sync::OnceCell<bool>,
}

/// One conversation's driver on the pool.
#[derive(Debug)]
struct Placement {
    pool: Weak<Pool>,
    id: String,
    shown: String,
    /// Set when the conversation ended ([`Pool::remove`]).
    ended: Arc<AtomicBool>,
    /// The conversation's latest place: where it was, and whether it was lost or let go.
    last: StdMutex<Option<Arc<Place>>>,
}

impl Driver for Placement {
    fn backend(&self) -> Backend {
        Backend::Pool
    }
    fn shown(&self) -> String {
        self.shown.clone()
    }
    fn abilities(&self) -> Abilities {
        Abilities::POOL
    }
    fn connect(&self) -> BoxFuture<'_, Result<Connected, ConnectError>> {
        Box::pin(self.place())
    }
    fn notes(&self) -> Vec<(String, String)> {
        let Some(pool) = self.pool.upgrade() else {
            return Vec::new();
        };
        let notes = lock(&pool.places)
            .notes
            .remove(&self.id)
            .unwrap_or_default();
        notes.into_iter().map(|n| (self.id.clone(), n)).collect()
    }
}

impl Placement {
    /// Takes a place and opens the conversation's connection there; an address that does
    /// not open is taken out and the next one tried. After its connection was lost, the
    /// conversation moves to another address when one has room, and its next result says
    /// where, once: this note stands for ERR-19's reopening note, which a pool's browser
    /// does not add ([`Held::tells_reopening`]).
    async fn place(&self) -> Result<Connected, ConnectError> {
        let Some(pool) = self.pool.upgrade() else {
            return Err(ConnectError::Unreachable(
                "the pool is no longer in use".to_owned(),
            ));
        };
        if self.ended.load(Ordering::SeqCst) {
            return Err(ended_error());
        }
        let last = lock(&self.last).clone();
        // Lost (closed by the other side, not let go): moved off where it was.
        let lost = match &last {
            Some(place) if !place.closing.load(Ordering::SeqCst) => {
                Some((place.slot.index, pool.lose(place).await))
            }
            _ => None,
        };
        // Let go before and back for a place: when nothing answers where it was any more,
        // that address is taken out first, so it is neither chosen again nor left unsaid.
        let before = match (&last, lost) {
            (Some(place), None) => {
                let index = place.slot.index;
                let live = lock(&pool.places).out[index].is_none();
                if live && !pool.answers(index).await {
                    pool.take_out(index, "it stopped answering".to_owned());
                }
                Some(index)
            }
            _ => None,
        };
        loop {
            let avoid = lost.map(|(from, _)| from);
            let slot = match pool.take_place(&self.id, avoid, &self.ended).await {
                Ok(slot) => slot,
                Err(ConnectError::Unreachable(why)) => {
                    lock(&pool.places).note(
                        &self.id,
                        format!("No browser of the pool answers, so this conversation uses Conch's own browser on this computer ({why})."),
                    );
                    return Err(ConnectError::Unreachable(why));
                }
                Err(e) => return Err(e),
            };
            let index = slot.index;
            // Dropped with the slot (freed) if this call stops while the connection opens.
            let (connection, facts) = match pool.open(index).await {
                Ok(opened) => opened,
                Err(why) => {
                    pool.take_out(index, why);
                    continue;
                }
            };
            if self.ended.load(Ordering::SeqCst) {
                // Ended while it connected: the slot frees as it drops.
                connection.close();
                return Err(ended_error());
            }
            let place = Arc::new(Place {
                id: self.id.clone(),
                slot,
                closing: AtomicBool::new(false),
                lost: tokio::sync::OnceCell::new(),
            });
            tokio::spawn(watch(
                Arc::downgrade(&pool),
                connection.clone(),
                Arc::clone(&place),
            ));
            *lock(&self.last) = Some(Arc::clone(&place));
            let out = |i: usize| lock(&pool.places).out[i].is_some();
            let sentence = match (lost, before) {
                (Some((from, true)), _) if from != index => {
                    Some(moved_sentence(&pool.shown(from), &facts.browser))
                }
                (Some((from, _)), _) => Some(dropped_moved_sentence(
                    &pool.shown(from),
                    (from != index).then_some(facts.browser.as_str()),
                )),
                (None, Some(before)) if before != index && out(before) => {
                    Some(moved_sentence(&pool.shown(before), &facts.browser))
                }
                _ => None,
            };
            if let Some(sentence) = sentence {
                lock(&pool.places).note(&self.id, sentence.clone());
                pool.tell(&self.id, true, &sentence);
            }
            return Ok(Connected {
                held: Box::new(Placed {
                    connection: connection.clone(),
                    place,
                }),
                connection,
                facts,
            });
        }
    }
}

/// A conversation's place on the pool: letting go closes its pages and its connection,
/// which disposes its context and frees the place. Dropped without letting go (the call
/// that connected it stopped before the browser was set up, or the browser was dropped),
/// it closes the connection and frees the place all the same.
#[derive(Debug)]
struct Placed {
    connection: Connection,
    place: Arc<Place>,
}

impl Held for Placed {
    fn tells_reopening(&self) -> bool {
        true
    }
    fn let_go(
        self: Box<Self>,
        connection: Connection,
        ours: Vec<TargetId>,
    ) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            self.place.closing.store(true, Ordering::SeqCst);
            crate::backend::close_ours(&connection, ours).await;
            // Closed and freed at once for the next in line (by dropping `self`), not
            // when the watcher hears the close.
            drop(self);
        })
    }
}

impl Drop for Placed {
    fn drop(&mut self) {
        // Closed by the other side, the loss is the watcher's and the next placement's
        // to decide; otherwise Conch closes it.
        if !self.connection.is_closed() {
            self.place.closing.store(true, Ordering::SeqCst);
            self.connection.close();
        }
        if self.place.closing.load(Ordering::SeqCst) {
            self.place.slot.free();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 32 (nearest BE-1): the least-loaded live address is chosen, the first on a
    /// tie, none at the cap, never one taken out, and one to avoid only when no other has
    /// room.
    #[test]
    fn be_1_the_least_loaded_live_address_is_chosen() {
        let mut places = Places {
            load: vec![1, 0, 0],
            out: vec![None, Some("gone".to_owned()), None],
            ..Places::default()
        };
        assert_eq!(places.least_loaded(2, None), Some(2));
        places.load = vec![1, 0, 2];
        assert_eq!(places.least_loaded(2, None), Some(0));
        places.load = vec![2, 0, 2];
        assert_eq!(places.least_loaded(2, None), None);
        // The address whose connection dropped only when no other has room.
        places.load = vec![0, 0, 1];
        assert_eq!(places.least_loaded(2, Some(0)), Some(2));
        places.load = vec![0, 0, 2];
        assert_eq!(places.least_loaded(2, Some(0)), Some(0));
        assert_eq!(waiting_sentence(3), "Waiting for a free browser: 3 ahead.");
    }
}
