//! Flat auto-attach against a real browser (LAUNCH-19): pages, an out-of-process
//! cross-origin frame and a dedicated worker each arrive as a ready child session, held
//! (wait-for-debugger-on-start) until the test resumes it.

use std::time::Duration;

use conch_cdp::protocol::target::{self, TargetType};
use conch_cdp::protocol::{fetch, page};
use conch_fixtures::{FixtureServer, Response};
use futures_util::StreamExt;

use crate::support::{eval, launch, navigate, new_page, within};

/// LAUNCH-19: xo-frame.html on 127.0.0.1 embeds frame.html from localhost, another site,
/// so Chromium puts the frame in its own process (an `iframe` target). The page's session
/// is told of the frame's session before the frame runs; the page cannot finish loading
/// while the frame is held; interception installed on the frame's session while it is held
/// pauses the frame's first subresource; once resumed, scripts run in the frame on
/// origin B.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_origin_frame_is_attached_and_held_until_resumed_launch_19() {
    let server = FixtureServer::start().await.expect("fixture server");
    // The frame loads a script as it parses: the first request the frame itself makes.
    server.route(
        "frame.html",
        Response::html(
            "<!doctype html><title>Checkout frame</title><script src=\"frame-script.js\"></script>",
        ),
    );
    server.route(
        "frame-script.js",
        Response {
            status: 200,
            headers: vec![("Content-Type".into(), "text/javascript".into())],
            body: b"document.documentElement.dataset.script = 'ran';".to_vec(),
        },
    );
    let browser = launch().await;
    let page = new_page(&browser.connection).await;
    let mut children = page.attached_targets();
    page.call(&target::SetAutoAttach::held())
        .await
        .expect("Target.setAutoAttach on the page");
    page.call(&page::Enable {}).await.expect("Page.enable");
    let mut loads = page.subscribe::<page::LoadEventFired>();
    page.call(&page::Navigate::new(server.url("xo-frame.html")))
        .await
        .expect("Page.navigate");

    let frame = within(15, "the frame's attachedToTarget", children.next())
        .await
        .expect("attached stream ended")
        .expect("attachedToTarget decodes");
    assert_eq!(
        frame.target_info.target_type,
        TargetType::Iframe,
        "the cross-site frame is not out of process: {:?}",
        frame.target_info
    );
    assert!(frame.waiting_for_debugger, "the frame is not held");
    assert_eq!(frame.parent.as_ref(), page.id());

    // Held: the frame runs nothing, so the page's load event cannot fire yet.
    let early = tokio::time::timeout(Duration::from_millis(700), loads.next()).await;
    assert!(early.is_err(), "the page loaded while its frame was held");

    // Install handlers on the child before it runs: interception on its session.
    let mut paused = frame.session.subscribe::<fetch::RequestPaused>();
    frame
        .session
        .call(&fetch::Enable::default())
        .await
        .expect("Fetch.enable on the frame's session");
    let frame_session = frame.session.clone();
    let continuer = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(Ok(request)) = paused.next().await {
            seen.push(request.request.url.clone());
            let _ = frame_session
                .call(&fetch::ContinueRequest::new(request.request_id))
                .await;
        }
        seen
    });
    frame
        .resume()
        .await
        .expect("Runtime.runIfWaitingForDebugger");

    within(15, "the page's load event after resuming", loads.next())
        .await
        .expect("load stream ended")
        .expect("load event decodes");
    let origin = eval(&frame.session, "location.origin").await;
    assert_eq!(
        origin,
        format!("http://localhost:{}", server.cross_site_port()),
        "scripts on the frame's session run in the cross-site frame"
    );
    assert_eq!(
        eval(&frame.session, "document.title").await,
        "Checkout frame"
    );
    assert_eq!(eval(&page, "document.title").await, "Cross-origin frame");
    assert_eq!(
        eval(&frame.session, "document.documentElement.dataset.script").await,
        "ran",
        "the frame's script was not continued"
    );
    browser.close().await;
    // The stream ends with the connection. The frame's own request was paused on the
    // frame's session (interception installed while it was held), and nothing of the
    // page's was.
    let seen = within(5, "the end of the frame's requestPaused stream", continuer)
        .await
        .expect("continuer task");
    assert_eq!(
        seen,
        [server.cross_site_url("frame-script.js")],
        "requests paused on the frame's session"
    );
}

/// LAUNCH-19: a dedicated worker started by a page arrives as a held `worker` session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_is_attached_and_held_until_resumed_launch_19() {
    let server = FixtureServer::start().await.expect("fixture server");
    server.route(
        "worker-page.html",
        Response::html(
            "<!doctype html><title>Worker page</title><script>new Worker('worker.js')</script>",
        ),
    );
    server.route(
        "worker.js",
        Response {
            status: 200,
            headers: vec![("Content-Type".into(), "text/javascript".into())],
            body: b"self.started = true;".to_vec(),
        },
    );
    let browser = launch().await;
    let page = new_page(&browser.connection).await;
    let mut children = page.attached_targets();
    page.call(&target::SetAutoAttach::held())
        .await
        .expect("Target.setAutoAttach on the page");
    navigate(&page, &server.url("worker-page.html")).await;
    let worker = within(15, "the worker's attachedToTarget", children.next())
        .await
        .expect("attached stream ended")
        .expect("attachedToTarget decodes");
    assert_eq!(
        worker.target_info.target_type,
        TargetType::Worker,
        "{:?}",
        worker.target_info
    );
    assert!(worker.waiting_for_debugger, "the worker is not held");
    worker.resume().await.expect("resume the worker");
    let scope = eval(&worker.session, "self.constructor.name").await;
    assert_eq!(scope, "DedicatedWorkerGlobalScope");
    browser.close().await;
}

/// LAUNCH-19: with auto-attach on the browser's session, a new page arrives held on the
/// connection-wide stream, and runs once resumed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_page_is_attached_held_on_the_browser_session_launch_19() {
    let browser = launch().await;
    let connection = &browser.connection;
    let mut attached = connection.attached_targets();
    connection
        .call(&target::SetAutoAttach::held())
        .await
        .expect("Target.setAutoAttach on the browser");
    let created = connection
        .call(&target::CreateTarget::new("about:blank"))
        .await
        .expect("Target.createTarget");
    let new_page = within(15, "the new page's attachedToTarget", async {
        loop {
            let child = attached
                .next()
                .await
                .expect("attached stream ended")
                .expect("attachedToTarget decodes");
            // Pages that existed before (the startup tab) are announced too.
            if child.target_info.target_id == created.target_id {
                return child;
            }
            let _ = child.resume().await;
        }
    })
    .await;
    assert_eq!(new_page.target_info.target_type, TargetType::Page);
    assert_eq!(new_page.parent, None);
    assert!(new_page.waiting_for_debugger);
    new_page.resume().await.expect("resume the page");
    assert_eq!(eval(&new_page.session, "1 + 1").await, 2);
    browser.close().await;
}
