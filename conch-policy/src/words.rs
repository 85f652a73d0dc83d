//! Splitting text into words for the word rules (high stakes, secret fields, consent
//! banners). Shared so every rule reads words the same way.

/// Characters that render as nothing and would split or hide a word: zero-width space,
/// non-joiner and joiner, word joiner, soft hyphen, byte-order mark, and the bidi
/// controls. They are removed before words are read, so "Pl\u{200B}ace ord\u{200B}er"
/// reads as "Place order".
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

/// Lowercase words: maximal runs of letters and digits, after invisible characters are
/// removed. Every other character separates words.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars().filter(|c| !is_invisible(*c)) {
        if c.is_alphanumeric() {
            current.extend(c.to_lowercase());
        } else if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Like [`words`], but also splits camelCase and PascalCase (`cardNumber` → card number,
/// `OTPCode` → otp code), for attribute values such as `name` and `id`.
pub(crate) fn words_split_case(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().filter(|c| !is_invisible(*c)).collect();
    let mut spaced = String::with_capacity(chars.len() + 8);
    for (i, c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).and_then(|p| chars.get(p));
        let next = chars.get(i + 1);
        if c.is_uppercase() {
            let after_lower = prev.is_some_and(|p| p.is_lowercase());
            let acronym_end =
                prev.is_some_and(|p| p.is_uppercase()) && next.is_some_and(|n| n.is_lowercase());
            if after_lower || acronym_end {
                spaced.push(' ');
            }
        }
        spaced.push(*c);
    }
    words(&spaced)
}

/// Whether `needle` (a sequence of words) occurs in `haystack` as consecutive words.
pub(crate) fn contains_phrase(haystack: &[String], needle: &[String]) -> bool {
    !needle.is_empty()
        && haystack
            .windows(needle.len())
            .any(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_on_everything_but_letters_and_digits() {
        assert_eq!(
            words("Pay-now!  Place_ORDER"),
            ["pay", "now", "place", "order"]
        );
        assert_eq!(words("Pl\u{200B}ace ord\u{200B}er"), ["place", "order"]);
    }

    #[test]
    fn camel_case_splits() {
        assert_eq!(words_split_case("cardNumber"), ["card", "number"]);
        assert_eq!(words_split_case("OTPCode"), ["otp", "code"]);
        assert_eq!(words_split_case("user_pwd"), ["user", "pwd"]);
        assert_eq!(words_split_case("cvv2"), ["cvv2"]);
    }
}
