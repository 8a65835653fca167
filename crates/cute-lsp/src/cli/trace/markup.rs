//! Text into markup: every label of the picture comes from the user's code
//! (barrier names, messages quoting it), so each goes through `escape`
//! before it reaches SVG or HTML, in text and in attribute values alike.

/// `text` with the five characters that mean something in XML and HTML
/// written as references.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// At most `max` characters of `text`, the cut marked with an ellipsis.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A barrier as a lane names it: without the backticks that mark code in
/// messages.
pub fn plain(name: &str) -> String {
    name.replace('`', "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(escape(r#"<b a="1">&'</b>"#), "&lt;b a=&quot;1&quot;&gt;&amp;&#39;&lt;/b&gt;");
        assert_eq!(escape("a\u{1}b"), "a\u{fffd}b");
    }

    #[test]
    fn clips_on_characters() {
        assert_eq!(clip("warps 1..3", 20), "warps 1..3");
        assert_eq!(clip("ééééé", 3), "éé…");
    }
}
