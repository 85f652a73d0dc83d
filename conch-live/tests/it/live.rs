//! Watching: frames only while watched, latest-frame-wins, each conversation its own
//! frames, the panel's size shapes the viewport (LIVE-1 … LIVE-4, LIVE-15).

use std::time::Duration;

use conch_fixtures::pictures::near;
use conch_live::{Event, Outgoing};
use serde_json::json;

use crate::support::{FrameSpy, cmd, eval, lab, next_event, next_frame, page_of};

const JPEG: [u8; 3] = [0xff, 0xd8, 0xff];

/// LIVE-1, LIVE-2: no screencast runs without a watcher; the first watcher starts it and
/// gets JPEG frames of its conversation's tab; after the last one leaves it stops.
#[tokio::test(flavor = "multi_thread")]
async fn live_2_frames_only_while_watched() {
    let lab = lab().await;
    let chat = lab.open("a", "live.html").await;
    let page = page_of(&chat).await;
    eval(&chat, "animate(); true").await;
    let spy = FrameSpy::on(&page);
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(spy.count(), 0, "frames were sent with nobody watching");

    let (mut feed, _control) = lab.hub.join("a");
    let (mut second, _) = lab.hub.join("a");
    let frame = next_frame(&mut feed, Duration::from_secs(10))
        .await
        .expect("the watcher gets a frame");
    assert_eq!(frame[..3], JPEG, "a JPEG");
    assert!(
        spy.has(&frame).await,
        "the frame is of this conversation's tab"
    );
    assert!(
        next_frame(&mut second, Duration::from_secs(10))
            .await
            .is_some()
    );
    assert_eq!(lab.hub.watchers("a"), 2);

    drop(feed);
    let before = spy.count();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        spy.count() > before,
        "one watcher left, the other still gets frames"
    );
    drop(second);
    assert_eq!(lab.hub.watchers("a"), 0);
    // The stop takes effect at the cast's next turn; after that no frame comes.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let stopped = spy.count();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        spy.count(),
        stopped,
        "frames kept coming after the last watcher left"
    );
}

/// LIVE-3: a watcher that stops reading for 5 s holds at most one frame, and when it
/// reads again it gets the newest.
#[tokio::test(flavor = "multi_thread")]
async fn live_3_slow_watcher_gets_the_newest_frame() {
    let lab = lab().await;
    let chat = lab.open("slow", "live.html").await;
    let page = page_of(&chat).await;
    let spy = FrameSpy::on(&page);
    let (mut feed, _control) = lab.hub.join("slow");
    assert!(
        next_frame(&mut feed, Duration::from_secs(10))
            .await
            .is_some()
    );
    // The page animates for 2 s, then stands still; the watcher reads nothing for 5 s.
    eval(&chat, "animate(2000); true").await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let sent = spy.count();
    assert!(sent >= 5, "the animation made only {sent} frames");
    let mut got = Vec::new();
    while let Some(frame) = next_frame(&mut feed, Duration::from_millis(700)).await {
        got.push(frame);
    }
    assert_eq!(
        got.len(),
        1,
        "{} frames were queued for a slow watcher ({sent} sent)",
        got.len()
    );
    assert_eq!(
        Some(&got[0]),
        spy.newest().as_ref(),
        "the watcher got an old frame"
    );
}

/// LIVE-3 (issue 28): a watcher that joins a cast already running on a still page (a
/// second panel window, a reload) gets the newest frame at once, not only when the page
/// next changes.
#[tokio::test(flavor = "multi_thread")]
async fn live_3_a_late_watcher_of_a_still_page_gets_the_newest_frame_at_once() {
    let lab = lab().await;
    let _chat = lab.open("still", "live.html").await;
    let (mut first, _control) = lab.hub.join("still");
    assert!(
        next_frame(&mut first, Duration::from_secs(10))
            .await
            .is_some()
    );
    // The page stands still: no new frame comes for the first watcher.
    tokio::time::sleep(Duration::from_millis(800)).await;
    while next_frame(&mut first, Duration::from_millis(300))
        .await
        .is_some()
    {}
    let (mut late, _) = lab.hub.join("still");
    let frame = next_frame(&mut late, Duration::from_secs(3))
        .await
        .expect("the late watcher gets the newest frame at once");
    assert_eq!(frame[..3], JPEG, "a JPEG");
}

/// LIVE-3 (issue 30): while the agent's step runs, the cast's frames come at most about
/// 15 a second however fast the page draws (Chrome captures nothing while three frames
/// wait for their acknowledgement); and the page's last change reaches the watcher, in a
/// step or not, though Chrome drops what the page draws while three frames wait (paced,
/// or on a loaded machine): the cast starts again once frames go quiet.
#[tokio::test(flavor = "multi_thread")]
async fn live_3_frames_are_paced_while_the_agent_steps_and_the_last_change_shows() {
    let lab = lab().await;
    let chat = lab.open("paced", "live.html").await;
    let spy = FrameSpy::on(&page_of(&chat).await);
    let (mut feed, _control) = lab.hub.join("paced");
    assert!(
        next_frame(&mut feed, Duration::from_secs(10))
            .await
            .is_some()
    );
    let wheel = chat.wheel();
    let mut step = Some(wheel.agent_step());
    let before = spy.count();
    eval(&chat, "animate(1000); true").await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let paced = spy.count() - before;
    assert!(
        paced <= 20,
        "{paced} frames in a second of the agent's step"
    );
    // The page draws for a moment, then paints itself and stands still: three times
    // while the agent's step runs, twice after.
    let colours: [[u8; 3]; 5] = [
        [0, 0, 255],
        [255, 0, 0],
        [0, 160, 0],
        [0, 0, 255],
        [255, 0, 0],
    ];
    for (round, colour) in colours.into_iter().enumerate() {
        if round == 3 {
            step = None;
        }
        let [r, g, b] = colour;
        eval(
            &chat,
            &format!(
                "animate(500); setTimeout(() => {{ document.body.style.background = 'rgb({r}, {g}, {b})'; }}, 500); true"
            ),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let mut newest = None;
        while let Some(frame) = next_frame(&mut feed, Duration::from_millis(300)).await {
            newest = Some(frame);
        }
        let frame = newest.expect("frames while the page drew");
        let (_, _, got) = centre_pixel(&chat, &frame).await;
        assert!(
            near(got, colour),
            "round {round} (step {}): the newest frame is {got:?}, the page is {colour:?}",
            step.is_some()
        );
    }
}

/// LIVE-15: conversation A's watcher never gets a frame of B's tab.
#[tokio::test(flavor = "multi_thread")]
async fn live_15_a_conversations_socket_never_carries_anothers_frames() {
    let lab = lab().await;
    let a = lab.open("a", "live.html").await;
    let b = lab.open("b", "live.html?b").await;
    // The two pages must never look alike, or their frames would be the same bytes; each
    // has drawn its colour (two frames) before the casts start, or a loaded machine can
    // cast both tabs' last white frame, the same bytes from either.
    let drawn =
        "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))";
    eval(
        &a,
        &format!("document.body.style.background = 'rgb(250, 200, 200)'; {drawn}"),
    )
    .await;
    eval(
        &b,
        &format!("document.body.style.background = 'rgb(200, 200, 250)'; {drawn}"),
    )
    .await;
    let spy_a = FrameSpy::on(&page_of(&a).await);
    let spy_b = FrameSpy::on(&page_of(&b).await);
    let (mut feed_a, _) = lab.hub.join("a");
    let (mut feed_b, _) = lab.hub.join("b");
    eval(&a, "animate(3000); true").await;
    eval(&b, "animate(3000); true").await;
    let mut from_a = Vec::new();
    for _ in 0..10 {
        let Some(frame) = next_frame(&mut feed_a, Duration::from_secs(5)).await else {
            break;
        };
        from_a.push(frame);
        // B's watcher reads too, so both casts run.
        let _ = next_frame(&mut feed_b, Duration::from_millis(100)).await;
    }
    assert!(from_a.len() >= 3, "only {} frames for A", from_a.len());
    for frame in &from_a {
        assert!(spy_a.has(frame).await, "a frame A's tab never sent");
        assert!(!spy_b.has_now(frame), "B's frame reached A's watcher");
    }
}

/// LIVE-4, AMB-11: with no panel the viewport is 1280×800; a size of 500×400 makes it
/// 960×768; the most recent size wins.
#[tokio::test(flavor = "multi_thread")]
async fn live_4_a_size_message_shapes_the_viewport() {
    let lab = lab().await;
    let chat = lab.open("size", "live.html").await;
    let size = "[innerWidth, innerHeight]";
    assert_eq!(eval(&chat, size).await, json!([1280, 800]));
    let (_feed, control) = lab.hub.join("size");
    let replies = control
        .command(&cmd(&json!({"type": "size", "width": 500, "height": 400})))
        .await;
    assert!(replies.is_empty(), "{replies:?}");
    assert_eq!(eval(&chat, size).await, json!([960, 768]));
    control
        .command(&cmd(
            &json!({"type": "size", "width": 1000, "height": 600, "dpr": 2}),
        ))
        .await;
    assert_eq!(eval(&chat, size).await, json!([1440, 864]));
    let zero = control
        .command(&cmd(&json!({"type": "size", "width": 0, "height": 600})))
        .await;
    assert_eq!(zero, vec![Event::invalid_command()]);
    assert_eq!(eval(&chat, size).await, json!([1440, 864]));
}

/// The width and height of a JPEG, from its frame header (SOFn); `None` when it has none.
fn jpeg_size(jpeg: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    while at + 9 <= jpeg.len() {
        if jpeg[at] != 0xff {
            return None;
        }
        let marker = jpeg[at + 1];
        let length = usize::from(u16::from_be_bytes([jpeg[at + 2], jpeg[at + 3]]));
        if matches!(marker, 0xc0..=0xcf) && !matches!(marker, 0xc4 | 0xc8 | 0xcc) {
            let height = u16::from_be_bytes([jpeg[at + 5], jpeg[at + 6]]);
            let width = u16::from_be_bytes([jpeg[at + 7], jpeg[at + 8]]);
            return Some((u32::from(width), u32::from(height)));
        }
        at += 2 + length;
    }
    None
}

/// Reads `feed`'s frames until one is `want` pixels (an animated page keeps sending);
/// the sizes it read, each once in a row, when none was.
async fn frame_sized(
    feed: &mut conch_live::Feed,
    want: (u32, u32),
) -> Result<(), Vec<Option<(u32, u32)>>> {
    let mut seen = Vec::new();
    let until = tokio::time::Instant::now() + Duration::from_secs(10);
    while tokio::time::Instant::now() < until {
        let Some(frame) = next_frame(feed, Duration::from_secs(2)).await else {
            continue;
        };
        let size = jpeg_size(&frame);
        if size == Some(want) {
            return Ok(());
        }
        if seen.last() != Some(&size) {
            seen.push(size);
        }
    }
    Err(seen)
}

/// LIVE-4, LIVE-9 (issue 30): the cast's frames are the panel's size in device pixels, not
/// the viewport's (1.6× wider): a 500×400 panel at ratio 1 gets 500×400 frames of its
/// 960×768 viewport, and its click still lands at the scaled viewport point. With a
/// second window of 400×300 at ratio 2 (800×600 device pixels) the bigger wins; when it
/// leaves, the frames shrink back to the first panel's, in the viewport's shape. A ratio
/// that is no ratio is refused.
#[tokio::test(flavor = "multi_thread")]
async fn live_4_the_cast_is_the_panels_device_pixels_and_clicks_still_land() {
    let lab = lab().await;
    let chat = lab.open("px", "live.html").await;
    eval(&chat, "animate(); true").await;
    let (mut feed, control) = lab.hub.join("px");
    assert!(
        frame_sized(&mut feed, (1280, 800)).await.is_ok(),
        "with no panel size the frames are the viewport's"
    );
    control
        .command(&cmd(
            &json!({"type": "size", "width": 500, "height": 400, "dpr": 1}),
        ))
        .await;
    assert_eq!(
        eval(&chat, "[innerWidth, innerHeight]").await,
        json!([960, 768])
    );
    if let Err(seen) = frame_sized(&mut feed, (500, 400)).await {
        panic!("no frame at the panel's size; frames were {seen:?}");
    }
    for action in ["down", "up"] {
        control
            .command(&cmd(
                &json!({"type": "pointer", "action": action, "x": 100, "y": 100, "button": "left"}),
            ))
            .await;
    }
    let landed = crate::support::eventually(Duration::from_secs(5), || async {
        eval(&chat, "window.clicks.length").await == json!(1)
    })
    .await;
    assert!(landed, "the click never reached the page");
    assert_eq!(eval(&chat, "window.clicks[0]").await, json!([192, 192, 1]));
    control.command(&cmd(&json!({"type": "handback"}))).await;

    let (second_feed, second) = lab.hub.join("px");
    second
        .command(&cmd(
            &json!({"type": "size", "width": 400, "height": 300, "dpr": 2}),
        ))
        .await;
    assert_eq!(
        eval(&chat, "[innerWidth, innerHeight]").await,
        json!([960, 720])
    );
    if let Err(seen) = frame_sized(&mut feed, (800, 600)).await {
        panic!("the bigger screen did not win; frames were {seen:?}");
    }
    drop((second_feed, second));
    if let Err(seen) = frame_sized(&mut feed, (500, 375)).await {
        panic!("the frames kept the gone window's size; frames were {seen:?}");
    }
    for dpr in [0, -1] {
        let refused = control
            .command(&cmd(
                &json!({"type": "size", "width": 500, "height": 400, "dpr": dpr}),
            ))
            .await;
        assert_eq!(refused, vec![Event::invalid_command()], "dpr {dpr}");
    }
}

/// LIVE-1, PROTO-6: a watcher first hears who drives and the conversation's tabs.
#[tokio::test(flavor = "multi_thread")]
async fn live_1_a_watcher_first_hears_who_drives_and_the_tabs() {
    let lab = lab().await;
    let _chat = lab.open("first", "live.html").await;
    let (mut feed, _) = lab.hub.join("first");
    match feed.next().await {
        Some(Outgoing::Event(Event::Status {
            driver, handoff, ..
        })) => {
            assert_eq!((driver.as_str(), handoff), ("agent", None));
        }
        other => panic!("not the status first: {other:?}"),
    }
    let tabs = next_event(&mut feed, Duration::from_secs(5), |e| match e {
        Event::Tabs(tabs) => Some(tabs.clone()),
        _ => None,
    })
    .await
    .expect("the tabs");
    assert_eq!(tabs.tabs.len(), 1);
    assert_eq!(tabs.tabs[0].id, "t1");
    assert!(tabs.tabs[0].active && tabs.tabs[0].url.ends_with("live.html"));
    assert_eq!(tabs.backend, "local");
}

/// LIVE-1: a watcher of a conversation with no tab yet gets its frames once the agent
/// opens one.
#[tokio::test(flavor = "multi_thread")]
async fn live_1_watching_before_the_first_tab_shows_it_once_open() {
    let lab = lab().await;
    let (mut feed, _) = lab.hub.join("early");
    assert!(
        next_frame(&mut feed, Duration::from_millis(500))
            .await
            .is_none()
    );
    let chat = lab.open("early", "live.html").await;
    eval(&chat, "animate(1000); true").await;
    assert!(
        next_frame(&mut feed, Duration::from_secs(10))
            .await
            .is_some(),
        "no frame after the tab opened"
    );
}

/// LIVE-1, TAB-10: the cast follows the conversation's active tab.
#[tokio::test(flavor = "multi_thread")]
async fn live_1_the_cast_follows_the_active_tab() {
    let lab = lab().await;
    let chat = lab.open("tabs", "live.html").await;
    let (mut feed, control) = lab.hub.join("tabs");
    assert!(
        next_frame(&mut feed, Duration::from_secs(10))
            .await
            .is_some()
    );
    chat.new_tab(&format!("{}live.html?second", lab.base))
        .await
        .expect("a second tab");
    let second = page_of(&chat).await;
    let spy = FrameSpy::on(&second);
    let mut followed = false;
    for _ in 0..20 {
        eval(&chat, "animate(300); true").await;
        if let Some(frame) = next_frame(&mut feed, Duration::from_millis(500)).await
            && spy.has(&frame).await
        {
            followed = true;
            break;
        }
    }
    assert!(followed, "the cast stayed on the first tab");
    // The person switches back from the panel (TAB-10); the agent is told.
    let replies = control
        .command(&cmd(&json!({"type": "tab", "tab": "t1"})))
        .await;
    match replies.as_slice() {
        [Event::Tabs(tabs)] => assert!(tabs.tabs.iter().any(|t| t.id == "t1" && t.active)),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        chat.wheel().take_notes(),
        ["The person switched to tab t1."]
    );
    let missing = control
        .command(&cmd(&json!({"type": "tab", "tab": "t9"})))
        .await;
    assert!(
        matches!(missing.as_slice(), [Event::Error { message }] if message.contains("no tab t9")),
        "{missing:?}"
    );
}

/// LAUNCH-12 (issue 28): watching keeps the conversation's browser for longer than the
/// idle timeout; after the watcher leaves, it shuts down once the idle time has passed
/// since it left, not since the agent's last step.
#[tokio::test(flavor = "multi_thread")]
async fn launch_12_a_watcher_keeps_the_browser_and_idle_counts_from_its_leaving() {
    use std::sync::Arc;
    use std::time::UNIX_EPOCH;

    use conch_browser::{ManualClock, RunState};

    let clock = Arc::new(ManualClock::new(
        UNIX_EPOCH + Duration::from_secs(1_800_000_000),
    ));
    let lab = crate::support::lab_with(|config| config.clock = clock.clone()).await;
    let _chat = lab.open("w", "basic.html").await;
    let (feed, _control) = lab.hub.join("w");
    clock.advance(Duration::from_secs(3600));
    assert!(
        !lab.browser.tick().await,
        "a watcher keeps the browser awake"
    );
    assert_eq!(lab.browser.status().await.state, RunState::Running);
    drop(feed);
    // The hold ends a moment after the watcher leaves.
    tokio::time::sleep(Duration::from_millis(500)).await;
    clock.advance(Duration::from_secs(9 * 60 + 59));
    assert!(
        !lab.browser.tick().await,
        "idle time counts from when the watcher left"
    );
    clock.advance(Duration::from_secs(2));
    assert!(lab.browser.tick().await, "then the idle browser shuts down");
    assert_eq!(lab.browser.status().await.state, RunState::Idle);
}

/// The size and centre colour of `jpeg`, decoded by `chat`'s own page.
async fn centre_pixel(chat: &conch_browser::Conversation, jpeg: &[u8]) -> (u64, u64, [u8; 3]) {
    let script =
        conch_fixtures::pictures::centre_pixel_script(&conch_browser::page::base64::encode(jpeg));
    let got = eval(chat, &script).await;
    let n = |i: usize| got[i].as_u64().unwrap_or_else(|| panic!("{got}"));
    let colour = |i: usize| u8::try_from(n(i)).expect("a colour");
    (n(0), n(1), [colour(2), colour(3), colour(4)])
}

/// Paints `chat`'s page `colour` (a step's act), then takes the step's thumbnail.
async fn paint_and_shoot(chat: &conch_browser::Conversation, colour: [u8; 3]) -> Vec<u8> {
    let [r, g, b] = colour;
    eval(
        chat,
        &format!("document.body.style.background = 'rgb({r}, {g}, {b})'; true"),
    )
    .await;
    conch_browser::page::thumbnail(&page_of(chat).await)
        .await
        .expect("a thumbnail")
}

/// LIVE-6, LIVE-15 (issue 32): two conversations step at once while one is watched live:
/// each step's thumbnail is its own page as the step left it, never the other's. The
/// unwatched one's is a scaled capture (a card's size) that starts no screencast (LIVE-2);
/// the watched one's is captured whole beside the live view's cast, which keeps casting
/// through both (a scaled capture stalled it).
#[tokio::test(flavor = "multi_thread")]
async fn live_6_two_conversations_stepping_at_once_each_get_their_own_thumbnails() {
    let lab = lab().await;
    let a = lab.open("a", "paint.html").await;
    let b = lab.open("b", "paint.html").await;
    // Nobody watches B: its thumbnails start no screencast (LIVE-2).
    let b_casts = FrameSpy::on(&page_of(&b).await);
    let (mut feed, _control) = lab.hub.join("a");
    assert!(
        next_frame(&mut feed, Duration::from_secs(10))
            .await
            .is_some()
    );
    let colours: [[u8; 3]; 6] = [
        [255, 0, 0],
        [0, 192, 0],
        [0, 0, 255],
        [255, 255, 0],
        [0, 255, 255],
        [255, 0, 255],
    ];
    for round in 0..colours.len() {
        let (for_a, for_b) = (colours[round], colours[(round + 3) % colours.len()]);
        let (shot_a, shot_b) = tokio::join!(paint_and_shoot(&a, for_a), paint_and_shoot(&b, for_b));
        let (width_a, height_a, got_a) = centre_pixel(&a, &shot_a).await;
        let (width_b, height_b, got_b) = centre_pixel(&b, &shot_b).await;
        assert!(
            near(got_a, for_a),
            "round {round}: A's thumbnail is {got_a:?}; A painted {for_a:?}, B {for_b:?}"
        );
        assert!(
            near(got_b, for_b),
            "round {round}: B's thumbnail is {got_b:?}; B painted {for_b:?}, A {for_a:?}"
        );
        assert!(
            width_a > 320 && height_a > 320,
            "round {round}: A's thumbnail is captured whole: {width_a}×{height_a}"
        );
        assert!(
            width_b <= 320 && height_b <= 320,
            "round {round}: B's thumbnail is a card's size: {width_b}×{height_b}"
        );
    }
    assert_eq!(
        b_casts.count(),
        0,
        "an unwatched conversation's thumbnails started a screencast"
    );
    // A's live view still casts: a change after the thumbnails reaches its watcher.
    while next_frame(&mut feed, Duration::from_millis(300))
        .await
        .is_some()
    {}
    eval(&a, "document.body.style.background = 'rgb(0, 0, 0)'; true").await;
    let frame = next_frame(&mut feed, Duration::from_secs(3))
        .await
        .expect("the live view still casts A");
    let (_, _, got) = centre_pixel(&a, &frame).await;
    assert!(near(got, [0, 0, 0]), "the live frame is {got:?}");
}

/// LIVE-2, LIVE-6 (issue 32): a watcher who joins while a step's thumbnail takes its one
/// frame gets the live view all the same: the thumbnail's cast ends before the live view's
/// starts, never in the middle of it.
#[tokio::test(flavor = "multi_thread")]
async fn live_2_a_watcher_joining_mid_thumbnail_gets_the_live_view() {
    let lab = lab().await;
    let chat = lab.open("joining", "paint.html").await;
    let colours: [[u8; 3]; 4] = [[0, 192, 0], [0, 0, 255], [255, 255, 0], [255, 0, 255]];
    for (round, colour) in colours.into_iter().enumerate() {
        let shooting = tokio::spawn({
            let chat = chat.clone();
            async move { paint_and_shoot(&chat, [255, 0, 0]).await }
        });
        tokio::time::sleep(Duration::from_millis(10 * round as u64)).await;
        let (mut feed, _control) = lab.hub.join("joining");
        let _ = shooting.await.expect("the thumbnail");
        let [r, g, b] = colour;
        eval(
            &chat,
            &format!("document.body.style.background = 'rgb({r}, {g}, {b})'; true"),
        )
        .await;
        let mut seen = None;
        while let Some(frame) = next_frame(&mut feed, Duration::from_secs(3)).await {
            let (_, _, got) = centre_pixel(&chat, &frame).await;
            seen = Some(got);
            if near(got, colour) {
                break;
            }
        }
        assert!(
            seen.is_some_and(|got| near(got, colour)),
            "round {round}: the watcher's last frame is {seen:?}, the page is {colour:?}"
        );
        drop(feed);
        // The cast stops at its next turn once nobody watches.
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
}
