//! Names for converted tools and their parameters: ASCII snake_case that every target accepts.
//!
//! The strictest rules among the targets decide: OpenAI and Anthropic take `[a-zA-Z0-9_-]`, up
//! to 64 characters; Gemini also wants a letter or `_` first; MCP allows up to 128 but clients
//! prefix server names, so 64 is kept there too; gptel recommends snake_case. A slug of
//! lowercase letters, digits and `_`, starting with a letter, satisfies all of them.

use std::collections::HashSet;

/// The longest name any target is given.
pub const MAX_NAME: usize = 64;

/// `text` as a snake_case ASCII name: other scripts transliterated, every run of other
/// characters one `_`, a letter first (`tool_` is put before a leading digit, and stands alone
/// for a name with no letters or digits), at most `max` characters (cut at a `_` when one is
/// near the end).
pub fn slug(text: &str, max: usize) -> String {
    let ascii = deunicode::deunicode(text);
    let mut out = String::with_capacity(ascii.len());
    for c in ascii.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() {
        out.push_str("tool");
    } else if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "tool_");
    }
    truncate(&mut out, max);
    out
}

/// Whether `name` is accepted as is by every target: `[A-Za-z_][A-Za-z0-9_-]*`, 1 to 64 long.
pub fn is_portable(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Makes `names` distinct, in order: a repeat gets `_2`, `_3`… (shortened to stay within
/// `max`). The first of equal names keeps it, so the result only depends on the order given.
pub fn distinct(names: &mut [String], max: usize) {
    let mut taken: HashSet<String> = HashSet::new();
    for name in names.iter_mut() {
        if taken.insert(name.clone()) {
            continue;
        }
        for n in 2.. {
            let suffix = format!("_{n}");
            let mut candidate = name.clone();
            truncate(&mut candidate, max.saturating_sub(suffix.len()));
            candidate.push_str(&suffix);
            if taken.insert(candidate.clone()) {
                *name = candidate;
                break;
            }
        }
    }
}

fn truncate(name: &mut String, max: usize) {
    if name.len() <= max {
        return;
    }
    name.truncate(max);
    // Prefer ending at a word boundary when one is in the last quarter.
    if let Some(cut) = name.rfind('_').filter(|&cut| cut >= max * 3 / 4) {
        name.truncate(cut);
    }
    while name.ends_with('_') {
        name.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_portable_snake_case() {
        assert_eq!(slug("Teach Me Anything", MAX_NAME), "teach_me_anything");
        assert_eq!(slug("  SQL -- Assistant!! ", MAX_NAME), "sql_assistant");
        assert_eq!(slug("Résumé de texto", MAX_NAME), "resume_de_texto");
        assert_eq!(slug("3D printer", MAX_NAME), "tool_3d_printer");
        assert_eq!(slug("???", MAX_NAME), "tool");
        let korean = slug("이메일 답장 도우미", MAX_NAME);
        assert!(is_portable(&korean) && korean.contains('_'), "{korean}");
        let long = slug(&"word ".repeat(40), MAX_NAME);
        assert!(long.len() <= MAX_NAME && !long.ends_with('_'), "{long}");
        for text in ["Teach Me Anything", "이메일 답장 도우미", "3D", "", "a\u{0}b", "🙂 emoji"]
        {
            assert!(is_portable(&slug(text, MAX_NAME)), "{text:?}");
        }
    }

    #[test]
    fn repeats_get_numbered_within_the_limit() {
        let mut names: Vec<String> =
            ["a", "b", "a", "a", "a_2"].iter().map(ToString::to_string).collect();
        distinct(&mut names, MAX_NAME);
        assert_eq!(names, ["a", "b", "a_2", "a_3", "a_2_2"]);
        let long = "x".repeat(MAX_NAME);
        let mut names = vec![long.clone(), long];
        distinct(&mut names, MAX_NAME);
        assert_eq!(names[1].len(), MAX_NAME);
        assert!(names[1].ends_with("_2"));
    }
}
