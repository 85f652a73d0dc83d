//! Shapes and limits: the viewport and click_at (LIVE-4, AMB-11, GES-10 … GES-12), tabs
//! (TAB-5) and errands (ERR-15 … ERR-17).

use conch_policy::{
    DEFAULT_VIEWPORT, MAX_TABS, OpenErrand, Point, RefusalCode, Room, Size, TabUse, cast_size,
    click_at_point, errand_limit, make_room, may_open_tab, panel_in_device_px, panel_to_viewport,
    tab_to_close_for_popup, viewport_for_panel,
};

/// LIVE-4: the record's formula cases; AMB-11: no panel gives 1280×800.
#[test]
fn live_4_viewport_formula() {
    let vp = |w, h| viewport_for_panel(Some(Size::new(w, h)));
    assert_eq!(vp(500, 400), Size::new(960, 768));
    assert_eq!(vp(700, 500), Size::new(1120, 800));
    assert_eq!(vp(1000, 600), Size::new(1440, 864));
    assert_eq!(vp(320, 640), Size::new(960, 1920));
    assert_eq!(vp(2560, 1440), Size::new(1440, 810));
    assert_eq!(viewport_for_panel(None), DEFAULT_VIEWPORT);
    assert_eq!(
        viewport_for_panel(Some(Size::new(0, 400))),
        Size::new(1280, 800)
    );
    assert_eq!(vp(u32::MAX, u32::MAX), Size::new(1440, 1440));
}

/// LIVE-9: the person's pointer on a 500×400 panel lands on the 960×768 viewport scaled
/// by 1.92 on both axes; with no size reported it lands where it is; a point outside the
/// panel stays inside the viewport.
#[test]
fn live_9_the_persons_pointer_scales_from_panel_to_viewport() {
    let panel = Size::new(500, 400);
    let viewport = viewport_for_panel(Some(panel));
    let p = panel_to_viewport(Point { x: 100.0, y: 100.0 }, Some(panel), viewport);
    assert_eq!((p.x, p.y), (192.0, 192.0));
    let p = panel_to_viewport(Point { x: 100.0, y: 50.0 }, None, DEFAULT_VIEWPORT);
    assert_eq!((p.x, p.y), (100.0, 50.0));
    let p = panel_to_viewport(Point { x: 9e9, y: -5.0 }, Some(panel), viewport);
    assert_eq!((p.x, p.y), (959.0, 0.0));
    let p = panel_to_viewport(
        Point {
            x: f64::NAN,
            y: 1.0,
        },
        Some(panel),
        viewport,
    );
    assert_eq!(p.x, 0.0);
}

/// GES-11: a screenshot at 1440×900, the viewport now 960×600, (720,450) → (480,300).
#[test]
fn ges_11_click_at_scales() {
    let p = click_at_point(
        Point { x: 720.0, y: 450.0 },
        Some(Size::new(1440, 900)),
        Size::new(960, 600),
    )
    .unwrap();
    assert_eq!((p.x, p.y), (480.0, 300.0));
    let same = click_at_point(
        Point { x: 10.0, y: 20.0 },
        Some(Size::new(1280, 800)),
        Size::new(1280, 800),
    )
    .unwrap();
    assert_eq!((same.x, same.y), (10.0, 20.0));
}

/// GES-12: no screenshot, or a point outside it, is refused.
#[test]
fn ges_12_click_at_needs_a_screenshot() {
    let none = click_at_point(Point { x: 1.0, y: 1.0 }, None, Size::new(1280, 800)).unwrap_err();
    assert_eq!(none.refusal().unwrap().code(), RefusalCode::NoScreenshot);
    assert!(
        none.refusal()
            .unwrap()
            .sentence()
            .contains("take a screenshot first")
    );
    for (x, y) in [
        (-1.0, 5.0),
        (5.0, 801.0),
        (f64::NAN, 1.0),
        (f64::INFINITY, 1.0),
    ] {
        let out = click_at_point(
            Point { x, y },
            Some(Size::new(1280, 800)),
            Size::new(1280, 800),
        )
        .unwrap_err();
        assert_eq!(
            out.refusal().unwrap().code(),
            RefusalCode::PointOutsideScreenshot
        );
    }
}

/// TAB-5: at most 8 tabs; a ninth open is refused; a popup closes the tab unused longest.
#[test]
fn tab_5_limit_and_which_tab_goes() {
    assert_eq!(MAX_TABS, 8);
    assert!(may_open_tab(7).is_allowed());
    assert_eq!(
        may_open_tab(8).refusal().unwrap().code(),
        RefusalCode::TooManyTabs
    );
    let tabs: Vec<TabUse> = (1..=8)
        .map(|n| TabUse {
            id: format!("t{n}"),
            last_used: [50, 10, 70, 30, 10, 90, 80, 60][n - 1],
        })
        .collect();
    assert_eq!(tab_to_close_for_popup(&tabs[..7]), None);
    assert_eq!(tab_to_close_for_popup(&tabs).unwrap().id, "t2");
}

/// ERR-15: clamp(floor(GB ÷ 2), 2, 6): 2 GB → 2, 8 GB → 4, 16 GB → 6.
#[test]
fn err_15_errand_limit() {
    const GB: u64 = 1_000_000_000;
    const GIB: u64 = 1 << 30;
    assert_eq!(errand_limit(0), 2);
    assert_eq!(errand_limit(2 * GB), 2);
    assert_eq!(errand_limit(6 * GB), 3);
    assert_eq!(errand_limit(8 * GB), 4);
    assert_eq!(errand_limit(7_800_000_000), 3);
    assert_eq!(errand_limit(8 * GIB - 200 * 1024 * 1024), 4);
    assert_eq!(errand_limit(16 * GB), 6);
    assert_eq!(errand_limit(64 * GB), 6);
    assert_eq!(errand_limit(u64::MAX), 6);
}

/// ERR-16, ERR-17: the least recently used idle errand is set aside; all busy fails.
#[test]
fn err_16_make_room() {
    let errand = |id: &str, last_used: u64, busy: bool| OpenErrand {
        id: id.to_owned(),
        last_used,
        busy,
    };
    assert_eq!(make_room(&[errand("a", 1, false)], 2), Room::Free);
    let open = [
        errand("a", 5, false),
        errand("b", 1, true),
        errand("c", 3, false),
    ];
    assert_eq!(make_room(&open, 3), Room::SetAside("c".to_owned()));
    let busy = [errand("a", 5, true), errand("b", 1, true)];
    let Room::Busy(verdict) = make_room(&busy, 2) else {
        panic!("expected busy")
    };
    assert!(
        verdict
            .refusal()
            .unwrap()
            .sentence()
            .contains("wait a minute and try again")
    );
}

/// ERR-14: at most 40 set-aside sessions, none older than 14 days; the oldest go first.
#[test]
fn err_14_set_aside_sessions_are_bounded_by_count_and_age() {
    use conch_policy::{MAX_SET_ASIDE, SET_ASIDE_FOR_SECS, set_aside_to_forget};
    const DAY: u64 = 24 * 60 * 60;
    let start = 1_796_000_000;
    // 41 sessions, one a minute: the 41st makes the first go.
    let kept: Vec<(String, u64)> = (0..=40u64)
        .map(|n| (format!("task-{n}"), start + n * 60))
        .collect();
    assert_eq!(MAX_SET_ASIDE, 40);
    assert!(set_aside_to_forget(&kept[..40], start + 41 * 60).is_empty());
    assert_eq!(set_aside_to_forget(&kept, start + 41 * 60), ["task-0"]);
    // The input's order does not matter.
    let mut shuffled = kept.clone();
    shuffled.reverse();
    assert_eq!(set_aside_to_forget(&shuffled, start + 41 * 60), ["task-0"]);
    // Day 14 keeps them all (bar the 41st's oldest); day 15 purges every one.
    let few = &kept[..3];
    assert!(set_aside_to_forget(few, start + 14 * DAY).is_empty());
    assert_eq!(SET_ASIDE_FOR_SECS, 14 * DAY);
    assert_eq!(
        set_aside_to_forget(few, start + 15 * DAY),
        ["task-0", "task-1", "task-2"]
    );
    // A newer one stays while older ones go.
    let mixed = vec![
        ("old".to_owned(), start),
        ("new".to_owned(), start + 10 * DAY),
    ];
    assert_eq!(set_aside_to_forget(&mixed, start + 15 * DAY), ["old"]);
}

/// LIVE-4, issue 30: the live view's frames are the biggest watcher's screen on each axis,
/// never bigger than the viewport; with no screen reported, the viewport.
#[test]
fn live_4_the_frames_are_the_biggest_screen_within_the_viewport() {
    let viewport = Size::new(1120, 800);
    let mut screens = Vec::new();
    assert_eq!(cast_size(screens.clone(), viewport), viewport);
    screens.push(Size::new(700, 500));
    assert_eq!(cast_size(screens.clone(), viewport), Size::new(700, 500));
    screens.push(Size::new(400, 600));
    assert_eq!(cast_size(screens.clone(), viewport), Size::new(700, 600));
    screens.push(Size::new(1400, 1000));
    assert_eq!(cast_size(screens, viewport), viewport);
}

/// LIVE-4, issue 30: a panel's screen is its size times its device pixel ratio, rounded,
/// at least 1 pixel, with a ratio past 4 counted as 4.
#[test]
fn live_4_a_panels_screen_is_its_size_in_device_pixels() {
    let panel = Size::new(400, 300);
    assert_eq!(panel_in_device_px(panel, 2.0), Size::new(800, 600));
    assert_eq!(panel_in_device_px(panel, 1.25), Size::new(500, 375));
    assert_eq!(panel_in_device_px(panel, 10.0), Size::new(1600, 1200));
    assert_eq!(panel_in_device_px(Size::new(1, 1), 0.1), Size::new(1, 1));
}
