//! Enforcing a tool's expected output on a model's answer: `limited` answers matched to an
//! allowed value, JSON / XML / CSV checked, code extracted from its fenced block.
//!
//! Pure functions: the run loop (in `llmtool-providers`) calls [`enforce`] and, on an error,
//! asks the model again with [`OutputError::reason`].

mod fences;
mod formats;
mod image;
mod limited;

pub use fences::{FencedBlock, fenced_blocks, unwrap_fence};
pub use formats::{check_csv, check_json, check_xml};
pub use image::{
    IMAGE_FORMATS, IMAGE_PARAMETERS, IMAGE_QUALITIES, IMAGE_SIZE_PATTERN, ImageFormat, ImageParams,
    ImageSize, ImageSpec, MAX_IMAGES, MAX_SIDE, is_image_model,
};
pub use limited::match_limited;

use crate::model::Tool;

/// What kind of answer a tool expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputKind {
    Text,
    Code {
        language: Option<String>,
    },
    Limited {
        allowed: Vec<String>,
    },
    /// Pictures, made by an image API instead of written by a chat model.
    Image(ImageSpec),
    /// A type llmtool does not know; nothing is enforced.
    Other(String),
}

/// The format an answer must be in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputFormat {
    Json,
    Xml,
    Csv,
    /// A format llmtool does not check.
    Other(String),
}

/// A tool's expected output, ready to enforce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSpec {
    pub kind: OutputKind,
    pub format: Option<OutputFormat>,
}

impl OutputSpec {
    /// The tool's expected output; plain text when it declares none.
    pub fn of(tool: &Tool) -> Self {
        if tool.makes_images() {
            return Self { kind: OutputKind::Image(tool.image_spec()), format: None };
        }
        let Some(output) = tool.metadata.as_ref().and_then(|m| m.expected_output.as_ref()) else {
            return Self { kind: OutputKind::Text, format: None };
        };
        let kind = match output.kind.as_ref().map(|k| k.value.as_str()) {
            None | Some("text") => OutputKind::Text,
            Some("code") => {
                OutputKind::Code { language: output.language.as_ref().map(|l| l.value.clone()) }
            }
            Some("limited") => OutputKind::Limited {
                allowed: output
                    .allowed_values
                    .iter()
                    .flat_map(|l| l.value.iter().map(|v| v.value.clone()))
                    .collect(),
            },
            Some(other) => OutputKind::Other(other.to_owned()),
        };
        let format = output.format.as_ref().map(|f| match f.value.to_ascii_lowercase().as_str() {
            "json" => OutputFormat::Json,
            "xml" => OutputFormat::Xml,
            "csv" => OutputFormat::Csv,
            _ => OutputFormat::Other(f.value.clone()),
        });
        Self { kind, format }
    }
}

/// Why an answer does not meet the expected output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputError {
    #[error("the answer `{answer}` is not one of the allowed values")]
    NotAllowed { answer: String, allowed: Vec<String> },
    #[error("the answer is not in the expected format: {0}")]
    Format(String),
}

impl OutputError {
    /// What to tell the model when asking again.
    pub fn reason(&self) -> String {
        match self {
            OutputError::NotAllowed { allowed, .. } => format!(
                "Your answer was not one of the allowed values. Reply with exactly one of: {}. No other words.",
                allowed.join(", ")
            ),
            OutputError::Format(problem) => format!(
                "Your answer could not be used: {problem}. Reply again with only the corrected answer."
            ),
        }
    }
}

/// The output to print for `answer`, or why it does not meet `spec`. With `raw`, code answers
/// are kept whole instead of reduced to their fenced block.
pub fn enforce(spec: &OutputSpec, answer: &str, raw: bool) -> Result<String, OutputError> {
    if let OutputKind::Limited { allowed } = &spec.kind {
        return match_limited(answer, allowed).map(str::to_owned).ok_or_else(|| {
            OutputError::NotAllowed { answer: answer.trim().to_owned(), allowed: allowed.clone() }
        });
    }
    let body = match &spec.kind {
        OutputKind::Code { .. } if raw => return Ok(answer.to_owned()),
        OutputKind::Code { language } => extract_code(answer, language.as_deref()),
        _ => answer,
    };
    match &spec.format {
        Some(OutputFormat::Json) => check_json(unwrap_fence(body)).map_err(OutputError::Format),
        Some(OutputFormat::Xml) => {
            let xml = unwrap_fence(body);
            check_xml(xml).map(|()| xml.to_owned()).map_err(OutputError::Format)
        }
        Some(OutputFormat::Csv) => {
            let csv = unwrap_fence(body);
            check_csv(csv).map(|()| csv.to_owned()).map_err(OutputError::Format)
        }
        _ => Ok(body.to_owned()),
    }
}

/// The fenced block in `language` (by its info string, any case), else the first fenced block,
/// else the whole answer (models sometimes answer with bare code).
fn extract_code<'a>(answer: &'a str, language: Option<&str>) -> &'a str {
    let blocks = fenced_blocks(answer);
    let wanted = language.map(str::to_ascii_lowercase);
    let matches_language = |block: &&FencedBlock<'_>| {
        let info = block.info.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
        wanted.as_deref().is_some_and(|w| info == w || language_aliases(w).contains(&info.as_str()))
    };
    blocks
        .iter()
        .find(matches_language)
        .or(blocks.first())
        .map_or_else(|| answer.trim(), |block| block.content)
}

/// Short info strings that name the same language (given in lower case).
pub fn language_aliases(language: &str) -> &'static [&'static str] {
    match language {
        "python" => &["py", "python3"],
        "javascript" => &["js", "jsx", "node"],
        "typescript" => &["ts", "tsx"],
        "rust" => &["rs"],
        "shell" | "bash" => &["sh", "bash", "shell", "zsh"],
        "c++" => &["cpp", "cc", "cxx"],
        "c#" => &["cs", "csharp"],
        "yaml" => &["yml"],
        "markdown" => &["md"],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: OutputKind, format: Option<OutputFormat>) -> OutputSpec {
        OutputSpec { kind, format }
    }

    #[test]
    fn limited_prints_the_canonical_value() {
        let s = spec(OutputKind::Limited { allowed: vec!["Go".into(), "Stop".into()] }, None);
        assert_eq!(enforce(&s, " go.\n", false).unwrap(), "Go");
        let error = enforce(&s, "I would go", false).unwrap_err();
        assert!(error.reason().contains("Go, Stop"));
    }

    #[test]
    fn code_block_in_language_is_extracted() {
        let s = spec(OutputKind::Code { language: Some("Python".into()) }, None);
        let answer = "Sure:\n```text\nnotes\n```\n```py\nprint(1)\n```\nDone.";
        assert_eq!(enforce(&s, answer, false).unwrap(), "print(1)");
        assert_eq!(enforce(&s, answer, true).unwrap(), answer);
        assert_eq!(enforce(&s, "print(2)", false).unwrap(), "print(2)");
    }

    #[test]
    fn json_is_unfenced_checked_and_pretty_printed() {
        let s = spec(OutputKind::Text, Some(OutputFormat::Json));
        assert_eq!(enforce(&s, "```json\n{\"a\":1}\n```", false).unwrap(), "{\n  \"a\": 1\n}");
        assert!(matches!(enforce(&s, "{\"a\":", false), Err(OutputError::Format(_))));
    }

    #[test]
    fn xml_and_csv() {
        assert!(
            enforce(&spec(OutputKind::Text, Some(OutputFormat::Xml)), "<a></b>", false).is_err()
        );
        assert_eq!(
            enforce(&spec(OutputKind::Text, Some(OutputFormat::Csv)), "a,b\n1,2", false).unwrap(),
            "a,b\n1,2"
        );
    }
}
