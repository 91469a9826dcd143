//! LT305: an image parameter with a value no image API takes.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::output::{IMAGE_QUALITIES, MAX_IMAGES};
use crate::rules::Context;
use crate::suggest::closest;

declare_rule! {
    /// An image parameter has a value no image API takes: `quality` other than `auto`, `low`,
    /// `medium`, `high`, `standard` or `hd`; `n` other than a whole number from 1 to 10;
    /// `seed` other than a whole number from 0.
    ///
    /// ```json
    /// "parameters": { "quality": "ultra", "n": 0 }
    /// ```
    pub static INVALID_IMAGE_PARAMETER = ("LT305", "invalid-image-parameter", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if !cx.tool.makes_images() {
        return;
    }
    let image_parameters = cx.tool.image_parameters();
    for (name, key, value) in image_parameters {
        let problem = match name {
            "quality" => match value.as_str() {
                Some(quality) if IMAGE_QUALITIES.contains(&quality) => None,
                Some(quality) => Some(match closest(quality, IMAGE_QUALITIES) {
                    Some(near) => {
                        format!("is not a quality image APIs know; did you mean `{near}`?")
                    }
                    None => format!("must be one of {}", list(&IMAGE_QUALITIES)),
                }),
                None => Some(format!("must be a string, one of {}", list(&IMAGE_QUALITIES))),
            },
            "n" => value
                .as_u64()
                .is_none_or(|n| !(1..=MAX_IMAGES).contains(&n))
                .then(|| format!("must be a whole number from 1 to {MAX_IMAGES}")),
            _ => value.as_u64().is_none().then(|| "must be a whole number from 0".to_owned()),
        };
        if let Some(problem) = problem {
            out.push(
                Diagnostic::new(
                    &INVALID_IMAGE_PARAMETER,
                    format!("`{name}` {problem}, found `{value}`"),
                )
                .at(key),
            );
        }
    }
}

fn list(values: &[&str]) -> String {
    values.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
}
