//! LT111: a tool marked as a chat whose prompt has no role line.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// The tool is marked `"x-chat": true` and `model_prompt` has no role line.
    ///
    /// The prompt is sent as one user message, as it would be without the mark: either the
    /// mark is left over, or the role lines are not alone on their lines (`user: hi`), or not
    /// in lower case (`User:`). A role line is `system:`, `developer:`, `user:`,
    /// `assistant:` or `tool:`, alone on its line.
    ///
    /// ```json
    /// { "model_prompt": "System: be terse.\nUser: {{question}}", "x-chat": true }
    /// ```
    pub static CHAT_WITHOUT_ROLE_LINES = ("LT111", "chat-without-role-lines", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let (Some(chat), Some(_)) = (&cx.tool.chat, &cx.tool.model_prompt) else { return };
    if !chat.value || crate::chat::has_role_line(cx.tool.prompt()) {
        return;
    }
    out.push(
        Diagnostic::new(
            &CHAT_WITHOUT_ROLE_LINES,
            "the tool is marked as a chat but its prompt has no role line: it is sent as one user message",
        )
        .at(chat.span)
        .with_help("start each turn with `system:`, `user:` or `assistant:` alone on a line, or remove `x-chat`"),
    );
}
