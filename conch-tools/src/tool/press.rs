//! browser_press: a key or chord, on an element or the focused one. Enter in a form's
//! field is judged by the button that would submit the form, and the card shows that
//! button (issue 11, HS-8, HS-2). A press is judged only when it commits (issue 30): keys
//! in a field are never judged by the field's own words, and Enter on a link with an
//! address follows it. browser_type with `submit` judges its Enter here too
//! ([`permit`]), so the two ways of pressing it ask the same question.

use conch_browser::page::Element;
use conch_policy::{ActKind, Chord, Site};

use crate::engine::{self, TargetFacts};
use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;

/// Presses `key` on `reference`, else on the focused element.
pub(crate) async fn run(
    turn: &Turn<'_>,
    key: &str,
    reference: Option<&str>,
) -> Result<Reply, ToolError> {
    let chord = Chord::parse(key).map_err(|_| {
        ToolError::Usage(format!(
            "“{key}” is not a key Conch knows; use a key name like Enter, Tab, Escape, ArrowDown or Control+A."
        ))
    })?;
    let conv = turn.conv();
    let site = turn.site().await?;
    let (element, target) = match reference {
        Some(reference) => {
            let (element, target) = engine::target(conv, reference).await?;
            (Some(element), target)
        }
        None => (None, engine::focused(conv).await?),
    };
    permit(turn, site, chord, element.as_ref(), &target).await?;
    let _step = turn.step().await;
    engine::press(conv, key, element.as_ref()).await?;
    turn.changed(Vec::new()).await
}

/// Runs the permit flow for pressing `chord` on `element` (else the focused element),
/// whose facts are `target`, on `site`: the press's own judging, shared by browser_press
/// and browser_type's `submit` (issue 30).
pub(crate) async fn permit(
    turn: &Turn<'_>,
    site: Site,
    chord: Chord,
    element: Option<&Element>,
    target: &TargetFacts,
) -> Result<(), ToolError> {
    let mut facts = turn.facts(site, target);
    // The act is a press whichever tool presses (browser_type's submit included).
    facts.act = ActKind::Press;
    // Enter in a form's field submits the form: it is judged by the control that will
    // submit it, the form's default button, and the card shows that button (issue 11,
    // HS-8, HS-2).
    let mut shown = None;
    if chord.key() == "Enter"
        && facts.significant_words.is_none()
        && let Some((button, submitter)) = engine::submitter(turn.conv(), element).await?
    {
        // A form that stands in for a button of its own is judged by its context alone:
        // its own text holds every field's and option's words (issue 30).
        let words = if submitter.tag == "form" {
            ""
        } else {
            submitter.words.as_str()
        };
        facts.significant_words = turn.judge(&submitter, words);
        if facts.significant_words.is_some() {
            shown = button;
        }
    }
    facts.keys = Some(chord);
    let card = shown.as_ref().or(element);
    turn.permit(card, facts, false).await
}
