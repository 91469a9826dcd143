//! An answer (Markdown, as models write it) as Slack messages of Block Kit sections: Markdown
//! turned into Slack's `mrkdwn`, each section within Slack's 3,000 characters, each message
//! within its 50 blocks and 12,000 characters (Slack refuses more with `msg_blocks_too_long`).
//! A long answer is split between paragraphs, then lines; a code block stays a code block on
//! both sides of a split, and nothing inside one is rewritten.
//!
//! `&`, `<` and `>` are escaped everywhere, as Slack asks: a model's answer cannot mention
//! `<!channel>` or a user, or write a link whose text hides where it goes; only the links the
//! Markdown writes (`[text](url)`) become Slack's `<url|text>`.

use serde_json::{Value, json};

/// The most characters of a section's text.
pub const SECTION_CHARS: usize = 3000;
/// The most blocks of a message.
pub const BLOCKS_PER_MESSAGE: usize = 50;
/// The most characters of a message's sections together.
pub const MESSAGE_CHARS: usize = 12_000;

/// One message to post: its blocks, and the plain text Slack shows in notifications.
#[derive(Debug, Clone, PartialEq)]
pub struct SlackMessage {
    pub text: String,
    pub blocks: Vec<Value>,
}

/// `answer` as the messages to post, in order (one for most answers; none for an empty one).
pub fn answer_messages(answer: &str) -> Vec<SlackMessage> {
    let mut messages: Vec<Vec<String>> = Vec::new();
    let mut length = 0;
    for section in pack(pieces(answer), SECTION_CHARS) {
        let size = section.chars().count();
        match messages.last_mut() {
            Some(last) if last.len() < BLOCKS_PER_MESSAGE && length + size <= MESSAGE_CHARS => {
                last.push(section);
                length += size;
            }
            _ => {
                messages.push(vec![section]);
                length = size;
            }
        }
    }
    messages
        .into_iter()
        .map(|sections| SlackMessage {
            text: preview(&sections[0]),
            blocks: sections
                .iter()
                .map(|text| json!({"type": "section", "text": {"type": "mrkdwn", "text": text}}))
                .collect(),
        })
        .collect()
}

/// `text` with the three characters `mrkdwn` gives a meaning to escaped.
pub fn escaped(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The start of a section, for notifications.
fn preview(section: &str) -> String {
    const MOST: usize = 150;
    let mut text: String = section.chars().take(MOST).collect();
    if section.chars().count() > MOST {
        text.push('…');
    }
    text
}

/// Pieces of at most [`SECTION_CHARS`] characters, in order: prose as `mrkdwn`, cut between
/// paragraphs and lines where it must be cut; code blocks fenced, cut between lines.
fn pieces(answer: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut prose = Vec::new();
    let mut code: Option<Vec<&str>> = None;
    for line in answer.lines() {
        let fence = line.trim_start().starts_with("```");
        match (&mut code, fence) {
            (Some(lines), false) => lines.push(line),
            (Some(lines), true) => {
                pieces.extend(fenced(lines));
                code = None;
            }
            (None, true) => {
                pieces.extend(prose_pieces(&prose));
                prose.clear();
                code = Some(Vec::new());
            }
            (None, false) => prose.push(line),
        }
    }
    if let Some(lines) = &code {
        // An answer cut short inside a code block: the block is closed.
        pieces.extend(fenced(lines));
    }
    pieces.extend(prose_pieces(&prose));
    pieces
}

/// Code lines as fenced pieces of at most [`SECTION_CHARS`] characters (the language after
/// the opening fence is dropped: Slack would show it as code).
fn fenced(lines: &[&str]) -> Vec<String> {
    const FENCES: usize = "```\n\n```".len();
    let lines: Vec<String> =
        lines.iter().flat_map(|line| cut(&escaped(line), SECTION_CHARS - FENCES)).collect();
    pack(lines, SECTION_CHARS - FENCES)
        .into_iter()
        .map(|body| format!("```\n{body}\n```"))
        .collect()
}

/// Prose lines as `mrkdwn` pieces of at most [`SECTION_CHARS`] characters.
fn prose_pieces(lines: &[&str]) -> Vec<String> {
    let text = lines.iter().map(|line| mrkdwn_line(line)).collect::<Vec<_>>().join("\n");
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    // Paragraphs, then lines, then characters, as far as needed.
    let mut out = Vec::new();
    for paragraph in text.split("\n\n") {
        let lines: Vec<String> =
            paragraph.lines().flat_map(|line| cut(line, SECTION_CHARS)).collect();
        out.extend(pack(lines, SECTION_CHARS));
    }
    pack_with(out, SECTION_CHARS, "\n\n")
}

/// `texts` joined by new lines into as few pieces of at most `most` characters as keep their
/// order (each of `texts` is at most `most` long).
fn pack(texts: Vec<String>, most: usize) -> Vec<String> {
    pack_with(texts, most, "\n")
}

fn pack_with(texts: Vec<String>, most: usize, joint: &str) -> Vec<String> {
    let mut packed: Vec<String> = Vec::new();
    let mut length = 0;
    for text in texts {
        let size = text.chars().count();
        match packed.last_mut() {
            Some(last) if length + joint.len() + size <= most => {
                last.push_str(joint);
                last.push_str(&text);
                length += joint.len() + size;
            }
            _ => {
                length = size;
                packed.push(text);
            }
        }
    }
    packed
}

/// `line` in pieces of at most `most` characters.
fn cut(line: &str, most: usize) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= most {
        return vec![line.to_owned()];
    }
    chars.chunks(most).map(|chunk| chunk.iter().collect()).collect()
}

/// One line of Markdown as `mrkdwn`: headings and `**bold**` bold, bullets as `•`, links as
/// `<url|text>`; inline code is left as it is.
fn mrkdwn_line(line: &str) -> String {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    if let Some(heading) = trimmed.strip_prefix('#') {
        let heading = heading.trim_start_matches('#');
        if heading.starts_with(' ') {
            return format!("{indent}*{}*", inline(heading.trim()));
        }
    }
    for bullet in ["- ", "* ", "+ "] {
        if let Some(item) = trimmed.strip_prefix(bullet) {
            return format!("{indent}• {}", inline(item));
        }
    }
    format!("{indent}{}", inline(trimmed))
}

/// Bold and links outside inline code.
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (index, part) in text.split('`').enumerate() {
        if index > 0 {
            out.push('`');
        }
        if index % 2 == 1 {
            out.push_str(&escaped(part));
        } else {
            out.push_str(&links(&escaped(&part.replace("**", "*").replace("__", "*"))));
        }
    }
    out
}

/// `[text](url)` as `<url|text>`.
fn links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let link = after.find("](").and_then(|close| {
            let url_part = &after[close + 2..];
            let end = url_part.find(')')?;
            let url = &url_part[..end];
            (!url.contains(char::is_whitespace) && !url.is_empty())
                .then(|| (&after[..close], url, open + 1 + close + 2 + end + 1))
        });
        match link {
            Some((label, url, used)) => {
                out.push_str(&rest[..open]);
                out.push_str(&format!("<{url}|{label}>"));
                rest = &rest[used..];
            }
            None => {
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(message: &SlackMessage) -> Vec<&str> {
        message.blocks.iter().map(|b| b["text"]["text"].as_str().unwrap()).collect()
    }

    #[test]
    fn markdown_becomes_mrkdwn_and_code_is_left_alone() {
        let answer = "# Result\n\nThe **answer** is in [the docs](https://example.test/a).\n- one\n- two `**kept**`\n\n```sql\nSELECT '**' AS x; -- [a](b)\n```";
        let messages = answer_messages(answer);
        assert_eq!(messages.len(), 1);
        // The prose and the code block fit one section together.
        assert_eq!(
            texts(&messages[0]),
            [
                "*Result*\n\nThe *answer* is in <https://example.test/a|the docs>.\n• one\n• two `**kept**`\n```\nSELECT '**' AS x; -- [a](b)\n```"
            ]
        );
        assert_eq!(messages[0].text, preview(texts(&messages[0])[0]));
    }

    #[test]
    fn a_long_answer_is_split_within_slacks_limits_keeping_code_fenced() {
        let paragraph = "word ".repeat(400);
        let code = (0..400).map(|i| format!("line {i} of the code")).collect::<Vec<_>>();
        let answer = format!(
            "{paragraph}\n\n{paragraph}\n\n```rust\n{}\n```\n\n{}",
            code.join("\n"),
            "x".repeat(7000)
        );
        let messages = answer_messages(&answer);
        let all: Vec<&str> = messages.iter().flat_map(texts).collect();
        assert!(all.iter().all(|text| text.chars().count() <= SECTION_CHARS));
        assert!(messages.iter().all(|m| m.blocks.len() <= BLOCKS_PER_MESSAGE));
        let code_sections: Vec<&&str> = all.iter().filter(|t| t.starts_with("```")).collect();
        assert!(code_sections.len() >= 3, "{} code sections", code_sections.len());
        assert!(code_sections.iter().all(|t| t.ends_with("\n```")));
        // Every line of the code is there once, in order.
        let lines: Vec<&str> = code_sections
            .iter()
            .flat_map(|t| t.trim_start_matches("```\n").trim_end_matches("\n```").lines())
            .collect();
        assert_eq!(lines, code.iter().map(String::as_str).collect::<Vec<_>>());
        // The long word is cut, not lost.
        let xs: usize = all.iter().map(|t| t.matches('x').count()).sum();
        assert_eq!(xs, 7000);
    }

    #[test]
    fn what_slack_acts_on_is_escaped_and_only_markdown_links_are_links() {
        let answer = "Hi <!channel> and <@U123>, see <https://evil.test|the docs> & [ours](https://ok.test/?a=1&b=2).\n```\nif a < b && c > d {}\n```";
        let text = texts(&answer_messages(answer)[0]).join("\n");
        assert!(!text.contains("<!") && !text.contains("<@"), "{text}");
        assert!(
            text.contains("&lt;!channel&gt;")
                && text.contains("&lt;https://evil.test|the docs&gt; &amp;")
        );
        assert!(text.contains("<https://ok.test/?a=1&amp;b=2|ours>"), "{text}");
        assert!(text.contains("if a &lt; b &amp;&amp; c &gt; d {}"), "{text}");
    }

    #[test]
    fn many_sections_go_in_several_messages_and_an_empty_answer_in_none() {
        // Sections of 2,990 characters: four a message, Slack's 12,000 characters.
        let answer = (0..10).map(|_| "y".repeat(2990)).collect::<Vec<_>>().join("\n\n");
        let counts: Vec<usize> = answer_messages(&answer).iter().map(|m| m.blocks.len()).collect();
        assert_eq!(counts, [4, 4, 2]);
        // Short sections: 50 a message.
        let answer = (0..120).map(|_| "```\nz\n```").collect::<Vec<_>>().join("\n\nword\n\n");
        let messages = answer_messages(&answer);
        assert!(messages.iter().all(|m| m.blocks.len() <= BLOCKS_PER_MESSAGE));
        let text = |m: &SlackMessage| -> usize {
            m.blocks.iter().map(|b| b["text"]["text"].as_str().unwrap().chars().count()).sum()
        };
        assert!(messages.iter().all(|m| text(m) <= MESSAGE_CHARS));
        assert!(answer_messages("  \n").is_empty());
        // An answer cut short inside a code block gets its block closed.
        let cut = answer_messages("Here:\n```\nfn main() {");
        assert_eq!(texts(&cut[0]), ["Here:\n```\nfn main() {\n```"]);
    }
}
