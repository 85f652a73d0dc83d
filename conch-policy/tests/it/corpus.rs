//! Reading the corpora: one case per line, `#` notes, `## ` section headings that are
//! kept in the rendered table.

/// One line of a corpus.
pub(crate) enum Line<'a> {
    /// A section heading, kept in the table.
    Heading(&'a str),
    /// A case.
    Case(&'a str),
}

/// The cases and headings of a corpus, in order.
pub(crate) fn lines(corpus: &str) -> impl Iterator<Item = Line<'_>> {
    corpus.lines().filter_map(|line| {
        if let Some(heading) = line.strip_prefix("## ") {
            Some(Line::Heading(heading))
        } else if line.trim().is_empty() || line.starts_with('#') {
            None
        } else {
            Some(Line::Case(line))
        }
    })
}

/// Renders a corpus as a table: each case, padded, then ` => ` and its decision.
pub(crate) fn table(corpus: &str, decide: impl Fn(&str) -> String) -> String {
    let width = lines(corpus)
        .filter_map(|line| match line {
            Line::Case(case) => Some(case.chars().count()),
            Line::Heading(_) => None,
        })
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for line in lines(corpus) {
        match line {
            Line::Heading(heading) => {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&format!("## {heading}\n"));
            }
            Line::Case(case) => {
                let pad = width - case.chars().count();
                out.push_str(&format!("{case}{} => {}\n", " ".repeat(pad), decide(case)));
            }
        }
    }
    out
}

/// How many cases a corpus has.
pub(crate) fn count(corpus: &str) -> usize {
    lines(corpus)
        .filter(|line| matches!(line, Line::Case(_)))
        .count()
}
