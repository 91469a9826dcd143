//! LT109: a chat's `tool:` turn, which answers a function call the prompt never made.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// A chat prompt (`"x-chat": true`) has a `tool:` turn.
    ///
    /// A tool message is a function's result, sent after the model asked for that function
    /// by its call id; a prompt has no call to answer, and every API refuses a tool message
    /// without one. Write the result into a `user:` turn instead.
    ///
    /// ```json
    /// { "model_prompt": "user:\nWhat is 6 x 7?\n\ntool:\n42", "x-chat": true }
    /// ```
    pub static CHAT_TOOL_TURN = ("LT109", "chat-tool-turn", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if !cx.tool.is_chat() {
        return;
    }
    for turn in cx.chat_turns().iter().filter(|turn| turn.role == "tool") {
        let span = cx.prompt_span(turn.role_line.clone());
        out.push(
            Diagnostic::new(
                &CHAT_TOOL_TURN,
                "a `tool:` turn answers a function call, and a prompt makes none",
            )
            .at(span)
            .with_help("put the function's result in a `user:` turn")
            .with_suggestion(
                "make it a `user:` turn",
                vec![crate::diagnostic::Edit::replace(span, "user:")],
            ),
        );
    }
}
