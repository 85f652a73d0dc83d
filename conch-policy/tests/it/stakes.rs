//! High stakes (HS-1, HS-6, AMB-12).

use conch_policy::{StakesWords, asks_high_stakes, significant_word};
use proptest::prelude::*;

use crate::corpus::table;

const STAKES: &str = include_str!("../fixtures/stakes.txt");

/// HS-1, HS-6, AMB-12: every control text and page question in the corpus, by the
/// built-in words and with extra words added ("purchase", "place bid", "supprimer").
#[test]
fn hs_1_stakes_table() {
    let extra = StakesWords::with_extra(&["purchase", "place bid", "supprimer"]);
    let rendered = table(STAKES, |text| {
        let builtin = match significant_word(text) {
            Some(found) => format!("HIGH STAKES: {} ({})", found.stem, found.found),
            None => "-".to_owned(),
        };
        let with_extra = match extra.significant(text) {
            Some(found) if significant_word(text).is_none() => {
                format!("   [with extras: {}]", found.stem)
            }
            _ => String::new(),
        };
        format!("{builtin}{with_extra}")
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
        "Transferred",
    ] {
        assert!(significant_word(positive).is_some(), "{positive}");
    }
    for negative in ["Postcode", "Sender name", "Payload", "Next", "Continue"] {
        assert!(significant_word(negative).is_none(), "{negative}");
    }
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

    /// HS-1: a significant word stays significant whatever surrounds it, in any case.
    #[test]
    fn hs_1_word_found_in_any_surroundings(
        before in "[a-z ,.!?]{0,20}",
        after in "[a-z ,.!?]{0,20}",
        word in prop_oneof![Just("order"), Just("Pay"), Just("SENT"), Just("deleting"), Just("checkout")],
    ) {
        let text = format!("{before} {word} {after}");
        prop_assert!(significant_word(&text).is_some(), "{}", text);
    }
}
