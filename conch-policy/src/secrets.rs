//! Secret fields: the fields whose values never pass through the model (SEC-1, SEC-2,
//! SEC-5, AMB-13).
//!
//! A field is secret when any of these holds, checked in this order:
//! 1. its type is `password`;
//! 2. one of its autocomplete tokens is `one-time-code`, `current-password`,
//!    `new-password`, `cc-number`, `cc-csc`, `cc-exp`, `cc-exp-month` or `cc-exp-year`
//!    (`cc-name` is not secret);
//! 3. it takes typed text (not a checkbox, radio, button, file, range, colour or hidden
//!    input) and its label, name, id or placeholder names a password, passcode, PIN,
//!    one-time or verification code, card number or security code (CVV/CVC/CSC).
//!
//! Words are whole words, case-insensitive, and camelCase attribute values are split
//! (`cardNumber`, `OTPCode`). Accepted false positives, since a needless handoff is safe:
//! "Password hint", "PIN code" and "Pincode" (India's postal code). Not secret:
//! "Promo code", "Postal code", "Confirmation code" (a booking reference), "Name on card".
//! The embedder adds words with [`SecretWords::with_extra`].
//!
//! A password field asks for a *new* password ([`is_new_password`], SEC-2, issue 16) when
//! its autocomplete says `new-password`, or, with no `current-password` anywhere in its
//! form, when the form has a second password field (the confirmation) or its words (the
//! submit button, the form's name or heading) say sign up, register, create an account or
//! join. The vault may then make a strong password for the site and fill it.

use serde::Serialize;

use crate::verdict::{Refusal, RefusalCode, Verdict};
use crate::words::{contains_phrase, words, words_split_case};

/// What the page says about a field, as the snapshot reads it. Empty strings for what
/// the field lacks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldFacts {
    /// The input's `type` (`password`, `text`, `email`…); empty for a textarea or an
    /// editable element.
    pub input_type: String,
    /// The `autocomplete` attribute, all its tokens.
    pub autocomplete: String,
    /// The label or accessible name.
    pub label: String,
    /// The `name` attribute.
    pub name: String,
    /// The `id` attribute.
    pub id: String,
    /// The `placeholder` attribute.
    pub placeholder: String,
}

/// What a field is, for the secrets rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase", tag = "class", content = "kind")]
pub enum FieldClass {
    /// An ordinary field: the agent may type into it.
    Plain,
    /// A secret field: filled by the embedder's `SecretFiller` or by the person.
    Secret(SecretKind),
}

impl FieldClass {
    /// Whether the field is secret.
    pub fn is_secret(self) -> bool {
        matches!(self, Self::Secret(_))
    }
}

/// Which kind of secret, for the sentence the agent reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SecretKind {
    /// A password, passcode, passphrase or PIN.
    Password,
    /// A one-time, verification or two-factor code.
    Code,
    /// A card number, security code or expiry.
    Card,
}

const SECRET_AUTOCOMPLETE: &[(&str, SecretKind)] = &[
    ("current-password", SecretKind::Password),
    ("new-password", SecretKind::Password),
    ("one-time-code", SecretKind::Code),
    ("cc-number", SecretKind::Card),
    ("cc-csc", SecretKind::Card),
    ("cc-exp", SecretKind::Card),
    ("cc-exp-month", SecretKind::Card),
    ("cc-exp-year", SecretKind::Card),
];

/// Input types that take no typed text.
const NOT_TYPED: &[&str] = &[
    "checkbox", "radio", "button", "submit", "reset", "image", "file", "hidden", "range", "color",
];

const SECRET_PHRASES: &[(&[&str], SecretKind)] = &[
    (&["password"], SecretKind::Password),
    (&["passwd"], SecretKind::Password),
    (&["pwd"], SecretKind::Password),
    (&["pass"], SecretKind::Password),
    (&["passcode"], SecretKind::Password),
    (&["passphrase"], SecretKind::Password),
    (&["pin"], SecretKind::Password),
    (&["pincode"], SecretKind::Password),
    (&["otp"], SecretKind::Code),
    (&["totp"], SecretKind::Code),
    (&["2fa"], SecretKind::Code),
    (&["mfa"], SecretKind::Code),
    (&["one", "time"], SecretKind::Code),
    (&["onetime"], SecretKind::Code),
    (&["verification", "code"], SecretKind::Code),
    (&["verify", "code"], SecretKind::Code),
    (&["auth", "code"], SecretKind::Code),
    (&["authentication", "code"], SecretKind::Code),
    (&["sms", "code"], SecretKind::Code),
    (&["security", "code"], SecretKind::Card),
    (&["card", "number"], SecretKind::Card),
    (&["card", "no"], SecretKind::Card),
    (&["card", "num"], SecretKind::Card),
    (&["cardnumber"], SecretKind::Card),
    (&["cc", "number"], SecretKind::Card),
    (&["cc", "num"], SecretKind::Card),
    (&["ccnumber"], SecretKind::Card),
    (&["ccnum"], SecretKind::Card),
    (&["cvv"], SecretKind::Card),
    (&["cvv2"], SecretKind::Card),
    (&["cvc"], SecretKind::Card),
    (&["cvc2"], SecretKind::Card),
    (&["csc"], SecretKind::Card),
];

/// The words that make a field secret: the built-in list plus the embedder's extras.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretWords {
    extra: Vec<Vec<String>>,
}

impl SecretWords {
    /// The built-in words plus extra words or phrases ("mot de passe", "kennwort"), which
    /// mark a field as a password.
    pub fn with_extra<S: AsRef<str>>(extra: &[S]) -> Self {
        let extra = extra
            .iter()
            .map(|phrase| words(phrase.as_ref()))
            .filter(|phrase| !phrase.is_empty())
            .collect();
        Self { extra }
    }

    /// Classifies a field (SEC-1).
    pub fn classify(&self, field: &FieldFacts) -> FieldClass {
        let input_type = field.input_type.trim().to_ascii_lowercase();
        if input_type == "password" {
            return FieldClass::Secret(SecretKind::Password);
        }
        for token in field.autocomplete.split_ascii_whitespace() {
            let token = token.to_ascii_lowercase();
            if let Some((_, kind)) = SECRET_AUTOCOMPLETE.iter().find(|(name, _)| *name == token) {
                return FieldClass::Secret(*kind);
            }
        }
        if NOT_TYPED.contains(&input_type.as_str()) {
            return FieldClass::Plain;
        }
        for text in [&field.label, &field.name, &field.id, &field.placeholder] {
            let tokens = words_split_case(text);
            for (phrase, kind) in SECRET_PHRASES {
                let phrase: Vec<String> = phrase.iter().map(|w| (*w).to_owned()).collect();
                if contains_phrase(&tokens, &phrase) {
                    return FieldClass::Secret(*kind);
                }
            }
            if self
                .extra
                .iter()
                .any(|phrase| contains_phrase(&tokens, phrase))
            {
                return FieldClass::Secret(SecretKind::Password);
            }
        }
        FieldClass::Plain
    }
}

/// Classifies a field by the built-in words (SEC-1).
pub fn classify_field(field: &FieldFacts) -> FieldClass {
    SecretWords::default().classify(field)
}

/// Words that make a form a sign-up form, as consecutive words.
const SIGN_UP_PHRASES: &[&[&str]] = &[
    &["sign", "up"],
    &["signup"],
    &["register"],
    &["registration"],
    &["create", "account"],
    &["create", "an", "account"],
    &["create", "your", "account"],
    &["new", "account"],
    &["join"],
    &["get", "started"],
];

/// Whether a field's autocomplete holds `token`.
fn has_token(field: &FieldFacts, token: &str) -> bool {
    field
        .autocomplete
        .split_ascii_whitespace()
        .any(|t| t.eq_ignore_ascii_case(token))
}

/// Whether `field` asks for a new password (SEC-2, issue 16): it is a password field, and
/// its autocomplete says `new-password`, or nothing in its form says `current-password`
/// and the form has another password field (a confirmation) or `form_words` (its submit
/// buttons, name, heading) name a sign-up. `form_passwords` are the form's password
/// fields, `field` among them.
pub fn is_new_password(
    field: &FieldFacts,
    form_passwords: &[FieldFacts],
    form_words: &str,
) -> bool {
    if classify_field(field) != FieldClass::Secret(SecretKind::Password) {
        return false;
    }
    if has_token(field, "new-password") {
        return true;
    }
    if has_token(field, "current-password")
        || form_passwords
            .iter()
            .any(|other| has_token(other, "current-password"))
    {
        return false;
    }
    if form_passwords.len() >= 2 {
        return true;
    }
    let tokens = words_split_case(form_words);
    SIGN_UP_PHRASES.iter().any(|phrase| {
        let phrase: Vec<String> = phrase.iter().map(|w| (*w).to_owned()).collect();
        contains_phrase(&tokens, &phrase)
    })
}

/// Whether the agent's text may be typed into a field (SEC-2, SEC-6): never into a
/// secret one. Conch fills a secret field through the embedder's `SecretFiller` or hands
/// it to the person; the refusal's sentence tells the agent to call browser_handoff.
pub fn typing_verdict(class: FieldClass) -> Verdict {
    match class {
        FieldClass::Plain => Verdict::Allow,
        FieldClass::Secret(_) => Verdict::Refuse(Refusal::new(RefusalCode::SecretField)),
    }
}
