//! A chat source's messages (Langfuse, OpenAI's stored prompts, promptfoo) as a tool's one
//! prompt, and back: each message after its role line, as [`llmtool_format::chat`] writes a chat; a
//! lone user message is the prompt itself, with no role line and no `x-chat` mark.

pub(crate) use llmtool_format::chat::{ROLES, role_line};

/// Whether the messages are one user message, which is the prompt itself with no role line.
pub(crate) fn is_lone_user<T>(messages: &[(impl AsRef<str>, T)]) -> bool {
    matches!(messages, [(role, _)] if role.as_ref() == "user")
}

/// Messages whose texts are kept as they are, as one prompt; and whether it is a chat (more
/// than a lone user message), to be marked `"x-chat": true`.
pub(crate) fn prompt_text(messages: &[(impl AsRef<str>, impl AsRef<str>)]) -> (String, bool) {
    if is_lone_user(messages) {
        return (messages[0].1.as_ref().to_owned(), false);
    }
    let mut text = String::new();
    for (index, (role, content)) in messages.iter().enumerate() {
        text.push_str(&role_line(index, role.as_ref()));
        text.push_str(&llmtool_format::chat::escape(content.as_ref()));
    }
    (text, true)
}

/// A chat prompt back as its messages (role, text).
pub(crate) fn messages(prompt: &str) -> Vec<(String, String)> {
    llmtool_format::chat::split(prompt)
        .into_iter()
        .map(|turn| (turn.role.to_owned(), turn.text))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_their_prompt_go_both_ways() {
        let chat = [("system", "Be {{tone}}.\n"), ("user", "First\n\nsecond\nuser:")];
        let (prompt, is_chat) = prompt_text(&chat);
        assert_eq!(prompt, "system:\nBe {{tone}}.\n\n\nuser:\nFirst\n\nsecond\n\\user:");
        assert!(is_chat);
        let back = messages(&prompt);
        let back: Vec<(&str, &str)> =
            back.iter().map(|(role, content)| (role.as_str(), content.as_str())).collect();
        assert_eq!(back, chat);
    }

    #[test]
    fn a_lone_user_message_is_the_prompt_itself() {
        assert_eq!(prompt_text(&[("user", "Hi {{name}}")]), ("Hi {{name}}".to_owned(), false));
        assert_eq!(prompt_text(&[("system", "Hi")]), ("system:\nHi".to_owned(), true));
    }
}
