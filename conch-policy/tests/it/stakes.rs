//! High stakes (HS-1, HS-6, AMB-12).

use conch_policy::{
    CommitContext, Control, StakesWords, asks_high_stakes, commits, declines, significant_word,
};
use proptest::prelude::*;

use crate::corpus::table;

const STAKES: &str = include_str!("../fixtures/stakes.txt");

/// A corpus line's reading: `[question] …` is a page's confirm, `[role] …` a control of
/// that role, anything else a control whose role is not known.
fn reading(line: &str) -> (Option<&str>, &str) {
    match line
        .strip_prefix('[')
        .and_then(|rest| rest.split_once("] "))
    {
        Some((role, text)) => (Some(role), text),
        None => (None, line),
    }
}

/// HS-1, HS-6, AMB-12, issue 11: every control text and page question in the corpus, by
/// the built-in words and with extra words added ("purchase", "place bid", "supprimer").
#[test]
fn hs_1_stakes_table() {
    let builtin = StakesWords::default();
    let extra = StakesWords::with_extra(&["purchase", "place bid", "supprimer"]);
    let rendered = table(STAKES, |line| {
        let judge = |words: &StakesWords| match reading(line) {
            (Some("question"), text) => words.asks_high_stakes(text).then(|| "question".to_owned()),
            (Some(role), text) => words
                .on_control(role, text)
                .map(|found| format!("{} ({})", found.stem, found.found)),
            (None, text) => words
                .significant(text)
                .map(|found| format!("{} ({})", found.stem, found.found)),
        };
        match (judge(&builtin), judge(&extra)) {
            (Some(found), _) => format!("HIGH STAKES: {found}"),
            (None, Some(found)) => format!("-   [with extras: {found}]"),
            (None, None) => "-".to_owned(),
        }
    });
    insta::assert_snapshot!("stakes", rendered);
}

/// HS-1: the record's examples, and whole-word matching.
#[test]
fn hs_1_matcher_positive_and_negative() {
    for positive in [
        "Place order",
        "Pay now",
        "Send message",
        "Delete account",
        "BUY",
        "Transfer funds",
    ] {
        assert!(significant_word(positive).is_some(), "{positive}");
    }
    for negative in ["Postcode", "Sender name", "Payload", "Next", "Continue"] {
        assert!(significant_word(negative).is_none(), "{negative}");
    }
}

/// HS-1, issue 11 (high stakes that are not): a control's words name an act only as the
/// imperative or the act's noun. Past participles, states, lists and things do not, and a
/// link whose name is a long description is navigation, while a short one still acts.
#[test]
fn hs_1_participles_and_descriptions_are_not_acts() {
    let words = StakesWords::default();
    for description in [
        "Published",
        "Sent items",
        "Your orders",
        "Posted by admin",
        "Track your order",
        "Sort order",
    ] {
        assert_eq!(words.significant(description), None, "{description}");
    }
    let long_link = "Articles published between 2024-01-01 and 2024-06-30";
    assert_eq!(words.on_control("link", long_link), None);
    let faq = "How do I delete my account?";
    assert_eq!(words.on_control("link", faq), None);
    assert!(words.on_control("button", faq).is_some());
    assert!(words.on_control("link", "Delete account").is_some());
    assert!(words.significant("Place your order").is_some());
    // A page's sentence still counts every inflection (HS-6).
    assert!(words.asks_high_stakes("This message will be sent to 5 people. Continue?"));
}

/// HS-6: asksHighStakes reads the whole sentence.
#[test]
fn hs_6_page_question_sentences() {
    assert!(asks_high_stakes("Remove this item and send the order?"));
    assert!(asks_high_stakes("Delete your account?"));
    assert!(!asks_high_stakes("Remove this item?"));
    assert!(!asks_high_stakes("Continue?"));
    assert!(StakesWords::with_extra(&["remove"]).asks_high_stakes("Remove this item?"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// HS-1: an imperative or an act's noun stays significant whatever neutral words and
    /// punctuation surround it, in any case.
    #[test]
    fn hs_1_word_found_in_any_surroundings(
        before in prop::collection::vec(prop_oneof![Just("please"), Just("now"), Just("1"), Just("!"), Just(",")], 0..4),
        after in prop::collection::vec(prop_oneof![Just("now"), Just("today"), Just("42"), Just("?"), Just("…")], 0..4),
        word in prop_oneof![Just("order"), Just("Pay"), Just("SEND"), Just("delete"), Just("checkout"), Just("Payment")],
    ) {
        let text = format!("{} {word} {}", before.join(" "), after.join(" "));
        prop_assert!(significant_word(&text).is_some(), "{}", text);
    }

    /// Issue 11: a past participle or a state never names the act on a control, whatever
    /// surrounds it; in a page's sentence it still asks (HS-6).
    #[test]
    fn hs_1_participles_never_act_on_a_control(
        before in "[a-z ,.!?]{0,20}",
        after in "[a-z ,.!?]{0,20}",
        word in prop_oneof![Just("published"), Just("Sent"), Just("posted"), Just("ORDERED"), Just("deleting"), Just("paid")],
    ) {
        let text = format!("{before} {word} {after}");
        // Random letters may spell a significant word of their own; only the participle is
        // judged, so the surroundings must say nothing significant by themselves.
        prop_assume!(!asks_high_stakes(&before) && !asks_high_stakes(&after));
        prop_assume!(!asks_high_stakes(&format!("{before} {after}")));
        prop_assert!(significant_word(&text).is_none(), "{}", text);
        prop_assert!(asks_high_stakes(&text), "{}", text);
    }
}

fn control<'a>(
    role: &'a str,
    tag: &'a str,
    input_type: &'a str,
    href: Option<&'a str>,
) -> Control<'a> {
    Control {
        role,
        tag,
        input_type,
        href,
        editable: false,
    }
}

/// Issue 30: which acts commit. A button, a submit input, a menu item, a clickable element
/// of no role and a link that navigates nowhere do; a link with a real address (same
/// document or not), an option, a radio, a checkbox, a select and a field do not.
#[test]
fn hs_1_only_an_act_that_commits_is_judged() {
    let commit = [
        control("button", "button", "submit", None),
        control("button", "input", "submit", None),
        control("button", "input", "image", None),
        control("menuitem", "li", "", None),
        control("generic", "div", "", None),
        control("link", "a", "", None),
        control("link", "a", "", Some("#")),
        control("link", "a", "", Some(" javascript:void(0)")),
        control("form", "form", "", None),
    ];
    for c in commit {
        assert!(commits(&c), "{c:?}");
    }
    let not = [
        control("link", "a", "", Some("/admin/post/1/delete/")),
        control("link", "a", "", Some("#orders")),
        control("link", "a", "", Some("https://example.com/send")),
        control("option", "li", "", None),
        control("option", "option", "", None),
        control("radio", "input", "radio", None),
        control("checkbox", "input", "checkbox", None),
        control("combobox", "select", "", None),
        control("tab", "button", "", None),
        Control {
            editable: true,
            ..control("textbox", "input", "text", None)
        },
    ];
    for c in not {
        assert!(!commits(&c), "{c:?}");
    }
}

/// Issue 30: a link named "Delete" that leads to a confirmation page, an option "Delete"
/// and a field labelled "Post title" never ask; a checkbox with significant words still
/// does (HS-7), and a radio does not.
#[test]
fn hs_1_a_link_an_option_or_a_field_never_asks_by_its_words() {
    let words = StakesWords::default();
    let none = CommitContext::default();
    let delete_link = control("link", "a", "", Some("/admin/post/1/delete/"));
    assert_eq!(words.on_commit(&delete_link, "Delete", &none), None);
    assert_eq!(
        words.on_commit(&control("option", "option", "", None), "Delete", &none),
        None
    );
    let field = Control {
        editable: true,
        ..control("textbox", "input", "text", None)
    };
    assert_eq!(
        words.on_commit(&field, "Post title please delete", &none),
        None
    );
    assert_eq!(
        words.on_commit(
            &control("radio", "input", "radio", None),
            "Send by post",
            &none
        ),
        None
    );
    let tick = words.on_commit(
        &control("checkbox", "input", "checkbox", None),
        "Transfer my balance",
        &CommitContext::default(),
    );
    assert_eq!(
        tick.map(|t| t.significant.stem),
        Some("transfer".to_owned())
    );
    // The same link with no address is a button in all but name: it asks.
    let fake = control("link", "a", "", Some("#"));
    assert!(words.on_commit(&fake, "Delete", &none).is_some());
}

/// Issue 30 (the attacker's side): a commit whose own words are harmless asks when its
/// form, its dialog or a confirmation sentence near it names a significant act; one that
/// declines never asks for its context.
#[test]
fn hs_1_a_harmless_commit_is_judged_by_its_context() {
    let words = StakesWords::default();
    let button = control("button", "button", "submit", None);
    let cases = [
        (
            "Continue",
            CommitContext {
                form: "Send payment".into(),
                ..CommitContext::default()
            },
            Some("send"),
        ),
        (
            "OK",
            CommitContext {
                dialog: "Publish to everyone".into(),
                ..CommitContext::default()
            },
            Some("publish"),
        ),
        (
            "Yes",
            CommitContext {
                dialog: "Delete project?".into(),
                text: "Delete project? This can't be undone.".into(),
                ..CommitContext::default()
            },
            Some("delete"),
        ),
        (
            "Yes, I'm sure",
            CommitContext {
                text: "Are you sure? Are you sure you want to delete the post \"Hello\"? All of the following related items will be deleted:".into(),
                ..CommitContext::default()
            },
            Some("delete"),
        ),
        (
            "Confirm",
            CommitContext {
                text: "Your balance will be transferred permanently.".into(),
                ..CommitContext::default()
            },
            Some("transfer"),
        ),
        // A statement that asks nothing is no confirmation: "Go" on a page that lists
        // posts, and a form named after the posts it searches.
        (
            "Go",
            CommitContext {
                form: "Search posts".into(),
                text: "Posts sent last week are listed below.".into(),
                ..CommitContext::default()
            },
            None,
        ),
        (
            "Save",
            CommitContext {
                form: "Order details".into(),
                ..CommitContext::default()
            },
            None,
        ),
    ];
    for (own, context, stem) in cases {
        let found = words.on_commit(&button, own, &context);
        assert_eq!(
            found.as_ref().map(|f| f.significant.stem.as_str()),
            stem,
            "{own} in {context:?}"
        );
        if let Some(found) = found {
            assert!(found.context.is_some(), "{found:?}");
        }
    }
    let delete = CommitContext {
        dialog: "Delete project?".into(),
        text: "Are you sure you want to delete it?".into(),
        ..CommitContext::default()
    };
    for own in [
        "Cancel",
        "No, take me back",
        "Close",
        "Keep",
        "Keep it",
        "Not now",
        "Go back",
    ] {
        assert!(declines(own), "{own}");
        assert_eq!(words.on_commit(&button, own, &delete), None, "{own}");
    }
    for own in ["Yes", "OK", "Continue", "Yes, I'm sure", "Noted"] {
        assert!(!declines(own), "{own}");
    }
    // The control's own words come first, with no context named.
    let own = words
        .on_commit(&button, "Delete", &delete)
        .expect("own words");
    assert_eq!(own.context, None);
}
