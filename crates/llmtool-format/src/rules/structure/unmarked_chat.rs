//! LT110: a prompt that opens with a role line, sent as one message because it is not marked
//! as a chat.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::rules::Context;

declare_rule! {
    /// `model_prompt` starts with a role line (`system:`, `user:`, ... alone on a line) and
    /// the tool is not marked `"x-chat": true`.
    ///
    /// Without the mark, the prompt is one user message and its role lines are text the
    /// model reads, which is likely not what was meant. Only a prompt whose first line is a
    /// role line is taken for an unmarked chat: a `user:` line further down an ordinary prompt
    /// (a transcript to summarize, say) is left alone. The suggested fix adds the mark; a
    /// prompt that means its role lines as text can say so with `"x-chat": false`.
    ///
    /// ```json
    /// { "model_prompt": "system:\nBe terse.\n\nuser:\n{{question}}" }
    /// ```
    pub static UNMARKED_CHAT = ("LT110", "unmarked-chat", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(prompt) = &cx.tool.model_prompt else { return };
    if cx.tool.chat.is_some() {
        return;
    }
    let opened = prompt.value.trim_start_matches(['\r', '\n']);
    let first = opened.split('\n').next().unwrap_or("").trim_end_matches('\r');
    let Some(role) = crate::chat::role_of(first) else { return };
    let start = prompt.value.len() - opened.len();
    out.push(
        Diagnostic::new(
            &UNMARKED_CHAT,
            format!(
                "the prompt starts with the role line `{role}:` but is sent as one user message"
            ),
        )
        .at(cx.prompt_span(start..start + first.len()))
        .with_help("add `\"x-chat\": true` to send it as the messages its role lines open")
        .with_suggestion(
            "mark the tool as a chat",
            vec![Edit::insert(prompt.span.end, ", \"x-chat\": true")],
        ),
    );
}
