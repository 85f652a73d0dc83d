//! browser_form: one permit for the whole form, then each field; a field that can't be
//! filled is skipped and named (FORM-3, FORM-4, FORM-5, HS-7). A box ticked by the form
//! is judged by its words like a click on it; a radio chooses and is never judged
//! (issue 30). Secret fields are filled last, from the
//! person's vault as browser_type fills them ([`vault`]: the saved password, or a new
//! strong one on a sign-up form), never with the agent's value; with nothing in the
//! vault they are skipped and named. Once the person takes the wheel, the fields left are
//! not filled and are named (HAND-8).

use conch_policy::carries;

use crate::call::FormField;
use crate::engine::{self, Pointer, Settling};
use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;
use crate::tool::vault;

/// Fills `fields`.
pub(crate) async fn run(turn: &Turn<'_>, fields: &[FormField]) -> Result<Reply, ToolError> {
    let conv = turn.conv();
    let site = turn.site().await?;
    let values: Vec<&str> = fields.iter().map(|f| f.value.as_str()).collect();
    let mut facts = turn.bare_facts(site.clone());
    let mut targets = Vec::with_capacity(fields.len());
    for field in fields {
        let resolved = engine::target(conv, &field.reference).await;
        if let Ok((_, target)) = &resolved
            && facts.significant_words.is_none()
            && (target.role == "checkbox" || target.role == "radio")
            && is_ticked(&field.value)
        {
            facts.significant_words = turn.judge(target, &target.words);
        }
        targets.push(resolved);
    }
    turn.permit(None, facts, carries(&values)).await?;
    let _step = turn.step().await;
    let mut filled = 0usize;
    let mut skipped: Vec<String> = Vec::new();
    // The fields are filled without waiting after each; the page settles once after the
    // last one.
    let settling = engine::begin_settling(conv).await;
    // Secret fields come last, so the vault sees the username this call typed.
    let mut secrets = Vec::new();
    // The fields left when the person took the wheel: none is filled among their acts.
    let mut left: Vec<&str> = Vec::new();
    for (field, resolved) in fields.iter().zip(targets) {
        let r = &field.reference;
        if !left.is_empty() || (filled + skipped.len() > 0 && turn.person_took_the_wheel()) {
            left.push(r);
            continue;
        }
        let (element, target) = match resolved {
            Ok(found) => found,
            Err(e) => {
                skipped.push(format!("{r}: {e}"));
                continue;
            }
        };
        let outcome = if target.secret {
            secrets.push((r, element, target));
            continue;
        } else if target.is_file_input() || engine::is_file_input(&element).await.unwrap_or(false) {
            Err(ToolError::Usage(
                "a file box: put files into it with browser_upload".to_owned(),
            ))
        } else if target.role == "checkbox" || target.role == "radio" {
            let want = is_ticked(&field.value);
            match engine::is_checked(&element).await {
                Ok(now) if now == want => Ok(()),
                Ok(_) if !want && target.role == "radio" => Err(ToolError::Usage(
                    "a radio can't be unticked; tick another one of its group".to_owned(),
                )),
                Ok(_) => engine::click(&element, Pointer::Click, Settling::Later).await,
                Err(e) => Err(e),
            }
        } else if target.tag == "select" || target.role == "listbox" {
            engine::select(
                &element,
                std::slice::from_ref(&field.value),
                Settling::Later,
            )
            .await
            .map(|_| ())
        } else {
            engine::type_text(&element, &field.value, Settling::Later).await
        };
        match outcome {
            Ok(()) => filled += 1,
            Err(e) => skipped.push(format!("{r}: {}", e.to_string().trim_end_matches('.'))),
        }
    }
    // A secret field: from the vault (SEC-2, issue 16), never the agent's value; with
    // nothing there it is skipped and named (FORM-3).
    let mut from_vault = Vec::new();
    for (r, element, target) in secrets {
        if !left.is_empty() || turn.person_took_the_wheel() {
            left.push(r);
            continue;
        }
        let Some(secret) = vault::ask(turn, &site, &element, &target).await else {
            skipped.push(format!(
                "{r}: a password, code or card field: Conch never types into it; call browser_type on it (or browser_handoff)"
            ));
            continue;
        };
        match vault::fill(&element, &secret).await {
            Ok(sentence) => {
                filled += 1;
                from_vault.push(format!("{r}: {sentence}"));
            }
            Err(e) => skipped.push(format!("{r}: {}", e.to_string().trim_end_matches('.'))),
        }
    }
    if let Some(settling) = settling {
        engine::finish_settling(settling).await;
    }
    let mut lines = vec![format!(
        "Filled {filled} of {} field{}.",
        fields.len(),
        if fields.len() == 1 { "" } else { "s" }
    )];
    lines.extend(from_vault);
    if !skipped.is_empty() {
        lines.push(format!("Skipped: {}.", skipped.join("; ")));
    }
    if !left.is_empty() {
        lines.push(format!(
            "The person took the wheel, so Conch stopped before {}; your next call waits until they hand it back.",
            left.join(", ")
        ));
    }
    turn.changed(lines).await
}

/// Whether a form value ticks a box.
fn is_ticked(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "true" | "yes" | "on" | "checked" | "1"
    )
}
