//! LT112: text before a chat's first role line.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::rules::Context;

declare_rule! {
    /// A chat prompt (`"x-chat": true`) has text before its first role line.
    ///
    /// That text is sent as a user message of its own, first. Peers differ here (Prompty
    /// sends such text as a system message), so the role is better written. The suggested fix
    /// starts the prompt with `user:`.
    ///
    /// ```json
    /// { "model_prompt": "Be terse.\n\nuser:\n{{question}}", "x-chat": true }
    /// ```
    pub static TEXT_BEFORE_FIRST_TURN = ("LT112", "text-before-first-turn", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if !cx.tool.is_chat() {
        return;
    }
    let turns = cx.chat_turns();
    let (Some(first), true) = (turns.first(), turns.iter().any(|turn| turn.marked)) else {
        return;
    };
    if first.marked {
        return;
    }
    let prompt = cx.tool.prompt();
    let end = turns.get(1).map_or(prompt.len(), |next| next.role_line.start);
    let start = prompt.len() - prompt.trim_start().len();
    let at = cx.prompt_span(start..end.max(start));
    out.push(
        Diagnostic::new(
            &TEXT_BEFORE_FIRST_TURN,
            "text before the first role line is sent as a user message",
        )
        .at(at)
        .with_help("start it with the role it has, `user:` or `system:`, alone on a line")
        .with_suggestion(
            "start the prompt with `user:`",
            vec![Edit::insert(cx.prompt_span(0..0).start, "user:\\n")],
        ),
    );
}
