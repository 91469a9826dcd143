//! LT108: an `x-dlp` policy llmtool does not know.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::model::keys::DLP_POLICIES;
use crate::rules::Context;
use crate::suggest::closest;

declare_rule! {
    /// `x-dlp` is not one of `off`, `warn`, `redact` or `block`.
    ///
    /// The policy says what a run does with sensitive values found in the prompt (see
    /// docs/dlp.md). A run refuses a tool whose policy it cannot read, rather than guess.
    ///
    /// ```json
    /// { "model_prompt": "Summarize {{text}}", "x-dlp": "mask" }
    /// ```
    pub static UNKNOWN_DLP_POLICY = ("LT108", "unknown-dlp-policy", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(policy) = &cx.tool.dlp else { return };
    if DLP_POLICIES.contains(&policy.value.as_str()) {
        return;
    }
    let help = match closest(&policy.value, DLP_POLICIES.iter().copied()) {
        Some(near) => {
            format!("did you mean `{near}`? The policies are {}", DLP_POLICIES.join(", "))
        }
        None => format!("the policies are {}", DLP_POLICIES.join(", ")),
    };
    out.push(
        Diagnostic::new(&UNKNOWN_DLP_POLICY, format!("`{}` is not a DLP policy", policy.value))
            .at(policy.span)
            .with_help(help),
    );
}
