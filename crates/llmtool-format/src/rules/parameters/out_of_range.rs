//! LT301: a model parameter outside its range.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::model::keys::PARAMETER_RANGES as RANGES;
use crate::rules::Context;

declare_rule! {
    /// A model parameter is outside the range every provider accepts: `temperature` 0 to 2,
    /// `top_p` 0 to 1, `frequency_penalty` and `presence_penalty` -2 to 2, `max_tokens` a
    /// positive integer.
    ///
    /// Providers reject such requests, so the tool could not run anywhere.
    ///
    /// ```json
    /// "parameters": { "temperature": 7, "max_tokens": 0 }
    /// ```
    pub static PARAMETER_OUT_OF_RANGE = ("LT301", "parameter-out-of-range", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(params) = cx.tool.metadata.as_ref().and_then(|m| m.parameters.as_ref()) else {
        return;
    };
    for (name, param) in params.known() {
        let problem = if name == "max_tokens" {
            let integral = param.value.fract() == 0.0 && !param.raw.contains(['.', 'e', 'E']);
            (!integral || param.value < 1.0).then(|| "must be a positive integer".to_owned())
        } else {
            RANGES.iter().find(|(n, ..)| *n == name).and_then(|&(_, low, high)| {
                (!(low..=high).contains(&param.value))
                    .then(|| format!("must be between {low} and {high}"))
            })
        };
        if let Some(problem) = problem {
            out.push(
                Diagnostic::new(
                    &PARAMETER_OUT_OF_RANGE,
                    format!("`{name}` {problem}, found `{}`", param.raw),
                )
                .at(param.span),
            );
        }
    }
}
