//! Two real panel windows of different sizes (issue 28, LIVE-9): each maps the person's
//! pointer with its own size, so both click where the person points.

use std::time::Duration;

use fantoccini::actions::{InputSource as _, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
use serde_json::json;

use crate::panel_browser::Session;

/// Where the frame is drawn on the live canvas, in the window's CSS pixels: the box of
/// its opaque pixels (the canvas is cleared around the frame), offset by the canvas's own
/// place in the window.
const FRAME_BOX: &str = "const c = document.getElementById('live-canvas'); \
    c.scrollIntoView({ block: 'nearest' }); \
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; \
    let [x0, y0, x1, y1] = [c.width, c.height, -1, -1]; \
    for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) { \
      if (d[(y * c.width + x) * 4 + 3] === 255) { \
        if (x < x0) x0 = x; if (y < y0) y0 = y; if (x > x1) x1 = x; if (y > y1) y1 = y; } } \
    const dpr = c.width / c.getBoundingClientRect().width; const b = c.getBoundingClientRect(); \
    return [b.left + x0 / dpr, b.top + y0 / dpr, (x1 - x0 + 1) / dpr, (y1 - y0 + 1) / dpr, innerWidth, innerHeight, b.width, b.height];";

impl Session {
    /// Clicks the live view at the fraction (`fx`, `fy`) of the page as this window
    /// draws it, as the person's own mouse.
    async fn click_at_fraction(&self, fx: f64, fy: f64) {
        let frame = self.js(FRAME_BOX).await;
        let number = |i: usize| frame[i].as_f64().expect("a number");
        let (x, y, w, h) = (number(0), number(1), number(2), number(3));
        assert!(w > 100.0 && h > 100.0, "no frame drawn: {frame}");
        let mouse = MouseActions::new("mouse".to_owned())
            .then(PointerAction::MoveTo {
                duration: None,
                x: (x + fx * w).round(),
                y: (y + fy * h).round(),
            })
            .then(PointerAction::Down {
                button: MOUSE_BUTTON_LEFT,
            })
            .then(PointerAction::Up {
                button: MOUSE_BUTTON_LEFT,
            });
        self.person
            .client
            .perform_actions(mouse)
            .await
            .unwrap_or_else(|e| {
                panic!("the person's click at ({fx}, {fy}) of the frame {frame}: {e}")
            });
    }
}

/// LIVE-9, LIVE-4 (issue 28): a small window and a large one (a real browser's two
/// windows, not raw sockets) watch one conversation; the person takes over in the small
/// one, opens the large one (whose size is then the last reported), and clicks the first
/// target in the small window, then the second in the large one. Each click
/// lands on its target, which the page says and the agent reads once the wheel is back.
/// Mapped with the other window's size, either click misses.
#[tokio::test(flavor = "multi_thread")]
async fn live_9_two_real_windows_of_different_sizes_each_click_where_the_person_points() {
    let (_pages, mut session, _page) = Session::watching("two-targets.html", &[]).await;
    let client = session.person.client.clone();
    client
        .set_window_size(760, 640)
        .await
        .expect("the small window");
    tokio::time::sleep(Duration::from_millis(800)).await;
    session.wait_for_frame().await;
    session.click("#takeover").await;
    session
        .wait_until(
            "!document.getElementById('handback').hidden",
            "the person has the wheel",
        )
        .await;
    let small = client.window().await.expect("the small window");

    let large = client
        .new_window(false)
        .await
        .expect("a second window")
        .handle;
    client
        .switch_to_window(large.clone())
        .await
        .expect("the second window");
    client
        .set_window_size(1400, 1000)
        .await
        .expect("the large window");
    session.open("conversation=mcp-stdio").await;
    // The large window's size is the last one reported: the tab takes its shape.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    session.wait_for_frame().await;

    // Back in the small window, whose size is not the last one reported.
    client
        .switch_to_window(small)
        .await
        .expect("the small window again");
    session.wait_for_frame().await;
    session.click_at_fraction(0.25, 0.25).await;
    client
        .switch_to_window(large)
        .await
        .expect("the large window again");
    session.wait_for_frame().await;
    session.click_at_fraction(0.75, 0.75).await;
    // On a loaded machine the second click's events may still be on their way.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    session.click("#handback").await;

    let (read, error) = session.agent.call("browser_read", json!({})).await;
    assert!(!error, "{read}");
    assert!(
        read.contains("Hits: hit first hit second"),
        "each window's click should land on its own target: {read}"
    );
    session.finish().await;
}

/// Keeps every size message the panel sends on its live socket in `window.__conchSizes`.
const RECORD_SIZES: &str = "const send = WebSocket.prototype.send; \
    WebSocket.prototype.send = function (data) { \
      try { const m = JSON.parse(data); \
        if (m && m.type === 'size') (window.__conchSizes ||= []).push(m); } catch (e) {} \
      return send.call(this, data); };";

/// LIVE-4 (issue 30): the person's window moves to a screen of another pixel ratio, its
/// size unchanged. The panel sends its size again with the new ratio, so the frames are
/// cast for the screen it now shows on.
#[tokio::test(flavor = "multi_thread")]
async fn live_4_the_panel_sends_its_size_again_when_only_the_pixel_ratio_changes() {
    let (_pages, session, _page) = Session::watching("two-targets.html", &[]).await;
    session.person.before_each_page(RECORD_SIZES).await;
    session.open("conversation=mcp-stdio").await;
    session.wait_for_frame().await;
    let first = session
        .wait_until(
            "(window.__conchSizes || []).length > 0 && window.__conchSizes[0]",
            "the panel sends its size",
        )
        .await;
    assert_eq!(first["dpr"], json!(1), "{first}");

    // The same window on a screen of twice the pixels: no element changes size.
    session
        .person
        .devtools(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 0, "height": 0, "deviceScaleFactor": 2, "mobile": false }),
        )
        .await;
    let again = session
        .wait_until(
            "(window.__conchSizes || []).find(m => m.dpr === 2) || false",
            "the panel sends its size again with the new ratio",
        )
        .await;
    assert_eq!(
        (again["width"].clone(), again["height"].clone()),
        (first["width"].clone(), first["height"].clone()),
        "the size is the same, only the ratio changed: {first} then {again}"
    );
    session.finish().await;
}
