//! The permission rule (PERM-1, PERM-2, PERM-3, PERM-8, PERM-9, PERM-11, PERM-16, GES-3,
//! BE-12, HS-1, HS-8, SEC-5, UP-9, UP-11, DLG-6 … DLG-8, ERR-4, ERR-5, TOOL-5, AMB-5).

use conch_policy::{
    ActClass, ActKind, AutoAnswer, BrowserKind, Choice, Chord, Decision, FileOrigin, Mode,
    PermitFacts, QuestionKind, RefusalCode, Site, SiteAllowance, UploadItem, carries, decide,
};

const MODES: [Mode; 4] = [Mode::Ask, Mode::Auto, Mode::FullTrust, Mode::PlanOnly];

fn site(host: &str) -> Site {
    Site::of_host(host).unwrap()
}

fn facts(mode: Mode, act: ActKind) -> PermitFacts {
    let mut facts = PermitFacts::new(mode, act, site("shop.example"));
    if act == ActKind::Press {
        facts.keys = Some(Chord::parse("Enter").unwrap());
    }
    if act == ActKind::Upload {
        facts.uploads = vec![UploadItem {
            name: "cv.pdf".to_owned(),
            origin: FileOrigin::AttachedInChat,
        }];
    }
    facts
}

/// A grid: one row per case, one column per mode.
fn grid(title: &str, rows: &[Row]) -> String {
    let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    let mut out = format!("## {title}\n{:width$} |", "");
    for mode in MODES {
        out.push_str(&format!(" {:<16}|", mode.as_str()));
    }
    out.push('\n');
    for (name, make) in rows {
        out.push_str(&format!("{name:width$} |"));
        for mode in MODES {
            out.push_str(&format!(" {:<16}|", decide(&make(mode)).code()));
        }
        out.push('\n');
    }
    out
}

type Row = (String, Box<dyn Fn(Mode) -> PermitFacts>);

fn row(name: &str, make: impl Fn(Mode) -> PermitFacts + 'static) -> Row {
    (name.to_owned(), Box::new(make))
}

/// PERM-1 … PERM-16, BE-12, HS-1, HS-8, SEC-5, UP-9, UP-11: the decision tables, mode by
/// mode.
#[test]
fn perm_decision_tables() {
    let mut out = String::new();

    let acts: Vec<Row> = ActKind::ALL
        .iter()
        .map(|act| {
            let act = *act;
            row(act.as_str(), move |mode| facts(mode, act))
        })
        .collect();
    out.push_str(&grid(
        "Each act on a site not yet allowed, in Conch's browser",
        &acts,
    ));

    let states: Vec<Row> = vec![
        row("conch, not yet, auto allows", |m| facts(m, ActKind::Click)),
        row("conch, not yet, auto asks", |m| PermitFacts {
            auto: AutoAnswer::Ask,
            ..facts(m, ActKind::Click)
        }),
        row("conch, this chat", |m| PermitFacts {
            allowance: SiteAllowance::ThisChat,
            ..facts(m, ActKind::Click)
        }),
        row("conch, always", |m| PermitFacts {
            allowance: SiteAllowance::Always,
            ..facts(m, ActKind::Click)
        }),
        row("own chrome, not yet", |m| PermitFacts {
            browser: BrowserKind::OwnChrome,
            ..facts(m, ActKind::Click)
        }),
        row("own chrome, this chat", |m| PermitFacts {
            browser: BrowserKind::OwnChrome,
            allowance: SiteAllowance::ThisChat,
            ..facts(m, ActKind::Click)
        }),
        row("own chrome, always (not kept)", |m| PermitFacts {
            browser: BrowserKind::OwnChrome,
            allowance: SiteAllowance::Always,
            ..facts(m, ActKind::Click)
        }),
        row("errand that lends, not yet", |m| PermitFacts {
            errand_lends: true,
            ..facts(m, ActKind::Click)
        }),
    ];
    out.push('\n');
    out.push_str(&grid(
        "A click, by what the person already allowed",
        &states,
    ));

    let allowed = |m: Mode, act: ActKind| PermitFacts {
        allowance: SiteAllowance::ThisChat,
        significant_words: Some("Place order".to_owned()),
        ..facts(m, act)
    };
    let stakes: Vec<Row> = vec![
        row("click “Place order”", move |m| {
            allowed(m, ActKind::Click)
        }),
        row("click “Place order”, vouched", move |m| PermitFacts {
            vouched: true,
            ..allowed(m, ActKind::Click)
        }),
        row("double-click “Place order”", move |m| {
            allowed(m, ActKind::DoubleClick)
        }),
        row("drag onto “Delete”", move |m| allowed(m, ActKind::Drag)),
        row("click_at over “Place order”", move |m| {
            allowed(m, ActKind::ClickAt)
        }),
        row("press Enter on it", move |m| allowed(m, ActKind::Press)),
        row("press Space on it", move |m| PermitFacts {
            keys: Some(Chord::parse("Space").unwrap()),
            ..allowed(m, ActKind::Press)
        }),
        row("press Tab on it", move |m| PermitFacts {
            keys: Some(Chord::parse("Tab").unwrap()),
            ..allowed(m, ActKind::Press)
        }),
        row("type into it", move |m| allowed(m, ActKind::Type)),
        row("form ticking it", move |m| allowed(m, ActKind::Form)),
        row("page confirm asking it", move |m| {
            allowed(m, ActKind::PageConfirm)
        }),
        row("hover it", move |m| allowed(m, ActKind::Hover)),
        row("own chrome, this chat", move |m| PermitFacts {
            browser: BrowserKind::OwnChrome,
            ..allowed(m, ActKind::Click)
        }),
        row("not yet allowed (site first)", move |m| PermitFacts {
            allowance: SiteAllowance::NotYet,
            ..allowed(m, ActKind::Click)
        }),
    ];
    out.push('\n');
    out.push_str(&grid("High stakes, on a site already allowed", &stakes));

    let secret = |m: Mode, act: ActKind, keys: Option<&str>| PermitFacts {
        allowance: SiteAllowance::ThisChat,
        secret_target: true,
        keys: keys.map(|k| Chord::parse(k).unwrap()),
        ..facts(m, act)
    };
    let secrets: Vec<Row> = vec![
        row("type", move |m| secret(m, ActKind::Type, None)),
        row("select", move |m| secret(m, ActKind::Select, None)),
        row("click_at with text", move |m| {
            secret(m, ActKind::ClickAt, None)
        }),
        row("click (focus only)", move |m| {
            secret(m, ActKind::Click, None)
        }),
        row("press Tab", move |m| secret(m, ActKind::Press, Some("Tab"))),
        row("press Shift+Tab", move |m| {
            secret(m, ActKind::Press, Some("Shift+Tab"))
        }),
        row("press Enter", move |m| {
            secret(m, ActKind::Press, Some("Enter"))
        }),
        row("press Escape", move |m| {
            secret(m, ActKind::Press, Some("Escape"))
        }),
        row("press ArrowDown", move |m| {
            secret(m, ActKind::Press, Some("ArrowDown"))
        }),
        row("press Control+V", move |m| {
            secret(m, ActKind::Press, Some("Control+V"))
        }),
        row("press Meta+V", move |m| {
            secret(m, ActKind::Press, Some("Meta+V"))
        }),
        row("press a", move |m| secret(m, ActKind::Press, Some("a"))),
        row("press Space", move |m| {
            secret(m, ActKind::Press, Some("Space"))
        }),
        row("press Backspace", move |m| {
            secret(m, ActKind::Press, Some("Backspace"))
        }),
        row("press (no keys)", move |m| PermitFacts {
            keys: None,
            ..secret(m, ActKind::Press, None)
        }),
    ];
    out.push('\n');
    out.push_str(&grid("Secret fields, on a site already allowed", &secrets));

    insta::assert_snapshot!("permit", out);
}

/// PERM-1, AMB-5: modes parse, and "Read only" is Plan only.
#[test]
fn perm_1_mode_parsing() {
    for (text, mode) in [
        ("ask", Mode::Ask),
        ("Auto", Mode::Auto),
        ("Full trust", Mode::FullTrust),
        ("fullTrust", Mode::FullTrust),
        ("full-trust", Mode::FullTrust),
        ("Plan only", Mode::PlanOnly),
        ("plan_only", Mode::PlanOnly),
        ("Read only", Mode::PlanOnly),
        ("read-only", Mode::PlanOnly),
        ("READONLY", Mode::PlanOnly),
    ] {
        assert_eq!(text.parse::<Mode>().unwrap(), mode, "{text}");
    }
    assert!("trust me".parse::<Mode>().is_err());
    assert!("".parse::<Mode>().is_err());
}

/// PERM-2, GES-3: reading (open, read, scroll, screenshot, wait, tabs, back, hover) never
/// asks, in any mode, whatever the target.
#[test]
fn perm_2_reading_never_asks() {
    for act in ActKind::ALL
        .iter()
        .filter(|act| act.class() == ActClass::Reading)
    {
        for mode in MODES {
            for browser in [BrowserKind::Conch, BrowserKind::OwnChrome] {
                let f = PermitFacts {
                    browser,
                    significant_words: Some("Delete account".to_owned()),
                    secret_target: true,
                    ..facts(mode, *act)
                };
                assert_eq!(decide(&f), Decision::Allow, "{act:?} in {mode:?}");
            }
        }
    }
}

/// TOOL-5: the reading/acting class of every act.
#[test]
fn tool_5_act_classes() {
    let reading: Vec<&str> = ActKind::ALL
        .iter()
        .filter(|a| a.class() == ActClass::Reading)
        .map(|a| a.as_str())
        .collect();
    assert_eq!(
        reading,
        [
            "open",
            "read",
            "scroll",
            "screenshot",
            "wait",
            "tabs",
            "back",
            "hover"
        ]
    );
    assert_eq!(ActKind::Handoff.class(), ActClass::Neither);
    for act in [
        ActKind::Click,
        ActKind::Drag,
        ActKind::Type,
        ActKind::Press,
        ActKind::Select,
        ActKind::Form,
        ActKind::ClickAt,
        ActKind::Upload,
    ] {
        assert_eq!(act.class(), ActClass::Acting, "{act:?}");
    }
}

/// PERM-3: the first act on a site in Ask mode asks "Let Conch use <site>?" with This
/// chat, Always and No; once allowed, it doesn't ask.
#[test]
fn perm_3_site_question() {
    let f = PermitFacts::new(Mode::Ask, ActKind::Click, site("www.booking.com"));
    let Decision::Ask(question) = decide(&f) else {
        panic!("expected a question")
    };
    assert_eq!(question.kind(), QuestionKind::Site);
    assert_eq!(question.text(), "Let Conch use booking.com?");
    assert_eq!(
        question.choices(),
        [Choice::ThisChat, Choice::Always, Choice::No]
    );
    assert!(!question.lends_sign_in());
    let later = PermitFacts {
        allowance: SiteAllowance::ThisChat,
        ..f
    };
    assert_eq!(decide(&later), Decision::Allow);
}

/// PERM-8: Full trust skips the site question but not high stakes, secrets or uploads.
#[test]
fn perm_8_full_trust_keeps_the_other_gates() {
    assert_eq!(
        decide(&facts(Mode::FullTrust, ActKind::Click)),
        Decision::Allow
    );
    let stakes = PermitFacts {
        significant_words: Some("Place order".into()),
        ..facts(Mode::FullTrust, ActKind::Click)
    };
    assert_eq!(decide(&stakes).code(), "ask-high-stakes");
    let secret = PermitFacts {
        secret_target: true,
        ..facts(Mode::FullTrust, ActKind::Type)
    };
    assert_eq!(decide(&secret).code(), "secret-field");
    assert_eq!(
        decide(&facts(Mode::FullTrust, ActKind::Upload)).code(),
        "ask-upload"
    );
}

/// PERM-9, UP-11, DLG-8: Plan only refuses every act, uploads and page confirms
/// included, with a sentence that names what to do.
#[test]
fn perm_9_plan_only_refuses_every_act() {
    for act in ActKind::ALL
        .iter()
        .filter(|act| act.class() == ActClass::Acting)
    {
        let Decision::Refuse(refusal) = decide(&facts(Mode::PlanOnly, *act)) else {
            panic!("{act:?} was not refused")
        };
        assert_eq!(refusal.code(), RefusalCode::PlanOnly);
        assert!(refusal.sentence().contains("Plan only"));
    }
    assert_eq!(
        decide(&facts(Mode::PlanOnly, ActKind::Handoff)),
        Decision::Allow
    );
}

/// PERM-11, AMB-27: a value of 500 characters carries; one of 10 doesn't; a line break
/// does; one long value among short ones does.
#[test]
fn perm_11_carries() {
    let short = "x".repeat(10);
    let long = "x".repeat(500);
    assert!(!carries(&[short.as_str()]));
    assert!(carries(&[long.as_str()]));
    assert!(carries(&[short.as_str(), long.as_str()]));
    assert!(!carries(&["x".repeat(200)]));
    assert!(carries(&["x".repeat(201)]));
    assert!(carries(&["two\nlines"]));
    assert!(!carries(&["é".repeat(200)]));
    assert!(!carries::<&str>(&[]));
}

/// PERM-16, AMB-17: an act in a cross-site frame asks about the top-level site and names
/// the frame's site too; a same-site frame adds nothing.
#[test]
fn perm_16_frame_site_is_named() {
    let f = PermitFacts {
        frame_site: Some(site("pay.example")),
        ..facts(Mode::Ask, ActKind::Click)
    };
    let Decision::Ask(question) = decide(&f) else {
        panic!("expected a question")
    };
    assert_eq!(question.site().unwrap().as_str(), "shop.example");
    assert_eq!(question.frame_site().unwrap().as_str(), "pay.example");
    assert_eq!(
        question.text(),
        "Let Conch use shop.example, and pay.example inside it?"
    );
    let same = PermitFacts {
        frame_site: Some(site("www.shop.example")),
        ..facts(Mode::Ask, ActKind::Click)
    };
    let Decision::Ask(question) = decide(&same) else {
        panic!("expected a question")
    };
    assert_eq!(question.frame_site(), None);
}

/// BE-12: in the person's own Chrome every site asks once per conversation in every
/// mode, Always is never offered, an Always in browser.json doesn't count, and high
/// stakes still confirm.
#[test]
fn be_12_own_chrome_asks_every_conversation() {
    for mode in [Mode::Ask, Mode::Auto, Mode::FullTrust] {
        for allowance in [SiteAllowance::NotYet, SiteAllowance::Always] {
            let f = PermitFacts {
                browser: BrowserKind::OwnChrome,
                allowance,
                ..facts(mode, ActKind::Click)
            };
            let Decision::Ask(question) = decide(&f) else {
                panic!("{mode:?} {allowance:?}")
            };
            assert_eq!(question.kind(), QuestionKind::OwnChrome);
            assert!(!question.choices().contains(&Choice::Always));
            assert!(question.for_elicitation().is_none());
        }
        let allowed = PermitFacts {
            browser: BrowserKind::OwnChrome,
            allowance: SiteAllowance::ThisChat,
            significant_words: Some("Pay now".into()),
            ..facts(mode, ActKind::Click)
        };
        assert_eq!(decide(&allowed).code(), "ask-high-stakes");
    }
}

/// HS-1, HS-2: high stakes asks every time, in every mode, with the control's words and
/// never Always; a yes in this step (vouched) covers the follow-up (DLG-7).
#[test]
fn hs_1_high_stakes_in_every_mode() {
    for mode in [Mode::Ask, Mode::Auto, Mode::FullTrust] {
        let f = PermitFacts {
            allowance: SiteAllowance::Always,
            significant_words: Some("Place order".into()),
            ..facts(mode, ActKind::Click)
        };
        let Decision::Ask(question) = decide(&f) else {
            panic!("{mode:?}")
        };
        assert_eq!(question.kind(), QuestionKind::HighStakes);
        assert_eq!(
            question.text(),
            "Let Conch click “Place order” on shop.example?"
        );
        assert_eq!(question.choices(), [Choice::Yes, Choice::No]);
        assert_eq!(question.words(), Some("Place order"));
        assert_eq!(decide(&PermitFacts { vouched: true, ..f }), Decision::Allow);
    }
}

/// HS-8, AMB-12: Enter or Space on a significant control is judged as clicking it; other
/// keys are not.
#[test]
fn hs_8_enter_on_significant_control_is_a_click() {
    let press = |keys: &str| PermitFacts {
        allowance: SiteAllowance::ThisChat,
        significant_words: Some("Place order".into()),
        keys: Some(Chord::parse(keys).unwrap()),
        ..facts(Mode::Ask, ActKind::Press)
    };
    assert_eq!(decide(&press("Enter")).code(), "ask-high-stakes");
    assert_eq!(decide(&press("Space")).code(), "ask-high-stakes");
    assert_eq!(decide(&press("Shift+Enter")).code(), "ask-high-stakes");
    assert_eq!(decide(&press("Tab")).code(), "allow");
    assert_eq!(decide(&press("ArrowDown")).code(), "allow");
}

/// DLG-6, DLG-7: a page confirm is an act on the site: the site question first, then high
/// stakes when its sentence asks for a significant act, covered by a yes in the step.
#[test]
fn dlg_6_page_confirm_goes_through_permit() {
    let confirm = facts(Mode::Ask, ActKind::PageConfirm);
    assert_eq!(decide(&confirm).code(), "ask-site");
    let allowed = PermitFacts {
        allowance: SiteAllowance::ThisChat,
        ..confirm
    };
    assert_eq!(decide(&allowed).code(), "allow");
    let significant = PermitFacts {
        significant_words: Some("Delete your account?".into()),
        ..allowed
    };
    let Decision::Ask(question) = decide(&significant) else {
        panic!("expected a question")
    };
    assert_eq!(
        question.text(),
        "Let Conch answer yes to “Delete your account?” on shop.example?"
    );
    assert_eq!(
        decide(&PermitFacts {
            vouched: true,
            ..significant
        }),
        Decision::Allow
    );
}

/// UP-9, PERM-14 / AMB-10: every upload asks, in every mode, naming each file, where it
/// comes from and the site, with Yes and No; the question stands in for the site question.
#[test]
fn up_9_upload_question() {
    for mode in [Mode::Ask, Mode::Auto, Mode::FullTrust] {
        let mut f = PermitFacts::new(mode, ActKind::Upload, site("jobs.example"));
        f.uploads = vec![UploadItem {
            name: "cv.pdf".into(),
            origin: FileOrigin::AttachedInChat,
        }];
        let Decision::Ask(question) = decide(&f) else {
            panic!("{mode:?}")
        };
        assert_eq!(question.kind(), QuestionKind::Upload);
        assert_eq!(
            question.text(),
            "Upload “cv.pdf” (attached in this chat) to jobs.example?"
        );
        assert_eq!(question.choices(), [Choice::Yes, Choice::No]);
        assert!(question.for_elicitation().is_none());
        assert_eq!(decide(&PermitFacts { vouched: true, ..f }), Decision::Allow);
    }
    let mut two = PermitFacts::new(Mode::Ask, ActKind::Upload, site("jobs.example"));
    two.uploads = vec![
        UploadItem {
            name: "cv.pdf".into(),
            origin: FileOrigin::AttachedInChat,
        },
        UploadItem {
            name: "photo.jpg".into(),
            origin: FileOrigin::WorkFolder,
        },
    ];
    let Decision::Ask(question) = decide(&two) else {
        panic!("expected a question")
    };
    assert_eq!(
        question.text(),
        "Upload “cv.pdf” (attached in this chat) and “photo.jpg” (from the work folder) to jobs.example?"
    );
}

/// ERR-4, ERR-5, PERM-15: in an errand that borrows sign-ins, Ask mode's site question
/// says Allow lends the sign-in; Auto's and Full trust's never lend.
#[test]
fn err_4_errand_question_lends_sign_in() {
    let errand = PermitFacts {
        errand_lends: true,
        ..facts(Mode::Ask, ActKind::Click)
    };
    let Decision::Ask(question) = decide(&errand) else {
        panic!("expected a question")
    };
    assert!(question.lends_sign_in());
    assert!(
        question
            .text()
            .contains("lends your sign-in on shop.example to this conversation's own browser")
    );
    assert!(
        question.for_elicitation().is_none(),
        "an errand's site question never goes through elicitation"
    );

    let auto = PermitFacts {
        errand_lends: true,
        auto: AutoAnswer::Ask,
        ..facts(Mode::Auto, ActKind::Click)
    };
    let Decision::Ask(question) = decide(&auto) else {
        panic!("expected a question")
    };
    assert!(!question.lends_sign_in());
    let full = PermitFacts {
        errand_lends: true,
        ..facts(Mode::FullTrust, ActKind::Click)
    };
    assert_eq!(decide(&full), Decision::Allow);
}

/// PERM-10, "Decisions that differ": Auto asks no site question by default; the
/// AutoPolicy is consulted only where its answer matters.
#[test]
fn perm_10_auto_defers_to_auto_policy() {
    let auto = facts(Mode::Auto, ActKind::Type);
    assert!(auto.needs_auto_policy());
    assert_eq!(decide(&auto), Decision::Allow);
    assert_eq!(
        decide(&PermitFacts {
            auto: AutoAnswer::Ask,
            ..auto.clone()
        })
        .code(),
        "ask-site"
    );
    assert!(!facts(Mode::Auto, ActKind::Read).needs_auto_policy());
    assert!(!facts(Mode::Ask, ActKind::Click).needs_auto_policy());
    assert!(
        !PermitFacts {
            allowance: SiteAllowance::Always,
            ..auto.clone()
        }
        .needs_auto_policy()
    );
    assert!(
        !PermitFacts {
            browser: BrowserKind::OwnChrome,
            ..auto
        }
        .needs_auto_policy()
    );
}

/// AMB-5: MCP elicitation may carry only a site question, with This chat and No.
#[test]
fn amb_5_elicitation_carries_only_the_site_question() {
    let Decision::Ask(question) = decide(&facts(Mode::Ask, ActKind::Click)) else {
        panic!()
    };
    let reduced = question.for_elicitation().unwrap();
    assert_eq!(reduced.choices(), [Choice::ThisChat, Choice::No]);
    let stakes = PermitFacts {
        allowance: SiteAllowance::ThisChat,
        significant_words: Some("Buy".into()),
        ..facts(Mode::Ask, ActKind::Click)
    };
    let Decision::Ask(question) = decide(&stakes) else {
        panic!()
    };
    assert!(question.for_elicitation().is_none());
}

/// GES-3: hover is reading: it asks nothing and works in Plan only.
#[test]
fn ges_3_hover_is_reading() {
    assert_eq!(ActKind::Hover.class(), ActClass::Reading);
    for mode in MODES {
        assert_eq!(
            decide(&facts(mode, ActKind::Hover)),
            Decision::Allow,
            "{mode:?}"
        );
    }
}

/// UP-11: Plan only refuses uploads, before any upload question.
#[test]
fn up_11_plan_only_refuses_uploads() {
    let Decision::Refuse(refusal) = decide(&facts(Mode::PlanOnly, ActKind::Upload)) else {
        panic!("expected a refusal")
    };
    assert_eq!(refusal.code(), RefusalCode::PlanOnly);
}
