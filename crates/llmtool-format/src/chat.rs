//! Chat prompts: a tool marked `"x-chat": true` is sent as messages. Its prompt is split at
//! role lines (a line that is only `system:`, `developer:`, `user:`, `assistant:` or `tool:`,
//! ended by `\n` or `\r\n`), each turn running to the next role line; a prompt without the mark is one user message,
//! whatever lines it holds.
//!
//! The split is made on the template, before values go in, so a value can never start a turn:
//! when a chat is written out as one text again (what `render` prints, what the run log
//! keeps), a line of a turn that would read as a role line is written with a backslash before
//! it (`\user:`), and reading the text back takes one backslash off. [`join`] and [`split`]
//! are exact inverses (see docs/format.md, "Chat prompts").

use std::borrow::Cow;
use std::ops::Range;

/// The roles a role line may name.
pub const ROLES: [&str; 5] = ["system", "developer", "user", "assistant", "tool"];

/// The role a tool's prompt is sent as when it is not a chat, and the role of text before a
/// chat's first role line.
pub const USER: &str = "user";

/// One message of a chat: its role (one of [`ROLES`]) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    pub role: &'static str,
    pub text: String,
}

impl Turn {
    pub fn new(role: &'static str, text: impl Into<String>) -> Self {
        Self { role, text: text.into() }
    }
}

/// A turn as it is written in a prompt: its role, where its role line is (an empty range at
/// the start for text before the first role line) and its text, escapes taken off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenTurn {
    pub role: &'static str,
    pub role_line: Range<usize>,
    /// Whether the turn has a role line (the text before the first one has none).
    pub marked: bool,
    pub text: String,
}

/// The role `line` (without its line break) opens, if it is a role line.
pub fn role_of(line: &str) -> Option<&'static str> {
    let name = line.strip_suffix(':')?;
    ROLES.into_iter().find(|role| *role == name)
}

/// The role `line` opens, if it is a role line; the line may end with its line break, `\n`
/// or `\r\n` (a prompt written with Windows line ends splits as one written with `\n`).
pub fn line_role(line: &str) -> Option<&'static str> {
    role_of(without_line_end(line))
}

/// `line` without the line break it ends with, if any: `\n`, `\r\n`, or a `\r` left where
/// the text was split at `\n`.
fn without_line_end(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

/// Whether `line` is a role line with one or more backslashes before it: a line of a turn's
/// text that reads as a role line once one backslash is taken off.
fn is_escaped(line: &str) -> bool {
    let bare = line.trim_start_matches('\\');
    bare.len() < line.len() && line_role(bare).is_some()
}

/// `line` as a turn's text holds it: one backslash taken off a line that reads as a role line
/// once it is ([`escape`] put it there).
pub fn unescaped(line: &str) -> &str {
    if is_escaped(line) { &line[1..] } else { line }
}

/// What opens turn `index` of a written chat: the blank line that ends the turn before it,
/// then this turn's role line.
pub fn role_line(index: usize, role: &str) -> String {
    let gap = if index == 0 { "" } else { "\n\n" };
    format!("{gap}{role}:\n")
}

/// `text` as a turn's text is written in a chat: each line that would read as a role line
/// gets one more backslash before it.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.split('\n').any(|line| line_role(line).is_some() || is_escaped(line)) {
        return Cow::Borrowed(text);
    }
    let lines: Vec<Cow<'_, str>> = text
        .split('\n')
        .map(|line| {
            if line_role(line).is_some() || is_escaped(line) {
                Cow::Owned(format!("\\{line}"))
            } else {
                Cow::Borrowed(line)
            }
        })
        .collect();
    Cow::Owned(lines.join("\n"))
}

/// The turns written as one text: each after its role line, a blank line between two.
pub fn join(turns: &[Turn]) -> String {
    let mut text = String::new();
    for (index, turn) in turns.iter().enumerate() {
        text.push_str(&role_line(index, turn.role));
        text.push_str(&escape(&turn.text));
    }
    text
}

/// The turns of a written chat, as [`written`] reads them.
pub fn split(text: &str) -> Vec<Turn> {
    written(text).into_iter().map(|turn| Turn { role: turn.role, text: turn.text }).collect()
}

/// The turns of a written chat, where each is written. Text before the first role line is a
/// user turn unless it is only whitespace; a turn ends before the line break and the blank
/// line that come before the next role line (the `\n\n` [`join`] writes, or `\r\n\r\n`), or
/// before the line break alone (`\r\n` or `\n`) where no blank line is.
pub fn written(text: &str) -> Vec<WrittenTurn> {
    let mut turns: Vec<WrittenTurn> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let bare = without_line_end(line);
        let start = at;
        at += line.len();
        if let Some(role) = role_of(bare) {
            turns.push(WrittenTurn {
                role,
                role_line: start..start + bare.len(),
                marked: true,
                text: String::new(),
            });
            continue;
        }
        let unescaped = unescaped(line);
        match turns.last_mut() {
            Some(turn) => turn.text.push_str(unescaped),
            None => turns.push(WrittenTurn {
                role: USER,
                role_line: 0..0,
                marked: false,
                text: unescaped.to_owned(),
            }),
        }
    }
    if turns.first().is_some_and(|turn| !turn.marked && turn.text.trim().is_empty()) {
        turns.remove(0);
    }
    let last = turns.len().saturating_sub(1);
    for turn in turns.iter_mut().take(last) {
        // `\n\n` first: it is what `join` writes, so a text ending with `\r` comes back whole.
        let kept = ["\n\n", "\r\n\r\n", "\r\n", "\n"]
            .into_iter()
            .find_map(|end| turn.text.strip_suffix(end));
        if let Some(kept) = kept {
            turn.text.truncate(kept.len());
        }
    }
    turns
}

/// Whether `text` has a role line at all.
pub fn has_role_line(text: &str) -> bool {
    text.split('\n').any(|line| line_role(line).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turns(pairs: &[(&'static str, &str)]) -> Vec<Turn> {
        pairs.iter().map(|(role, text)| Turn::new(role, *text)).collect()
    }

    #[test]
    fn a_chat_written_out_reads_back_as_the_same_turns() {
        let chat = turns(&[("system", "Be {{tone}}.\n"), ("user", "First\n\nsecond")]);
        let text = join(&chat);
        assert_eq!(text, "system:\nBe {{tone}}.\n\n\nuser:\nFirst\n\nsecond");
        assert_eq!(split(&text), chat);
    }

    #[test]
    fn a_line_of_a_turn_that_reads_as_a_role_line_is_escaped_and_comes_back() {
        let chat = turns(&[
            ("user", "A transcript:\nuser:\nhi\n\\assistant:\n\\\\tool:\nend:"),
            ("assistant", ""),
        ]);
        let text = join(&chat);
        assert_eq!(
            text,
            "user:\nA transcript:\n\\user:\nhi\n\\\\assistant:\n\\\\\\tool:\nend:\n\nassistant:\n"
        );
        assert_eq!(split(&text), chat);
    }

    #[test]
    fn hand_written_turns_end_at_the_line_break_before_the_next_role_line() {
        let read = split("system:\nBe terse.\nuser:\nhi\n");
        assert_eq!(read, turns(&[("system", "Be terse."), ("user", "hi\n")]));
    }

    #[test]
    fn a_prompt_with_windows_line_ends_splits_as_one_with_newlines() {
        let read = split("system:\r\nBe terse.\r\n\r\nuser:\r\nHi\r\nthere\r\nassistant:\r\n");
        assert_eq!(
            read,
            turns(&[("system", "Be terse."), ("user", "Hi\r\nthere"), ("assistant", "")])
        );
    }

    #[test]
    fn text_with_carriage_returns_comes_back_whole() {
        let chat = turns(&[("user", "a\r"), ("user", "user:\r\nb\r\n\r"), ("assistant", "x\r\n")]);
        let text = join(&chat);
        assert!(text.contains("\\user:\r\n"), "{text:?}");
        assert_eq!(split(&text), chat);
    }

    #[test]
    fn text_before_the_first_role_line_is_a_user_turn_unless_it_is_blank() {
        assert_eq!(split("Hi\nthere"), turns(&[("user", "Hi\nthere")]));
        assert_eq!(split("\n\nsystem:\nS"), turns(&[("system", "S")]));
        let at = written("Intro\nassistant:\nA");
        assert_eq!((at[0].marked, at[1].role_line.clone()), (false, 6..16));
    }

    #[test]
    fn only_a_whole_line_naming_a_known_role_is_a_role_line() {
        assert_eq!(role_of("user:"), Some("user"));
        for line in ["User:", " user:", "user: hi", "human:", "user", "user:\r"] {
            assert_eq!(role_of(line), None, "{line}");
        }
        for line in ["user:\r\n", "user:\r", "user:\n"] {
            assert_eq!(line_role(line), Some("user"), "{line:?}");
        }
        assert!(!has_role_line("Note the user: field"));
    }
}
