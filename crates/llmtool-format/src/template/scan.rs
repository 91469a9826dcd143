//! Finding `{{name}}` placeholders in a prompt.

use std::ops::Range;
use std::sync::LazyLock;

use memchr::memmem;

/// One `{{...}}` in a prompt: its byte range (braces included) and its trimmed inner text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder<'a> {
    pub range: Range<usize>,
    pub name: &'a str,
}

/// Whether `name` holds `{{` or `}}`, which a variable's name may not: the prompt could not
/// name it. (A byte scan: `str::contains` prepares a substring search each call, which cost
/// more than the short names it looks through.)
pub fn holds_braces(name: &str) -> bool {
    name.as_bytes().windows(2).any(|pair| matches!(pair, b"{{" | b"}}"))
}

/// Every `{{...}}` of `prompt`, left to right, whether or not it names a variable.
///
/// The inner text is trimmed (`{{ topic }}` names `topic`). In a run of three or more opening
/// braces the last two open the placeholder, so `{{{x}}}` is the placeholder `x` between a
/// literal `{` and `}`. An inner text that is empty or holds `{{` is not a placeholder.
pub fn placeholders(prompt: &str) -> impl Iterator<Item = Placeholder<'_>> {
    // The two searchers are prepared once for the process, not once a prompt.
    static OPENER: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(b"{{"));
    static CLOSER: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(b"}}"));
    let (opener, closer) = (&*OPENER, &*CLOSER);
    let bytes = prompt.as_bytes();
    let mut from = 0;
    std::iter::from_fn(move || {
        loop {
            let mut open = from + opener.find(&bytes[from..])?;
            while bytes.get(open + 2) == Some(&b'{') {
                open += 1;
            }
            let inner_start = open + 2;
            let close = inner_start + closer.find(&bytes[inner_start..])?;
            let inner = &prompt[inner_start..close];
            if let Some(nested) = memmem::rfind(inner.as_bytes(), b"{{") {
                // `{{a {{b}}`: the placeholder is the innermost one.
                from = inner_start + nested;
                continue;
            }
            from = close + 2;
            let name = inner.trim();
            if !name.is_empty() {
                return Some(Placeholder { range: open..close + 2, name });
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(prompt: &str) -> Vec<(&str, Range<usize>)> {
        placeholders(prompt).map(|p| (p.name, p.range)).collect()
    }

    #[test]
    fn finds_trimmed_names_with_spaces_and_any_script() {
        assert_eq!(
            names("a {{x}} b {{ variable name 1 }}"),
            [("x", 2..7), ("variable name 1", 10..31)]
        );
        assert_eq!(names("{{주제}}"), [("주제", 0..10)]);
    }

    #[test]
    fn odd_braces() {
        assert_eq!(names("{{{x}}}"), [("x", 1..6)]);
        assert_eq!(names("{{}} {{ }} {{x"), []);
        assert_eq!(names("{{a {{b}}"), [("b", 4..9)]);
        assert_eq!(names("}}{{a}}"), [("a", 2..7)]);
    }

    #[test]
    fn braces_in_a_name_are_two_of_a_kind_together() {
        for name in ["{{x", "x}}", "a{{b", "}}", "{{{", "주{{제"] {
            assert!(holds_braces(name), "{name}");
        }
        for name in ["", "{", "}", "{x}", "}{", "x{ {y", "주제"] {
            assert!(!holds_braces(name), "{name}");
        }
    }
}
