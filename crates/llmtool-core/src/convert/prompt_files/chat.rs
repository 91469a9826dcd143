//! A chat's messages in a tool's one prompt, and back: every chat source (Langfuse, OpenAI's
//! stored prompts, promptfoo) keeps each message after its role line (`system:`), with a blank
//! line between two messages; a lone user message is the prompt itself where the source allows
//! it.

/// The roles a role line may name and an export gives back as messages.
pub(crate) const ROLES: [&str; 5] = ["system", "developer", "user", "assistant", "tool"];

/// What opens message `index` (counting the messages kept) in the prompt: the blank line that
/// ends the message before it, then this one's role line.
pub(crate) fn role_line(index: usize, role: &str) -> String {
    let gap = if index == 0 { "" } else { "\n\n" };
    format!("{gap}{role}:\n")
}

/// Whether the messages are one user message, which is the prompt itself with no role line.
pub(crate) fn is_lone_user<T>(messages: &[(impl AsRef<str>, T)]) -> bool {
    matches!(messages, [(role, _)] if role.as_ref() == "user")
}

/// Messages whose texts are kept as they are, as one prompt.
pub(crate) fn prompt_text(messages: &[(impl AsRef<str>, impl AsRef<str>)]) -> String {
    if is_lone_user(messages) {
        return messages[0].1.as_ref().to_owned();
    }
    let mut text = String::new();
    for (index, (role, content)) in messages.iter().enumerate() {
        text.push_str(&role_line(index, role.as_ref()));
        text.push_str(content.as_ref());
    }
    text
}

/// A prompt of role lines back as its messages (role, text); text before the first role line
/// is a user message.
pub(crate) fn messages(prompt: &str) -> Vec<(String, String)> {
    let mut messages: Vec<(String, String)> = Vec::new();
    for line in prompt.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        let role = bare.strip_suffix(':').filter(|role| ROLES.contains(role));
        match (role, messages.last_mut()) {
            (Some(role), _) => messages.push((role.to_owned(), String::new())),
            (None, Some((_, content))) => content.push_str(line),
            (None, None) => messages.push(("user".to_owned(), line.to_owned())),
        }
    }
    // The blank line a role line brings is not the message before it.
    let last = messages.len().saturating_sub(1);
    for (_, content) in messages.iter_mut().take(last) {
        if let Some(kept) = content.strip_suffix("\n\n") {
            *content = kept.to_owned();
        }
    }
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_their_prompt_go_both_ways() {
        let chat = [("system", "Be {{tone}}.\n"), ("user", "First\n\nsecond")];
        let prompt = prompt_text(&chat);
        assert_eq!(prompt, "system:\nBe {{tone}}.\n\n\nuser:\nFirst\n\nsecond");
        let back = messages(&prompt);
        let back: Vec<(&str, &str)> =
            back.iter().map(|(role, content)| (role.as_str(), content.as_str())).collect();
        assert_eq!(back, chat);
    }

    #[test]
    fn a_lone_user_message_is_the_prompt_itself() {
        assert_eq!(prompt_text(&[("user", "Hi {{name}}")]), "Hi {{name}}");
        assert_eq!(prompt_text(&[("system", "Hi")]), "system:\nHi");
        assert_eq!(messages("Hi\nthere"), [("user".to_owned(), "Hi\nthere".to_owned())]);
    }

    #[test]
    fn an_unknown_role_is_text_of_the_message_before() {
        let back = messages("user:\nA\nhuman:\nB");
        assert_eq!(back, [("user".to_owned(), "A\nhuman:\nB".to_owned())]);
    }
}
