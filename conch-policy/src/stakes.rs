//! High stakes: the words that make an act significant (HS-1, HS-6, HS-7, AMB-12).
//!
//! An act on a control whose own words contain one of nine stems, in any of its English
//! inflections, asks for confirmation every time, in every mode. So does a page's confirm
//! whose sentence contains one anywhere (asksHighStakes).
//!
//! Matching is on whole words, case-insensitively, after invisible characters are removed
//! (see the words module): "Place order", "PAY NOW", "Pay-now" and "Sending…" match;
//! "Postcode", "Sender name", "Payload", "Ordinary" and "PayPal" do not.
//!
//! False positives are accepted, because an extra confirmation is safe (AMB-12): "Sort
//! order", "Order by: price", "Post code", "Sent items", "Your orders", "Check out our
//! deals" all confirm. The corpus tests/fixtures/stakes.txt lists both kinds.
//!
//! Not built in: other languages, and words such as "purchase", "subscribe" or "remove";
//! the embedder adds them with [`StakesWords::with_extra`].

use serde::Serialize;

use crate::words::{contains_phrase, words};

/// The nine stems and the word forms that count as each.
const STEMS: &[(&str, &[&str])] = &[
    ("buy", &["buy", "buys", "buying", "bought"]),
    (
        "pay",
        &["pay", "pays", "paying", "paid", "payment", "payments"],
    ),
    (
        "order",
        &[
            "order",
            "orders",
            "ordering",
            "ordered",
            "preorder",
            "preorders",
            "preordered",
        ],
    ),
    ("checkout", &["checkout", "checkouts"]),
    ("send", &["send", "sends", "sending", "sent"]),
    ("post", &["post", "posts", "posting", "posted"]),
    (
        "publish",
        &["publish", "publishes", "publishing", "published"],
    ),
    (
        "delete",
        &["delete", "deletes", "deleting", "deleted", "deletion"],
    ),
    (
        "transfer",
        &[
            "transfer",
            "transfers",
            "transferring",
            "transferred",
            "transfered",
        ],
    ),
];

/// "check out", "checking out", "checked out" are checkout too.
const CHECK_FORMS: &[&str] = &["check", "checks", "checking", "checked"];

/// A significant word found in some text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Significant {
    /// The stem or extra word it stands for (`order`).
    pub stem: String,
    /// The word as found, lowercased (`ordered`, `check out`).
    pub found: String,
}

/// The significant words: the nine built in, plus the embedder's extras.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StakesWords {
    extra: Vec<Vec<String>>,
}

impl StakesWords {
    /// The built-in words plus extra words or phrases, each matched as whole words,
    /// case-insensitively, exactly as written ("purchase", "place bid", "supprimer").
    pub fn with_extra<S: AsRef<str>>(extra: &[S]) -> Self {
        let extra = extra
            .iter()
            .map(|phrase| words(phrase.as_ref()))
            .filter(|phrase| !phrase.is_empty())
            .collect();
        Self { extra }
    }

    /// The first significant word in a control's words, if any (HS-1).
    pub fn significant(&self, text: &str) -> Option<Significant> {
        let tokens = words(text);
        for (i, token) in tokens.iter().enumerate() {
            if let Some((stem, _)) = STEMS
                .iter()
                .find(|(_, forms)| forms.contains(&token.as_str()))
            {
                return Some(Significant {
                    stem: (*stem).to_owned(),
                    found: token.clone(),
                });
            }
            if CHECK_FORMS.contains(&token.as_str())
                && tokens.get(i + 1).is_some_and(|t| t == "out")
            {
                return Some(Significant {
                    stem: "checkout".to_owned(),
                    found: format!("{token} out"),
                });
            }
        }
        self.extra
            .iter()
            .find(|phrase| contains_phrase(&tokens, phrase))
            .map(|phrase| {
                let joined = phrase.join(" ");
                Significant {
                    stem: joined.clone(),
                    found: joined,
                }
            })
    }

    /// Whether a page's question asks for a significant act anywhere in its sentence
    /// (asksHighStakes, HS-6): "Remove this item and send the order?" does.
    pub fn asks_high_stakes(&self, sentence: &str) -> bool {
        self.significant(sentence).is_some()
    }
}

/// The first built-in significant word in `text`, if any.
pub fn significant_word(text: &str) -> Option<Significant> {
    StakesWords::default().significant(text)
}

/// Whether a page's question asks for a significant act, by the built-in words.
pub fn asks_high_stakes(sentence: &str) -> bool {
    StakesWords::default().asks_high_stakes(sentence)
}
