//! The scripts acting runs in the page: describing an element (role, name, field facts),
//! actionability, scrolling it into view, whether the node the pointer meets is the
//! element and what covers it, the focused element, options of a select, and the panel
//! that scrolls. Each runs in the world of the object it is called on (Conch's isolated
//! world for an element reached by a ref), and reads the element's own document and
//! window, never the caller's globals: an element of a same-origin frame lives in the top
//! frame's world.
//!
//! Each script is a file in `js/`, whose header says what it is called with and what it
//! returns (issue 30); the constants here are those files without their headers.
//!
//! Deliberately absent: anything left behind. Each script is a function called on one
//! element or one expression; none installs a global or a listener that outlives it (the
//! pointer's watch removes its listeners when it ends).

use crate::page::script;

/// `describe(el)`: role and accessible name as the snapshot computes them (the shared
/// `roles.js`, pasted before this prelude), tag, type, words, whether it is an editable
/// text field and whether it is disabled, and the facts the secrets rule reads.
/// `reachable(el)`: whether a person could reach it (visible, not inert, not collapsed
/// away or off the page). `revealer(el)`: the control that opens what hides it.
/// `composedContains(a, b)`: whether `b` is `a` or inside it, through shadow roots.
/// `frameFacts(el)`: for a frame element, whether its document is closed to this world.
pub(crate) const PRELUDE: &str = script::body(include_str!("js/prelude.js"));

/// Called on an element with `frame`: `{gone}` or its description with `visible` and
/// `stable` (still over one animation frame when `frame` is true; unchecked otherwise).
pub(crate) const ACTIONABLE: &str = script::body(include_str!("js/actionable.js"));

/// Called on an element: the element the pointer presses, scrolled into view inside every
/// panel and frame that holds it when it is not in view: the element itself, or, when it
/// can't be reached but a label of it can (a styled check box), that label. Null when the
/// element left the document. One call for what were two (issue 11).
pub(crate) const PRESS_TARGET_IN_VIEW: &str =
    script::body(include_str!("js/press_target_in_view.js"));

/// Called on an element with the node the pointer meets: whether that node is the
/// element, inside it (shadow trees included) or inside one of its labels.
pub(crate) const LANDS_ON: &str = script::body(include_str!("js/lands_on.js"));

/// Called on the node the pointer meets instead of the element: the dialog or the fixed,
/// sticky or absolute layer around it (what a person would close), or the node itself.
pub(crate) const BLOCKER: &str = script::body(include_str!("js/blocker.js"));

/// An expression: the focused element, through same-origin frames and shadow roots (a
/// cross-origin frame that holds the focus is returned as itself).
pub(crate) const FOCUSED: &str = script::body(include_str!("js/focused.js"));

/// Called on an element (or a text node, for its element): its description plus, for a
/// frame, whether its document is closed to this world.
pub(crate) const DESCRIBE: &str = script::body(include_str!("js/describe.js"));

/// An expression: marks the dialogs open now, so a description can tell one that opens
/// later (issue 30).
pub(crate) const MARK_DIALOGS: &str = script::body(include_str!("js/mark_dialogs.js"));

/// Called on an element of an out-of-process frame: the watch of its window for the
/// pointer, a function that ends it and says whether the pointer came (issue 31).
pub(crate) const POINTER_WATCH: &str = script::body(include_str!("js/pointer_watch.js"));

/// Called on an element that can't be reached: the control that opens what it is inside,
/// described, with the ref a read gave it (`ref`, a number, or null); null when none is
/// found.
pub(crate) const REVEALER: &str = script::body(include_str!("js/revealer.js"));

/// Called on a `<select>`: picks the options matching `values` by value or label.
pub(crate) const SELECT: &str = script::body(include_str!("js/select.js"));

/// Called on a listbox that is not a `<select>`: the options matching `values`, by their
/// words or `data-value`, as elements (an array).
pub(crate) const LISTBOX_OPTIONS: &str = script::body(include_str!("js/listbox_options.js"));

/// Called on a combobox with `values` and `words`: the options it opened matching the
/// values (an array of elements or nulls), or with `words` the words of those it shows
/// (issue 30: searchable selects, their list often in a portal at the end of body).
pub(crate) const POPUP_OPTIONS: &str = script::body(include_str!("js/popup_options.js"));

/// Called on an element that is not a `<select>` or a list box: whether it opens a list
/// of options (a combobox, or a box that says it pops up a list box).
pub(crate) const OPENS_LIST: &str = script::body(include_str!("js/opens_list.js"));

/// Called on an element: scrolls the nearest ancestor (or itself) that scrolls on the axis
/// by most of its size. `{scrolled: false}` when none does.
pub(crate) const SCROLL_PANEL: &str = script::body(include_str!("js/scroll_panel.js"));

/// Called with how long ago the act began and a bound (ms): a promise that ends when the
/// CSS transitions and animations the act started, and that end on their own, have ended
/// (issue 30: a panel's opening slide), at most the bound.
pub(crate) const ANIMATIONS: &str = script::body(include_str!("js/animations.js"));

/// Called on a field: focuses it, and says whether it now holds the focus.
pub(crate) const FOCUS: &str = script::body(include_str!("js/focus.js"));

/// Called on an element: whether it holds the keyboard focus now, its document's focus
/// included (read in the world of the call, where the page cannot redefine
/// `activeElement` or `hasFocus`).
pub(crate) const HAS_FOCUS: &str = script::body(include_str!("js/has_focus.js"));

/// Whether `this` holds the focus: its document's active element, through shadow roots,
/// is it, and the document has the browser's focus.
const FOCUS_HELD: &str = script::body(include_str!("js/focus_held.js"));

/// Inserts the prelude (with the shared roles and names, `roles.js`) into a script.
pub(crate) fn with_prelude(script: &str) -> String {
    script
        .replace(
            "PRELUDE",
            &format!("{}\n{PRELUDE}", crate::page::world::ROLES),
        )
        .replace("FOCUS_HELD", FOCUS_HELD)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::script::well_formed;

    /// Each act script, with the prelude and the focus check pasted in, is one function
    /// (or expression) with no placeholder left (issue 30).
    #[test]
    fn issue_30_act_scripts_compose_into_whole_functions() {
        let scripts = [
            ACTIONABLE,
            PRESS_TARGET_IN_VIEW,
            LANDS_ON,
            BLOCKER,
            FOCUSED,
            DESCRIBE,
            MARK_DIALOGS,
            REVEALER,
            SELECT,
            LISTBOX_OPTIONS,
            SCROLL_PANEL,
            ANIMATIONS,
            POPUP_OPTIONS,
            OPENS_LIST,
            FOCUS,
            HAS_FOCUS,
            POINTER_WATCH,
        ];
        for script in scripts {
            let composed = with_prelude(script);
            assert!(
                composed.starts_with("function(") || composed.starts_with("(() =>"),
                "{composed}"
            );
            well_formed(&composed).unwrap_or_else(|e| panic!("{e}:\n{composed}"));
        }
        assert!(with_prelude(ACTIONABLE).contains("const describe = (el) =>"));
        assert!(with_prelude(ACTIONABLE).contains("function roleOf("));
        assert!(with_prelude(HAS_FOCUS).contains("doc.hasFocus()"));
    }
}
