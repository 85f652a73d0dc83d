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
//! ## The act that commits (issue 30)
//!
//! Words are judged at the act that commits ([`commits`], [`StakesWords::on_commit`]): a
//! click, Enter or Space on a button-like control (a button, a submit or image input, a
//! menu item, a clickable element of no other role, a link that navigates nowhere: no
//! `href`, `#` or `javascript:`), or a form's submission. Following a link with a real
//! address (a GET navigation, even one named "Delete" that leads to a confirmation page),
//! choosing an option, checking a radio and typing in a field are not commits and never
//! ask, whatever their words. A checkbox whose own words are significant still asks
//! (HS-7); its context does not count.
//!
//! A commit is judged by its own words and then by its context ([`CommitContext`]): its
//! form's legend or name, its dialog's name, and a confirmation sentence near it ("Are
//! you sure you want to delete …?"). So "Yes, I'm sure", "OK" or "Continue" asks when its
//! dialog or form names a significant act, while a control that declines ("Cancel", "No,
//! take me back", "Close", "Keep") never asks for its context ([`declines`]).
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

/// The facts of a control that say whether acting on it commits (issue 30).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Control<'a> {
    /// Its ARIA role (`button`, `link`, `generic` for a clickable element of no role).
    pub role: &'a str,
    /// Its tag, lowercase.
    pub tag: &'a str,
    /// Its `type` attribute, for an input or a button.
    pub input_type: &'a str,
    /// Its `href` attribute as written, for a link; `None` when it has none.
    pub href: Option<&'a str>,
    /// Whether it is an editable text field.
    pub editable: bool,
}

/// Roles whose activation chooses, ticks, opens or types rather than commits.
const CHOOSING: &[&str] = &[
    "option",
    "radio",
    "menuitemradio",
    "checkbox",
    "menuitemcheckbox",
    "switch",
    "tab",
    "treeitem",
    "textbox",
    "searchbox",
    "combobox",
    "listbox",
    "slider",
    "spinbutton",
    "gridcell",
];

/// Roles that keep their own words' weight though they do not commit (HS-7).
const TICKING: &[&str] = &["checkbox", "menuitemcheckbox", "switch"];

/// Whether a click, Enter or Space on `control` commits (issue 30): a button-like control
/// or a form's submission does; a link with a real address (same document or not), an
/// option, a radio, a checkbox, a tab or a field does not.
pub fn commits(control: &Control<'_>) -> bool {
    let role = control.role.to_ascii_lowercase();
    if control.editable || CHOOSING.contains(&role.as_str()) {
        return false;
    }
    if control.tag == "select" || control.tag == "option" || control.tag == "textarea" {
        return false;
    }
    if control.tag == "input" {
        let kind = control.input_type.to_ascii_lowercase();
        if matches!(
            kind.as_str(),
            "radio" | "checkbox" | "file" | "range" | "color"
        ) {
            return false;
        }
    }
    if role == "link" || control.tag == "a" || control.tag == "area" {
        return !navigates(control.href);
    }
    true
}

/// Whether a link's `href` leads somewhere: anything but none, empty, a bare `#` and
/// `javascript:`.
fn navigates(href: Option<&str>) -> bool {
    let Some(href) = href else { return false };
    let href: String = href.chars().filter(|c| !c.is_whitespace()).collect();
    let lower = href.to_ascii_lowercase();
    !(lower.is_empty() || lower == "#" || lower.starts_with("javascript:"))
}

/// Where a commit stands, as the element description reads it (issue 30).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitContext {
    /// Its form's legend, accessible name and headings.
    pub form: String,
    /// The accessible name (or heading) of the dialog it is in.
    pub dialog: String,
    /// Text near it that may ask a question: its dialog's or form's own text (other
    /// controls' words left out), or the page's main heading and text before its form.
    pub text: String,
}

/// Why a commit is high stakes: the significant word, and the context phrase that named
/// it when the control's own words did not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitStakes {
    /// The significant word found.
    pub significant: Significant,
    /// The phrase of the context that names the act ("Delete project?"), when the
    /// control's own words are harmless ("Yes").
    pub context: Option<String>,
}

/// Words with which a control declines: "Cancel", "No, take me back", "Close", "Keep".
const DECLINING: &[&str] = &[
    "cancel", "no", "close", "keep", "dismiss", "abort", "nope", "back", "undo",
];

/// Phrases with which a control declines.
const DECLINING_PHRASES: &[&[&str]] = &[
    &["not", "now"],
    &["go", "back"],
    &["take", "me", "back"],
    &["never", "mind"],
    &["don", "t"],
    &["do", "not"],
];

/// Whether a control's own words decline the act its context names ("Cancel", "No, take
/// me back", "Close", "Keep it"): such a control never asks for its context.
pub fn declines(words: &str) -> bool {
    let tokens = crate::words::words(words);
    tokens
        .first()
        .is_some_and(|first| DECLINING.contains(&first.as_str()))
        || DECLINING_PHRASES
            .iter()
            .any(|phrase| tokens.len() <= 4 && has_phrase(&tokens, phrase))
}

/// Words that make a sentence a confirmation even without a question mark.
const CONFIRMING: &[&[&str]] = &[
    &["are", "you", "sure"],
    &["undone"],
    &["permanently"],
    &["irreversible"],
    &["confirm"],
];

/// The sentences of `text` that ask to confirm something: a question, or one that says
/// "are you sure", "cannot be undone", "permanently", "irreversible" or "confirm".
fn confirmations(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(['.', '?', '!', '\n'])
        .map(str::trim)
        .filter(|sentence| {
            let tokens = words(sentence);
            !tokens.is_empty()
                && (sentence.ends_with('?')
                    || CONFIRMING.iter().any(|phrase| has_phrase(&tokens, phrase)))
        })
}

/// Whether `tokens` hold the words of `phrase` in a row.
fn has_phrase(tokens: &[String], phrase: &[&str]) -> bool {
    tokens
        .windows(phrase.len())
        .any(|window| window.iter().zip(phrase).all(|(t, p)| t == p))
}

impl StakesWords {
    /// Whether acting on `control`, whose own words are `words`, in `context` is high
    /// stakes (issue 30, HS-1, HS-7): only a commit is, by its own words or, when they do
    /// not decline, by its form's or dialog's name or a confirmation sentence near it. A
    /// checkbox is judged by its own words alone; a link with a real address, an option,
    /// a radio and a field never are.
    pub fn on_commit(
        &self,
        control: &Control<'_>,
        words: &str,
        context: &CommitContext,
    ) -> Option<CommitStakes> {
        let own = |words: &str| {
            self.on_control(control.role, words)
                .map(|significant| CommitStakes {
                    significant,
                    context: None,
                })
        };
        if !commits(control) {
            let role = control.role.to_ascii_lowercase();
            let ticks = TICKING.contains(&role.as_str())
                || (control.tag == "input" && control.input_type.eq_ignore_ascii_case("checkbox"));
            return if ticks { own(words) } else { None };
        }
        if let Some(found) = own(words) {
            return Some(found);
        }
        if declines(words) {
            return None;
        }
        self.in_context(context)
    }

    /// Whether `context` names a significant act: its form's or dialog's name read as a
    /// control's words, or a confirmation sentence of its text read as a page's question.
    pub fn in_context(&self, context: &CommitContext) -> Option<CommitStakes> {
        for name in [&context.dialog, &context.form] {
            let name = name.trim();
            if let Some(significant) = self.significant(name) {
                return Some(CommitStakes {
                    significant,
                    context: Some(name.to_owned()),
                });
            }
        }
        confirmations(&context.text).find_map(|sentence| {
            self.find(&words(sentence), Reading::Sentence)
                .map(|significant| CommitStakes {
                    significant,
                    context: Some(sentence.to_owned()),
                })
        })
    }
}

/// The first built-in word in a control's words that names a significant act, if any.
pub fn significant_word(text: &str) -> Option<Significant> {
    StakesWords::default().significant(text)
}

/// Whether a page's question asks for a significant act, by the built-in words.
pub fn asks_high_stakes(sentence: &str) -> bool {
    StakesWords::default().asks_high_stakes(sentence)
}
