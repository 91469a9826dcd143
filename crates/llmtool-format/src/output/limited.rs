//! Matching a model's answer to one of a `limited` output's allowed values.

/// The allowed value that `answer` means, if any.
///
/// The answer is matched leniently, the way people read one: surrounding whitespace, quotes
/// (straight, curly or backticks) and final punctuation are ignored, and case does not count.
/// `"Yes."`, `'yes'` and ` YES!` all mean `yes`. Anything more (`"Yes, because..."`) does not
/// match, so that the run can ask again.
pub fn match_limited<'a>(answer: &str, allowed: &'a [String]) -> Option<&'a str> {
    let wanted = normalize(answer);
    allowed.iter().find(|value| normalize(value) == wanted).map(String::as_str)
}

fn normalize(text: &str) -> String {
    const QUOTES: &[char] = &['"', '\'', '`', '“', '”', '‘', '’', '«', '»', '*'];
    const FINAL: &[char] = &['.', '!', '?', ',', ';', ':', '。', '！', '？'];
    let mut text = text.trim();
    loop {
        let before = text;
        text = text.trim_end_matches(FINAL).trim();
        if let Some(inner) = text.strip_prefix(QUOTES).and_then(|t| t.strip_suffix(QUOTES)) {
            text = inner.trim();
        }
        if text == before {
            break;
        }
    }
    text.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed() -> Vec<String> {
        ["yes", "no", "Not sure"].map(String::from).to_vec()
    }

    #[test]
    fn lenient_matches() {
        for answer in ["yes", " Yes.", "\"YES\"", "'yes'!", "`yes`", "“Yes”.", "**yes**", "yes\n"]
        {
            assert_eq!(match_limited(answer, &allowed()), Some("yes"), "{answer:?}");
        }
        assert_eq!(match_limited("not SURE?", &allowed()), Some("Not sure"));
    }

    #[test]
    fn no_match_for_more_than_the_value() {
        for answer in ["yes, because", "maybe", "", "y e s"] {
            assert_eq!(match_limited(answer, &allowed()), None, "{answer:?}");
        }
    }
}
