//! Every refusal's sentence (TOOL-15, NET-10).

use conch_policy::{Refusal, RefusalCode};

/// TOOL-15, NET-10: every refusal is one plain sentence of at most 300 characters that
/// names a next step, and no sentence carries a port or address.
#[test]
fn tool_15_every_refusal_names_a_next_step() {
    let mut table = String::new();
    for code in RefusalCode::ALL {
        for refusal in [Refusal::new(*code), Refusal::about(*code, "cv.pdf")] {
            let sentence = refusal.sentence();
            assert!(!sentence.is_empty());
            assert!(sentence.chars().count() <= 300, "{code}: {sentence}");
            assert!(sentence.ends_with('.'), "{code}: {sentence}");
            let next_step = [
                "try", "use", "call", "ask", "take", "pick", "close", "carry on", "check", "say",
                "copy", "upload", "give", "wait",
            ]
            .iter()
            .any(|verb| sentence.to_lowercase().contains(verb));
            assert!(next_step, "{code}: {sentence}");
        }
        let sentence = Refusal::new(*code).sentence();
        if matches!(
            code,
            RefusalCode::GatewayOrigin
                | RefusalCode::LocalApp
                | RefusalCode::PrivateNetwork
                | RefusalCode::LinkLocal
                | RefusalCode::CloudMetadata
                | RefusalCode::NonPublicAddress
        ) {
            assert!(
                !sentence.chars().any(|c| c.is_ascii_digit()),
                "{code}: {sentence}"
            );
        }
        table.push_str(&format!("{:<27} {sentence}\n", code.as_str()));
    }
    insta::assert_snapshot!("refusals", table);
}
