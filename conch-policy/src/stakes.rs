//! High stakes: the words that make an act significant (HS-1, HS-6, HS-7, AMB-12).
//!
//! Two readings of the same nine stems (buy, pay, order, checkout, send, post, publish,
//! delete, transfer):
//!
//! - **A control's own words** ([`StakesWords::significant`], [`StakesWords::on_control`])
//!   name an act only as the imperative or as the act's own noun: "Publish", "Send
//!   message", "Place order", "Buy now", "Delete account", "Confirm payment", "Request
//!   account deletion", "Proceed to checkout". Other inflections describe something done
//!   or doing, not the act the control performs: "Published between two dates", "Sent
//!   items", "Your orders", "Posted by", "Paying…" (issue 11). A word that names a thing
//!   is not the act either: after a possessive ("Track your order"; but "Place your
//!   order" is the act), or in a short list of compounds ("Sort order", "Order by",
//!   "Post code", "Payment methods"). A link whose name is a long description (more than
//!   [`LONG_LINK_WORDS`] words) is navigation, whatever words it holds.
//! - **A page's question** ([`StakesWords::asks_high_stakes`]) asks for a significant act
//!   when any inflection appears anywhere in its sentence (HS-6): a confirm describes the
//!   act rather than naming it ("This message will be sent to 5 people").
//!
//! Matching is on whole words, case-insensitively, after invisible characters are removed
//! (see the words module): "Place order", "PAY NOW", "Pay-now" match; "Postcode",
//! "Sender name", "Payload", "Ordinary" and "PayPal" do not.
//!
//! A few false positives are accepted, because an extra confirmation is safe (AMB-12):
//! "Delete filter", "Send feedback". The corpus tests/fixtures/stakes.txt lists both kinds
//! and the README's table names the accepted ones.
//!
//! Not built in: other languages, and words such as "purchase", "subscribe" or "remove";
//! the embedder adds them with [`StakesWords::with_extra`].

use serde::Serialize;

use crate::words::{contains_phrase, words};

/// The forms that name the act on a control: the imperative, and the act's noun.
const ACTS: &[(&str, &[&str])] = &[
    ("buy", &["buy"]),
    ("pay", &["pay", "payment"]),
    ("order", &["order", "preorder"]),
    ("checkout", &["checkout"]),
    ("send", &["send"]),
    ("post", &["post"]),
    ("publish", &["publish"]),
    ("delete", &["delete", "deletion"]),
    ("transfer", &["transfer"]),
];

/// Every inflection of the nine stems, for a page's sentence (HS-6).
const INFLECTIONS: &[(&str, &[&str])] = &[
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

/// "check out" is checkout on a control; "checking out", "checked out" too in a sentence.
const CHECK_ACT: &[&str] = &["check"];
const CHECK_FORMS: &[&str] = &["check", "checks", "checking", "checked"];

/// Compounds in which an act word names a thing, not the act.
const THINGS: &[&[&str]] = &[
    &["sort", "order"],
    &["in", "order"],
    &["order", "by"],
    &["order", "history"],
    &["order", "status"],
    &["order", "number"],
    &["order", "summary"],
    &["order", "details"],
    &["post", "code"],
    &["post", "office"],
    &["payment", "method"],
    &["payment", "methods"],
    &["payment", "history"],
    &["check", "out", "our"],
];

/// Words after which an act word names someone's thing ("Track your order").
const POSSESSIVES: &[&str] = &["your", "my", "our", "their", "his", "her"];

/// Verbs that make "<verb> your order" the act after all ("Place your order").
const PLACING: &[&str] = &[
    "place", "confirm", "submit", "complete", "finalize", "finalise", "make", "send", "pay",
];

/// A link whose name has more words than this is a description: navigation.
pub const LONG_LINK_WORDS: usize = 5;

/// A significant word found in some text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Significant {
    /// The stem or extra word it stands for (`order`).
    pub stem: String,
    /// The word as found, lowercased (`order`, `check out`).
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

    /// The first word in a control's own words that names a significant act, if any
    /// (HS-1): an imperative or an act's noun, not a description ("Place order", not
    /// "Your orders").
    pub fn significant(&self, text: &str) -> Option<Significant> {
        self.find(&words(text), Reading::Control)
    }

    /// As [`significant`](Self::significant), for a control of `role` (its ARIA role,
    /// `link`, `button`…): a link whose name is a long description is navigation.
    pub fn on_control(&self, role: &str, text: &str) -> Option<Significant> {
        let tokens = words(text);
        if role.eq_ignore_ascii_case("link") && tokens.len() > LONG_LINK_WORDS {
            return None;
        }
        self.find(&tokens, Reading::Control)
    }

    /// Whether a page's question asks for a significant act anywhere in its sentence, in
    /// any inflection (asksHighStakes, HS-6): "Remove this item and send the order?" and
    /// "This message will be sent to 5 people" do.
    pub fn asks_high_stakes(&self, sentence: &str) -> bool {
        self.find(&words(sentence), Reading::Sentence).is_some()
    }

    fn find(&self, tokens: &[String], reading: Reading) -> Option<Significant> {
        let (forms, check) = match reading {
            Reading::Control => (ACTS, CHECK_ACT),
            Reading::Sentence => (INFLECTIONS, CHECK_FORMS),
        };
        for (i, token) in tokens.iter().enumerate() {
            let hit = if let Some((stem, _)) = forms
                .iter()
                .find(|(_, forms)| forms.contains(&token.as_str()))
            {
                Some(((*stem).to_owned(), token.clone()))
            } else if check.contains(&token.as_str())
                && tokens.get(i + 1).is_some_and(|t| t == "out")
            {
                Some(("checkout".to_owned(), format!("{token} out")))
            } else {
                None
            };
            let Some((stem, found)) = hit else {
                continue;
            };
            if reading == Reading::Control && names_a_thing(tokens, i) {
                continue;
            }
            return Some(Significant { stem, found });
        }
        self.extra
            .iter()
            .find(|phrase| contains_phrase(tokens, phrase))
            .map(|phrase| {
                let joined = phrase.join(" ");
                Significant {
                    stem: joined.clone(),
                    found: joined,
                }
            })
    }
}

/// How words are read: a control's name, or a page's sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    Control,
    Sentence,
}

/// Whether the act word at `at` names a thing: inside one of the [`THINGS`] compounds,
/// or right after a possessive with no placing verb before it.
fn names_a_thing(tokens: &[String], at: usize) -> bool {
    let is = |i: usize, set: &[&str]| tokens.get(i).is_some_and(|t| set.contains(&t.as_str()));
    let in_compound = THINGS.iter().any(|phrase| {
        (at.saturating_sub(phrase.len() - 1)..=at).any(|start| {
            tokens
                .get(start..start + phrase.len())
                .is_some_and(|window| window.iter().zip(phrase.iter()).all(|(t, p)| t == p))
        })
    });
    let owned = at >= 1 && is(at - 1, POSSESSIVES) && !(at >= 2 && is(at - 2, PLACING));
    in_compound || owned
}

/// The first built-in word in a control's words that names a significant act, if any.
pub fn significant_word(text: &str) -> Option<Significant> {
    StakesWords::default().significant(text)
}

/// Whether a page's question asks for a significant act, by the built-in words.
pub fn asks_high_stakes(sentence: &str) -> bool {
    StakesWords::default().asks_high_stakes(sentence)
}
