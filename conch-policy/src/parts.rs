//! Long pages in parts (SNAP-8, SNAP-10, AMB-4).
//!
//! The snapshot text is cut between lines into parts of at most [`PART_CHARS`]
//! characters; the parts joined back are the text exactly. A single line longer than the
//! limit is cut at a character boundary (never inside a UTF-8 sequence), so no part is
//! ever over the limit. Characters are Unicode scalar values, as Rust's `chars` counts.

/// At most this many characters of page content in one part (SNAP-8, TOOL-12).
pub const PART_CHARS: usize = 16_000;

/// At most this many characters in the first look at a new page (SNAP-6, issue 11): what
/// an open, a new tab or an act that loads a new document returns instead of a whole
/// part. A page whose snapshot fits is shown whole; a longer one is shaped to its
/// controls, links, headings and the top of its text. Most of what an agent reads is
/// these first looks, so this bound is most of what a journey costs in model context.
pub const FIRST_LOOK_CHARS: usize = 5_000;

/// Cuts `text` into parts of at most [`PART_CHARS`] characters. See [`page_parts_within`].
pub fn page_parts(text: &str) -> Vec<&str> {
    page_parts_within(text, PART_CHARS)
}

/// Cuts `text` into parts of at most `limit` characters (at least one), between lines
/// where a line fits, inside an over-long line at a character boundary where it doesn't.
/// An empty text is one empty part, so part 1 always exists.
pub fn page_parts_within(text: &str, limit: usize) -> Vec<&str> {
    let limit = limit.max(1);
    let mut parts = Vec::new();
    let mut start = 0; // byte offset where the current part begins
    let mut chars_in_part = 0;
    let mut pos = 0; // byte offset of the next line
    for line in text.split_inclusive('\n') {
        let line_chars = line.chars().count();
        if chars_in_part + line_chars <= limit {
            chars_in_part += line_chars;
            pos += line.len();
            continue;
        }
        // The line doesn't fit: close the current part first, if it has anything.
        if chars_in_part > 0 {
            parts.push(&text[start..pos]);
            start = pos;
        }
        if line_chars <= limit {
            chars_in_part = line_chars;
            pos += line.len();
            continue;
        }
        // A line longer than a part: cut it every `limit` characters.
        let mut rest = line;
        while rest.chars().count() > limit {
            let cut = rest
                .char_indices()
                .nth(limit)
                .map_or(rest.len(), |(i, _)| i);
            parts.push(&rest[..cut]);
            rest = &rest[cut..];
        }
        start = pos + line.len() - rest.len();
        chars_in_part = rest.chars().count();
        pos += line.len();
    }
    if chars_in_part > 0 || parts.is_empty() {
        parts.push(&text[start..]);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snap_8_lines_are_kept_whole() {
        let parts = page_parts_within("aaa\nbbb\nccc\n", 8);
        assert_eq!(parts, ["aaa\nbbb\n", "ccc\n"]);
    }

    #[test]
    fn snap_10_long_line_is_cut_at_char_boundary() {
        let parts = page_parts_within("ééééé", 2);
        assert_eq!(parts, ["éé", "éé", "é"]);
    }

    #[test]
    fn snap_8_empty_text_is_one_part() {
        assert_eq!(page_parts(""), [""]);
    }
}
