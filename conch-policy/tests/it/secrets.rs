//! Secret fields and the keys pressed on them (SEC-1, SEC-2, SEC-5, AMB-13).

use conch_policy::{
    Chord, FieldClass, FieldFacts, RefusalCode, SecretKind, SecretWords, classify_field,
    is_new_password, key_verdict_on_secret, typing_verdict,
};

use crate::corpus::table;

const SECRETS: &str = include_str!("../fixtures/secrets.txt");
const KEYS: &str = include_str!("../fixtures/keys.txt");

fn field(line: &str) -> FieldFacts {
    let cols: Vec<String> = line.split('|').map(|c| c.trim().to_owned()).collect();
    let col = |i: usize| cols.get(i).cloned().unwrap_or_default();
    FieldFacts {
        input_type: col(0),
        autocomplete: col(1),
        label: col(2),
        name: col(3),
        id: col(4),
        placeholder: col(5),
    }
}

fn show(class: FieldClass) -> String {
    match class {
        FieldClass::Plain => "-".to_owned(),
        FieldClass::Secret(kind) => format!("SECRET ({kind:?})").to_lowercase(),
    }
}

/// SEC-1, AMB-13: every field description in the corpus, by the built-in words and with
/// extra words ("mot de passe", "kennwort").
#[test]
fn sec_1_secret_field_table() {
    let extra = SecretWords::with_extra(&["mot de passe", "kennwort"]);
    let rendered = table(SECRETS, |line| {
        let f = field(line);
        let builtin = classify_field(&f);
        let with_extra = extra.classify(&f);
        if with_extra == builtin {
            show(builtin)
        } else {
            format!("{}   [with extras: {}]", show(builtin), show(with_extra))
        }
    });
    insta::assert_snapshot!("secrets", rendered);
}

/// SEC-1: the requirement's variants, one by one.
#[test]
fn sec_1_classifier_cases() {
    let class = |f: FieldFacts| classify_field(&f);
    assert_eq!(
        class(FieldFacts {
            input_type: "password".into(),
            ..FieldFacts::default()
        }),
        FieldClass::Secret(SecretKind::Password)
    );
    for token in [
        "one-time-code",
        "current-password",
        "new-password",
        "cc-number",
        "cc-csc",
        "cc-exp",
        "cc-exp-month",
        "cc-exp-year",
    ] {
        let f = FieldFacts {
            input_type: "text".into(),
            autocomplete: token.into(),
            ..FieldFacts::default()
        };
        assert!(class(f).is_secret(), "{token}");
    }
    let cc_name = FieldFacts {
        autocomplete: "cc-name".into(),
        ..FieldFacts::default()
    };
    assert!(!class(cc_name).is_secret());
    for label in [
        "Password",
        "Passcode",
        "PIN",
        "One-time code",
        "Verification code",
        "Card number",
        "Security code",
        "CVV",
        "CVC",
    ] {
        let f = FieldFacts {
            input_type: "text".into(),
            label: label.into(),
            ..FieldFacts::default()
        };
        assert!(class(f).is_secret(), "{label}");
    }
}

/// SEC-2, SEC-6: the agent's text never goes into a secret field.
#[test]
fn sec_2_typing_into_secret_is_refused() {
    assert!(typing_verdict(FieldClass::Plain).is_allowed());
    let refused = typing_verdict(FieldClass::Secret(SecretKind::Card));
    let refusal = refused.refusal().unwrap();
    assert_eq!(refusal.code(), RefusalCode::SecretField);
    assert!(refusal.sentence().contains("browser_handoff"));
}

/// SEC-5, AMB-13, HS-8: which keys may go to a secret field, and which presses are clicks.
#[test]
fn sec_5_keys_on_secret_table() {
    let rendered = table(KEYS, |text| {
        let chord = Chord::parse(text).unwrap();
        let verdict = key_verdict_on_secret(&chord);
        let activates = if chord.activates() {
            "   (activates: judged as a click)"
        } else {
            ""
        };
        format!("{:<10}{activates}", verdict.code())
            .trim_end()
            .to_owned()
    });
    insta::assert_snapshot!("keys", rendered);
}

/// SEC-5: Control+V is refused, Tab works.
#[test]
fn sec_5_control_v_refused_tab_allowed() {
    let verdict = key_verdict_on_secret(&Chord::parse("Control+V").unwrap());
    let refusal = verdict.refusal().unwrap();
    assert_eq!(refusal.code(), RefusalCode::SecretKey);
    assert_eq!(refusal.subject(), Some("Control+V"));
    assert!(key_verdict_on_secret(&Chord::parse("Tab").unwrap()).is_allowed());
}

/// A password field as the form shows it.
fn password(autocomplete: &str, label: &str) -> FieldFacts {
    FieldFacts {
        input_type: "password".to_owned(),
        autocomplete: autocomplete.to_owned(),
        label: label.to_owned(),
        ..FieldFacts::default()
    }
}

/// SEC-2, issue 16: which password fields ask for a new password, so the vault may make
/// one: autocomplete new-password, or a sign-up form's field (a confirmation beside it or
/// sign-up words), never a sign-in form's or a code field.
#[test]
fn sec_2_a_new_password_field_is_told_from_a_sign_in_one() {
    let new = password("new-password", "Choose a password");
    assert!(is_new_password(
        &new,
        std::slice::from_ref(&new),
        "Continue"
    ));
    let current = password("current-password", "Password");
    assert!(!is_new_password(
        &current,
        std::slice::from_ref(&current),
        "Sign up"
    ));
    // A bare password field: by its form's words.
    let bare = password("", "Password");
    assert!(is_new_password(
        &bare,
        std::slice::from_ref(&bare),
        "Create an account"
    ));
    assert!(is_new_password(
        &bare,
        std::slice::from_ref(&bare),
        "signUpForm"
    ));
    assert!(!is_new_password(
        &bare,
        std::slice::from_ref(&bare),
        "Sign in"
    ));
    assert!(!is_new_password(
        &bare,
        std::slice::from_ref(&bare),
        "Log in Sign upgrade"
    ));
    // A password and its confirmation.
    let again = password("", "Repeat password");
    assert!(is_new_password(
        &bare,
        &[bare.clone(), again.clone()],
        "Continue"
    ));
    // A change-password form names the current one: only the new fields are new.
    let change = [current.clone(), bare.clone(), again];
    assert!(!is_new_password(&bare, &change, "Save"));
    assert!(is_new_password(&new, &[current, new.clone()], "Save"));
    // A code field is never a new password.
    let code = FieldFacts {
        autocomplete: "one-time-code new-password".to_owned(),
        label: "Code".to_owned(),
        ..FieldFacts::default()
    };
    assert!(!is_new_password(
        &code,
        std::slice::from_ref(&code),
        "Sign up"
    ));
}
