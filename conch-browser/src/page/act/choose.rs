//! Picking options of a `<select>`, a listbox, or the list a combobox opens (GES-9;
//! issue 30: MUI Autocomplete, Quasar q-select, react-select, their lists often in a
//! portal at the end of body).

use std::time::Duration;

use serde_json::{Value, json};

use super::call::{Desc, call_on, call_on_handle, describe};
use super::pointer::click;
use super::ready::{Still, settled, wait_actionable};
use super::{ActError, ActOptions, Done, How, js, with_prelude};
use crate::page::Element;
use crate::page::settle::Settled;

/// Picks the options of a `<select>`, listbox or combobox `el` by label or value (GES-9).
/// Returns the labels picked.
///
/// # Errors
/// [`ActError::NotSelect`], [`ActError::NoOption`], [`ActError::OneChoice`], or as
/// [`click`].
pub async fn select(
    el: &Element,
    values: &[String],
    options: &ActOptions,
) -> Result<(Done, Vec<String>), ActError> {
    let desc = wait_actionable(el, options, true, Still::Unchecked).await?;
    let values_json: Vec<Value> = values.iter().cloned().map(Value::String).collect();
    if desc.tag == "select" {
        let mut picked = Vec::new();
        let done = settled(&el.page, options, async {
            let answer = call_on(
                &el.frame,
                &el.object_id,
                js::SELECT,
                &[Value::Array(values_json.clone())],
                &el.reference,
            )
            .await?;
            picked = option_answer(&answer, el, &desc)?;
            Ok(())
        })
        .await?;
        return Ok((done, picked));
    }
    if desc.role != "listbox" {
        let opens = call_on(&el.frame, &el.object_id, js::OPENS_LIST, &[], &el.reference).await?;
        if opens == Value::Bool(true) {
            // Boxed: its clicks and typing would swell every caller's future.
            return Box::pin(from_popup(el, &desc, values, options)).await;
        }
        return Err(ActError::NotSelect {
            reference: el.reference.clone(),
            what: desc.what_capital(),
        });
    }
    let list = call_on_handle(
        &el.frame,
        &el.object_id,
        js::LISTBOX_OPTIONS,
        &[Value::Array(values_json)],
        &el.reference,
    )
    .await?
    .ok_or_else(|| ActError::Script("no options".to_owned()))?;
    let mut targets = Vec::new();
    for (i, value) in values.iter().enumerate() {
        let item = call_on_handle(
            &el.frame,
            &list,
            "function(i) { return this[i]; }",
            &[json!(i)],
            &el.reference,
        )
        .await?;
        match item {
            Some(object_id) => targets.push((
                value.clone(),
                Element {
                    reference: el.reference.clone(),
                    page: el.page.clone(),
                    frame: el.frame.clone(),
                    object_id,
                    offset: el.offset,
                },
            )),
            None => {
                return Err(ActError::NoOption {
                    missing: format!("“{value}”"),
                    choices: "the options the page shows".to_owned(),
                });
            }
        }
    }
    let mut done = None;
    for (_, option) in &targets {
        done = Some(click(option, How::Click, options).await?);
    }
    let picked = targets.into_iter().map(|(v, _)| v).collect();
    let done = done.unwrap_or(Done {
        settled: Settled {
            waited: Duration::ZERO,
            quiet: true,
            changing: false,
        },
        through_dialog: false,
        at: None,
    });
    Ok((done, picked))
}

/// Picks each value in the list a combobox opens, as a person does (issue 30): the
/// option is pressed when the list shows it; otherwise the combobox is pressed to open
/// it, and when the option is still not there and the combobox takes text, the value is
/// typed to filter the list. Gives the words of the options pressed.
async fn from_popup(
    el: &Element,
    desc: &Desc,
    values: &[String],
    options: &ActOptions,
) -> Result<(Done, Vec<String>), ActError> {
    let mut done = None;
    let mut picked = Vec::new();
    for value in values {
        let mut option = popup_option(el, value).await?;
        if option.is_none() {
            click(el, How::Click, options).await?;
            option = popup_option(el, value).await?;
        }
        if option.is_none() && desc.editable {
            super::type_text(el, value, options).await?;
            option = popup_option(el, value).await?;
        }
        let Some(option) = option else {
            let shown = call_on(
                &el.frame,
                &el.object_id,
                &with_prelude(js::POPUP_OPTIONS),
                &[json!([]), json!(true)],
                &el.reference,
            )
            .await?;
            let choices: Vec<String> = shown
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(|s| format!("“{s}”"))
                        .collect()
                })
                .unwrap_or_default();
            return Err(ActError::NoOption {
                missing: format!("“{value}”"),
                choices: if choices.is_empty() {
                    "none (the list it opens shows no option)".to_owned()
                } else {
                    choices.join(", ")
                },
            });
        };
        // An option's name, else its words (a plain list item has no name of its own).
        let words = describe(&option.frame, &option.object_id, &el.reference)
            .await
            .ok()
            .map(|d| if d.name.is_empty() { d.words } else { d.name })
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| value.clone());
        done = Some(click(&option, How::Click, options).await?);
        picked.push(words);
    }
    let done = done.unwrap_or(Done {
        settled: Settled {
            waited: Duration::ZERO,
            quiet: true,
            changing: false,
        },
        through_dialog: false,
        at: None,
    });
    Ok((done, picked))
}

/// The option matching `value` in the list the combobox `el` opened, if it shows one.
async fn popup_option(el: &Element, value: &str) -> Result<Option<Element>, ActError> {
    let Some(list) = call_on_handle(
        &el.frame,
        &el.object_id,
        &with_prelude(js::POPUP_OPTIONS),
        &[json!([value]), json!(false)],
        &el.reference,
    )
    .await?
    else {
        return Ok(None);
    };
    let item = call_on_handle(
        &el.frame,
        &list,
        "function(i) { return this[i]; }",
        &[json!(0)],
        &el.reference,
    )
    .await?;
    Ok(item.map(|object_id| Element {
        reference: el.reference.clone(),
        page: el.page.clone(),
        frame: el.frame.clone(),
        object_id,
        offset: el.offset,
    }))
}

fn option_answer(answer: &Value, el: &Element, desc: &Desc) -> Result<Vec<String>, ActError> {
    let quote = |v: &Value| -> String {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(|s| format!("“{s}”"))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    if let Some(missing) = answer.get("missing") {
        return Err(ActError::NoOption {
            missing: quote(missing),
            choices: answer.get("choices").map(quote).unwrap_or_default(),
        });
    }
    if answer.get("tooMany").is_some() {
        return Err(ActError::OneChoice {
            reference: el.reference.clone(),
            what: desc.what_capital(),
        });
    }
    Ok(answer
        .get("picked")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default())
}
