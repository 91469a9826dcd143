//! Semantic Kernel's chat prompts: a template made of `<message role="...">` elements is read
//! as a chat's turns, the way Semantic Kernel's chat services read the rendered prompt (its
//! `ChatHistory.from_rendered_prompt`), and a chat tool is written back as those elements.
//!
//! Semantic Kernel parses the rendered prompt as XML, then decodes each message's text once
//! more as HTML; a value it inserts is encoded first, so a value never opens a message. A
//! template this module does not read as messages (no `<message>` element, another element,
//! text its XML reader refuses) stays one text, which Semantic Kernel sends as one user message.

use super::syntax::{Part, Slots, semantic_kernel as sk};
use crate::codes::DROPPED_FIELD;
use llmtool_format::chat::{self, ROLES};
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::template::Piece;

const OPEN: &str = "<message";
const CLOSE: &str = "</message>";

/// Stands for a placeholder while the text around it is read (then `MARK`, its index, `MARK`):
/// XML allows no NUL, so no template Semantic Kernel reads as messages holds one.
const MARK: char = '\u{0}';

/// A template read as messages: its parts, a role line before each turn, and whether it is a
/// chat (more than one user message).
pub(super) struct Messages {
    pub(super) parts: Vec<Part>,
    pub(super) is_chat: bool,
}

/// The template's messages, as Semantic Kernel reads them, or `None` when it does not read the
/// template as messages. An attribute other than `role` is left out with a warning.
pub(super) fn read(
    parts: &[Part],
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Option<Messages>, Box<Diagnostic>> {
    let mut flat = String::new();
    let mut placeholders = Vec::new();
    for part in parts {
        match part {
            Part::Literal(text) if text.contains(MARK) => return Ok(None),
            Part::Literal(text) => flat.push_str(text),
            Part::Variable { .. } => {
                flat.push(MARK);
                flat.push_str(&placeholders.len().to_string());
                flat.push(MARK);
                placeholders.push(part.clone());
            }
        }
    }
    let Some(messages) = messages(flat.trim(), diagnostics)? else { return Ok(None) };
    // Semantic Kernel sends a lone system message as the user's.
    let is_chat = messages.len() > 1;
    let mut text = String::new();
    for (index, (role, content)) in messages.iter().enumerate() {
        if is_chat {
            text.push_str(&chat::role_line(index, role));
        }
        text.push_str(&chat::escape(content));
    }
    Ok(Some(Messages { parts: with_placeholders(&text, &placeholders), is_chat }))
}

/// A message: its role and its text.
type Message = (&'static str, String);

/// The messages of a rendered prompt (already trimmed): text before the first element is a
/// system message, text after an element a user message, each trimmed.
fn messages(
    text: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Option<Vec<Message>>, Box<Diagnostic>> {
    if !text.contains(OPEN) {
        return Ok(None);
    }
    let mut found = Vec::new();
    let lead_end = text.find('<').unwrap_or(text.len());
    let Some(lead) = decoded(&text[..lead_end]) else { return Ok(None) };
    if !lead.trim().is_empty() {
        found.push(("system", lead.trim().to_owned()));
    }
    let mut rest = &text[lead_end..];
    while !rest.is_empty() {
        let Some((role, after_open)) = open_tag(rest, diagnostics)? else { return Ok(None) };
        let Some(close) = after_open.find(CLOSE) else { return Ok(None) };
        let content = &after_open[..close];
        // An element inside a message (`<text>`, `<image>`, HTML) is not read here.
        if content.contains('<') {
            return Ok(None);
        }
        let Some(content) = decoded(content) else { return Ok(None) };
        found.push((role, content));
        rest = &after_open[close + CLOSE.len()..];
        let next = rest.find('<').unwrap_or(rest.len());
        let Some(tail) = decoded(&rest[..next]) else { return Ok(None) };
        if !tail.trim().is_empty() {
            found.push((chat::USER, tail.trim().to_owned()));
        }
        rest = &rest[next..];
    }
    Ok(Some(found))
}

/// The role of the `<message ...>` tag `text` starts with, and the text after the tag; `None`
/// when `text` starts with another tag. A role Semantic Kernel does not know is an error, as
/// it is there.
fn open_tag<'a>(
    text: &'a str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Option<(&'static str, &'a str)>, Box<Diagnostic>> {
    let Some(mut rest) = text.strip_prefix(OPEN) else { return Ok(None) };
    let mut role = None;
    loop {
        let trimmed = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        if let Some(after) = trimmed.strip_prefix('>') {
            let Some(role) = role else {
                return Err(super::invalid(
                    "a `<message>` has no `role`: Semantic Kernel refuses it",
                ));
            };
            return Ok(Some((role, after)));
        }
        if trimmed.len() == rest.len() {
            return Ok(None);
        }
        let Some((name, after_name)) = trimmed.split_once('=') else { return Ok(None) };
        let name = name.trim_end();
        let after_name = after_name.trim_start();
        let Some(quote) = after_name.chars().next().filter(|c| matches!(c, '"' | '\'')) else {
            return Ok(None);
        };
        let Some((value, after_value)) = after_name[1..].split_once(quote) else { return Ok(None) };
        if name == "role" {
            let Some(known) = ROLES.into_iter().find(|known| *known == value) else {
                return Err(super::invalid(format!(
                    "a `<message>` has the role `{value}`, which Semantic Kernel refuses (it takes {})",
                    ROLES.join(", ")
                )));
            };
            role = Some(known);
        } else {
            diagnostics.push(Diagnostic::new(
                &DROPPED_FIELD,
                format!("`{name}=\"{value}\"` on a `<message>` is left out: Semantic Kernel sends it with the message, and a tool's turn has a role only"),
            ));
        }
        rest = after_value;
    }
}

/// `text` as Semantic Kernel decodes a message's text: XML's references (refusing a `&` XML
/// does not read, as its parser does), then once more as HTML (the five named references and
/// numeric ones).
fn decoded(text: &str) -> Option<String> {
    let once = references(text, true)?;
    references(&once, false)
}

/// `text` with its character references (`&lt;`, `&#60;`, `&#x3C;`) replaced; `strict`
/// refuses a `&` that starts none, as XML does, where HTML leaves it as it is.
fn references(text: &str, strict: bool) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let reference = after.split_once(';').and_then(|(name, _)| Some((name, character(name)?)));
        match reference {
            Some((name, character)) => {
                out.push(character);
                rest = &after[name.len() + 1..];
            }
            None if strict => return None,
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

/// The character a reference's name (between `&` and `;`) stands for.
fn character(name: &str) -> Option<char> {
    let code = match name {
        "lt" => return Some('<'),
        "gt" => return Some('>'),
        "amp" => return Some('&'),
        "quot" => return Some('"'),
        "apos" => return Some('\''),
        _ => name.strip_prefix('#')?,
    };
    let number = match code.strip_prefix(['x', 'X']) {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => code.parse().ok()?,
    };
    char::from_u32(number).filter(|c| *c != MARK)
}

/// `text`, whose placeholders are marked, as parts again.
fn with_placeholders(text: &str, placeholders: &[Part]) -> Vec<Part> {
    let mut parts = Vec::new();
    for (index, piece) in text.split(MARK).enumerate() {
        if index % 2 == 0 {
            if !piece.is_empty() {
                parts.push(Part::Literal(piece.to_owned()));
            }
        } else if let Some(placeholder) =
            piece.parse::<usize>().ok().and_then(|i| placeholders.get(i))
        {
            parts.push(placeholder.clone());
        }
    }
    parts
}

/// A chat's turns written as `<message role="...">` elements, one a line: each turn's text
/// encoded so that Semantic Kernel's two decodings give it back.
pub(super) fn write(turns: Vec<(&'static str, Vec<Piece<'_>>)>, slots: &Slots<'_>) -> String {
    let mut out = String::new();
    for (index, (role, pieces)) in turns.into_iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let text = sk::write_with(pieces.into_iter(), slots, encoded);
        out.push_str(&format!("<message role=\"{role}\">{text}</message>"));
    }
    out
}

/// `text` encoded for a message's text: `<` and `>` as XML references, and `&` as `&amp;`, or
/// as `&amp;amp;` where HTML would read a reference after it.
fn encoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' if text[at + 1..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '#') => {
                out.push_str("&amp;amp;");
            }
            '&' => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(template: &str) -> Option<(String, bool)> {
        let parts = sk::read(template).unwrap();
        let messages = read(&parts, &mut Vec::new()).unwrap()?;
        Some((super::super::syntax::to_prompt(&messages.parts), messages.is_chat))
    }

    #[test]
    fn message_elements_are_a_chats_turns() {
        let template = "\n<message role=\"system\">Be &lt;terse&gt; &amp;amp; kind.</message>\n\n<message role=\"user\">\nHi {{$name}}\nuser:\n</message>";
        let (prompt, is_chat) = read_text(template).unwrap();
        assert!(is_chat);
        assert_eq!(prompt, "system:\nBe <terse> & kind.\n\nuser:\n\nHi {{name}}\n\\user:\n");
    }

    #[test]
    fn text_around_the_elements_is_read_as_semantic_kernel_reads_it() {
        let (prompt, _) = read_text("Intro <message role=\"assistant\">A</message> tail").unwrap();
        assert_eq!(prompt, "system:\nIntro\n\nassistant:\nA\n\nuser:\ntail");
        // A lone message, even a system one, is sent as the user's: no chat.
        assert_eq!(read_text("<message role=\"system\">S</message>"), Some(("S".into(), false)));
    }

    #[test]
    fn what_semantic_kernel_does_not_read_as_messages_stays_text() {
        for template in [
            "No tags at all",
            "<message role=\"user\">A <b>bold</b></message>",
            "<message role=\"user\">A & B</message>",
            "<chat_history></chat_history>",
            "<message role=\"user\">unclosed",
        ] {
            assert_eq!(read_text(template), None, "{template}");
        }
        let unknown = sk::read("<message role=\"Developer\">A</message>").unwrap();
        assert!(read(&unknown, &mut Vec::new()).is_err());
    }

    #[test]
    fn an_attribute_other_than_the_role_is_left_out_with_a_warning() {
        let parts = sk::read(
            "<message role='user' name=\"Ann\">A</message><message role=\"assistant\">B</message>",
        )
        .unwrap();
        let mut said = Vec::new();
        let messages = read(&parts, &mut said).unwrap().unwrap();
        assert!(messages.is_chat);
        assert!(said[0].message.contains("name=\"Ann\""), "{}", said[0].message);
    }

    #[test]
    fn encoded_text_comes_back_through_both_decodings() {
        let text = "a < b > c & d &amp; &lt &#65; &";
        assert_eq!(decoded(&encoded(text)).as_deref(), Some(text));
    }
}
