//! What Conch decides about pages: parts (SNAP-8, SNAP-10), bot checks (BOT-1 … BOT-4),
//! handoffs that finish by themselves (HAND-2 … HAND-5), the page's dialogs (DLG-*),
//! download names (DL-2, DL-4) and cookie banners (LAUNCH-11).

use std::time::Duration;

use conch_policy::{
    BotCheck, ChallengeWait, DialogAnswer, DialogKind, Driver, GateLook, HandoffState,
    HandoffWatch, Mode, ON_HAND_BACK, PART_CHARS, PageFacts, Vendor, bot_note, challenge_wait,
    classify_page, dialog_answer, is_captcha_frame, is_captcha_token, is_reject_control,
    numbered_name, page_parts, page_parts_within, safe_file_name,
};
use proptest::prelude::*;
use url::Url;

use crate::corpus::table;

const BOT: &str = include_str!("../fixtures/bot.txt");

fn check_parts(text: &str, limit: usize) -> Result<(), TestCaseError> {
    let parts = page_parts_within(text, limit);
    prop_assert!(!parts.is_empty());
    prop_assert_eq!(parts.concat(), text);
    for (i, part) in parts.iter().enumerate() {
        prop_assert!(
            part.chars().count() <= limit,
            "part {} has {} chars",
            i,
            part.chars().count()
        );
        prop_assert!(!part.is_empty() || text.is_empty());
        // A cut falls between lines unless the line, with its line break, is longer
        // than a part.
        let cut: usize = parts[..=i].iter().map(|p| p.len()).sum();
        if cut < text.len() && !part.ends_with('\n') {
            let line_start = text[..cut].rfind('\n').map_or(0, |at| at + 1);
            let line_end = text[cut..].find('\n').map_or(text.len(), |at| cut + at + 1);
            prop_assert!(
                text[line_start..line_end].chars().count() > limit,
                "cut inside a line that would have fit"
            );
        }
    }
    Ok(())
}

/// SNAP-8: inputs of 10 k, 16 k, 16,001 and 50 k characters: every part at most 16,000,
/// no cut inside a line, and the parts rejoin to the input.
#[test]
fn snap_8_page_parts_sizes() {
    let line = format!("{}\n", "x".repeat(99));
    for total in [10_000, 16_000, 16_001, 50_000] {
        let mut text = line.repeat(total / 100);
        text.push_str(&"y".repeat(total % 100));
        assert_eq!(text.chars().count(), total);
        check_parts(&text, PART_CHARS).unwrap();
        let parts = page_parts(&text);
        assert_eq!(parts.len(), total.div_ceil(PART_CHARS), "{total}");
        assert!(
            parts
                .iter()
                .all(|p| p.ends_with('\n') || std::ptr::eq(*p, *parts.last().unwrap()))
        );
    }
}

/// SNAP-10: one 40 k-character line of multibyte characters is cut at character
/// boundaries, every part at most 16,000 characters.
#[test]
fn snap_10_long_multibyte_line() {
    let text: String = "日本語é🙂a".chars().cycle().take(40_000).collect();
    let parts = page_parts(&text);
    assert_eq!(parts.len(), 3);
    assert_eq!(parts.concat(), text);
    assert!(parts.iter().all(|p| p.chars().count() <= PART_CHARS));
    assert_eq!(parts[0].chars().count(), PART_CHARS);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// SNAP-8, SNAP-10: parts always rejoin to the input and never exceed the limit,
    /// with multibyte characters and lines longer than a part.
    #[test]
    fn snap_8_parts_rejoin_and_fit(
        lines in proptest::collection::vec("[a-zé日🙂 ]{0,40}", 0..40),
        limit in 1usize..64,
        trailing_newline in any::<bool>(),
    ) {
        let mut text = lines.join("\n");
        if trailing_newline {
            text.push('\n');
        }
        check_parts(&text, limit)?;
    }

    /// SNAP-10: very long single lines at the real limit.
    #[test]
    fn snap_10_very_long_lines_fit(repeat in 1usize..5, extra in 0usize..20_000, ch in prop_oneof![Just('a'), Just('é'), Just('日'), Just('🙂')]) {
        let text: String = std::iter::repeat_n(ch, PART_CHARS * repeat + extra).collect();
        check_parts(&text, PART_CHARS)?;
    }
}

fn page(line: &str) -> PageFacts {
    let cols: Vec<&str> = line.split('|').map(str::trim).collect();
    PageFacts {
        status: cols[0].parse().ok(),
        title: cols[1].to_owned(),
        text: cols[2].replace("{long}", &"Welcome to our shop. ".repeat(60)),
        markup: cols[3].to_owned(),
        form_controls: cols[4].parse().unwrap(),
    }
}

/// BOT-1, BOT-4, AMB-21: each page in the corpus classified: vendor challenges, refusals,
/// and ordinary pages that carry a vendor's script.
#[test]
fn bot_1_classifier_table() {
    insta::assert_snapshot!("bot", table(BOT, |line| classify_page(&page(line)).code()));
}

/// BOT-2, BOT-3: a challenge is waited out for 15 seconds, then handed off.
#[test]
fn bot_2_challenge_wait() {
    assert_eq!(
        challenge_wait(Duration::from_millis(14_900), false),
        ChallengeWait::Passed
    );
    assert_eq!(
        challenge_wait(Duration::from_millis(14_900), true),
        ChallengeWait::KeepWaiting
    );
    assert_eq!(
        challenge_wait(Duration::from_secs(15), true),
        ChallengeWait::HandOff
    );
    let stay = bot_note(
        BotCheck::Challenge(Vendor::Cloudflare),
        ChallengeWait::HandOff,
    )
    .unwrap();
    assert!(stay.contains("browser_handoff"));
    let passed = bot_note(BotCheck::Challenge(Vendor::DataDome), ChallengeWait::Passed).unwrap();
    assert!(passed.contains("passed"));
    assert_eq!(bot_note(BotCheck::None, ChallengeWait::Passed), None);
}

/// BOT-4: a refusal is said plainly, with "don't retry it over and over" and what to try.
#[test]
fn bot_4_refusal_note() {
    let note = bot_note(BotCheck::Refusal, ChallengeWait::Passed).unwrap();
    assert!(note.contains("Don't retry it over and over"));
    assert!(note.contains("try another site"));
    let forbidden = PageFacts {
        status: Some(403),
        text: "x".repeat(40),
        ..PageFacts::default()
    };
    assert_eq!(classify_page(&forbidden), BotCheck::Refusal);
    let limited = PageFacts {
        status: Some(429),
        ..PageFacts::default()
    };
    assert_eq!(classify_page(&limited), BotCheck::Refusal);
}

fn look(document: &str) -> GateLook {
    GateLook {
        document: document.to_owned(),
        ..GateLook::default()
    }
}

/// HAND-2, HAND-5: only a gate is watched; anything else waits for I'm done.
#[test]
fn hand_2_gate_detection() {
    assert!(
        HandoffWatch::start(&GateLook {
            password_visible: true,
            ..look("signin")
        })
        .is_some()
    );
    assert!(
        HandoffWatch::start(&GateLook {
            code_visible: true,
            ..look("2fa")
        })
        .is_some()
    );
    assert!(
        HandoffWatch::start(&GateLook {
            captcha_visible: true,
            ..look("captcha")
        })
        .is_some()
    );
    assert!(HandoffWatch::start(&look("payment")).is_none());
}

/// HAND-3, HAND-4, AMB-20: signin → 2fa keeps waiting; account ends it after two looks in
/// a row with hands off for 2 s.
#[test]
fn hand_3_signin_then_2fa_then_account() {
    let start = GateLook {
        password_visible: true,
        ..look("signin")
    };
    let mut watch = HandoffWatch::start(&start).unwrap();
    let hands_off = Duration::from_secs(5);
    assert_eq!(watch.observe(&start, hands_off), HandoffState::Waiting);
    let two_factor = GateLook {
        code_visible: true,
        ..look("2fa")
    };
    assert_eq!(watch.observe(&two_factor, hands_off), HandoffState::Waiting);
    assert_eq!(watch.observe(&two_factor, hands_off), HandoffState::Waiting);
    let account = look("account");
    assert_eq!(
        watch.observe(&account, hands_off),
        HandoffState::Waiting,
        "one look is not enough"
    );
    assert_eq!(watch.observe(&account, hands_off), HandoffState::Finished);
}

/// HAND-4: typing on the next page keeps the handoff open until hands are off for 2 s.
#[test]
fn hand_4_hands_off_before_finishing() {
    let mut watch = HandoffWatch::start(&GateLook {
        password_visible: true,
        ..look("signin")
    })
    .unwrap();
    let next = look("account");
    for _ in 0..5 {
        assert_eq!(
            watch.observe(&next, Duration::from_millis(300)),
            HandoffState::Waiting
        );
    }
    assert_eq!(
        watch.observe(&next, Duration::from_millis(1_999)),
        HandoffState::Waiting
    );
    assert_eq!(
        watch.observe(&next, Duration::from_secs(2)),
        HandoffState::Finished
    );
    let mut again = HandoffWatch::start(&GateLook {
        password_visible: true,
        ..look("signin")
    })
    .unwrap();
    assert_eq!(
        again.observe(&next, Duration::from_secs(3)),
        HandoffState::Waiting
    );
    assert_eq!(
        again.observe(
            &GateLook {
                password_visible: true,
                ..look("signin")
            },
            Duration::from_secs(3)
        ),
        HandoffState::Waiting
    );
    assert_eq!(
        again.observe(&next, Duration::from_secs(3)),
        HandoffState::Waiting,
        "looks must be in a row"
    );
}

/// HAND-3: a sign-in popup that came and went, and a captcha token, end it too; the same
/// page without its form does not count as moving on.
#[test]
fn hand_3_popup_and_captcha_token() {
    let start = GateLook {
        password_visible: true,
        ..look("shop")
    };
    let mut watch = HandoffWatch::start(&start).unwrap();
    let popup = GateLook {
        popup_came_and_went: true,
        ..look("shop")
    };
    assert_eq!(
        watch.observe(&popup, Duration::from_secs(3)),
        HandoffState::Waiting
    );
    assert_eq!(
        watch.observe(&popup, Duration::from_secs(3)),
        HandoffState::Finished
    );

    let captcha = GateLook {
        captcha_visible: true,
        ..look("captcha")
    };
    let watch = HandoffWatch::start(&captcha).unwrap();
    let solved = GateLook {
        captcha_token: true,
        ..captcha
    };
    assert!(watch.look_passes(&solved));
    assert!(!watch.look_passes(&GateLook {
        captcha_visible: false,
        ..look("captcha")
    }));
}

/// AMB-20: captcha frames and tokens.
#[test]
fn hand_3_captcha_frames_and_tokens() {
    let frame = |u: &str| is_captcha_frame(&Url::parse(u).unwrap());
    assert!(frame(
        "https://challenges.cloudflare.com/cdn-cgi/challenge-platform/x"
    ));
    assert!(frame("https://www.google.com/recaptcha/api2/anchor?k=1"));
    assert!(frame("https://www.recaptcha.net/recaptcha/api2/anchor"));
    assert!(frame("https://newassets.hcaptcha.com/captcha/v1/x"));
    assert!(frame("https://geo.captcha-delivery.com/captcha/?x"));
    assert!(!frame("https://www.google.com/maps"));
    assert!(!frame("https://evilhcaptcha.com/"));
    assert!(!frame("https://hcaptcha.com.evil.example/"));
    assert!(is_captcha_token("cf-turnstile-response", "0.abc"));
    assert!(is_captcha_token("g-recaptcha-response", "03AG"));
    assert!(is_captcha_token("h-captcha-response", "P1_"));
    assert!(!is_captcha_token("g-recaptcha-response", "  "));
    assert!(!is_captcha_token("csrf", "abc"));
}

/// DLG-2, DLG-4, DLG-5, DLG-6, DLG-8, DLG-10, DLG-11, AMB-19: who answers each dialog, how.
#[test]
fn dlg_8_who_answers_table() {
    let mut out = String::new();
    for mode in [Mode::Ask, Mode::PlanOnly] {
        for driver in [Driver::AgentStep, Driver::Person, Driver::Nobody] {
            for kind in [
                DialogKind::Alert,
                DialogKind::Confirm,
                DialogKind::Prompt,
                DialogKind::BeforeUnload,
            ] {
                let answer = dialog_answer(kind, driver, mode);
                out.push_str(&format!(
                    "{:<10} {:<10} {:<13} => {answer:?}\n",
                    mode.as_str(),
                    format!("{driver:?}"),
                    format!("{kind:?}")
                ));
            }
        }
    }
    out.push_str(&format!("left waiting at hand back => {ON_HAND_BACK:?}\n"));
    insta::assert_snapshot!("dialogs", out);
    assert_eq!(
        dialog_answer(DialogKind::Confirm, Driver::AgentStep, Mode::PlanOnly),
        DialogAnswer::Dismiss
    );
}

/// DL-2: names made safe; DL-4: a taken name gets a number.
#[test]
fn dl_4_numbered_names() {
    assert_eq!(safe_file_name("../../x"), "x");
    assert_eq!(safe_file_name("a/b"), "b");
    assert_eq!(safe_file_name("CON"), "_CON");
    assert_eq!(safe_file_name("report?.pdf"), "report_.pdf");
    assert_eq!(safe_file_name("   "), "download");
    let taken = ["report.pdf", "report (1).pdf"];
    assert_eq!(numbered_name("report.pdf", &taken), "report (2).pdf");
    assert_eq!(numbered_name("fresh.pdf", &taken), "fresh.pdf");
}

/// LAUNCH-11, AMB-25: only exact reject phrases are pressed in a banner.
#[test]
fn launch_11_reject_words() {
    for yes in [
        "Reject all",
        "Necessary only",
        "Only necessary cookies",
        "Decline",
        "Continue without accepting",
    ] {
        assert!(is_reject_control(yes), "{yes}");
    }
    for no in [
        "Accept all",
        "Accept",
        "OK",
        "Manage preferences",
        "Reject all and subscribe",
        "Don't reject",
    ] {
        assert!(!is_reject_control(no), "{no}");
    }
}
