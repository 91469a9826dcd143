//! Checking an answer against an assertion, and a case's score from its assertions. A judge
//! needs a model, so it is graded by the runner; everything else is decided here.

use serde_json::Value;

use super::model::Check;
use crate::output::{ImageFormat, ImageSize};

/// A picture an image tool made, as its assertions see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeenImage {
    pub format: ImageFormat,
    pub size: ImageSize,
}

/// What a run of a case produced, as the assertions see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observed<'a> {
    /// The answer after the tool's expected output is enforced (or the raw answer, when it
    /// missed it).
    pub text: &'a str,
    pub output_tokens: Option<u64>,
    pub cost: Option<f64>,
    pub latency_ms: Option<u64>,
    /// The pictures an image tool made (none for a text tool).
    pub images: &'a [SeenImage],
}

/// An assertion's verdict: whether it passed, its score (0 to 1) and why, when it failed or
/// was graded.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub pass: bool,
    pub score: f64,
    pub reason: Option<String>,
}

impl Verdict {
    fn of(pass: bool, why_not: impl FnOnce() -> String) -> Verdict {
        Verdict { pass, score: if pass { 1.0 } else { 0.0 }, reason: (!pass).then(why_not) }
    }
}

/// The verdict of `check` on `observed`; `None` for a judge, which the runner grades.
pub fn evaluate(check: &Check, observed: &Observed<'_>) -> Option<Verdict> {
    let text = observed.text;
    let shown = || shorten(text);
    let verdict = match check {
        Check::Equals(expected) => Verdict::of(text.trim() == expected.trim(), || {
            format!("the answer {} is not {}", shown(), quoted(expected))
        }),
        Check::OneOf(values) => Verdict::of(values.iter().any(|v| v.trim() == text.trim()), || {
            format!(
                "the answer {} is none of {}",
                shown(),
                values.iter().map(|v| quoted(v)).collect::<Vec<_>>().join(", ")
            )
        }),
        Check::Contains { text: part, ignore_case } => {
            Verdict::of(contains(text, part, *ignore_case), || {
                format!("the answer does not contain {}", quoted(part))
            })
        }
        Check::NotContains { text: part, ignore_case } => {
            Verdict::of(!contains(text, part, *ignore_case), || {
                format!("the answer contains {}", quoted(part))
            })
        }
        Check::StartsWith(start) => {
            Verdict::of(text.trim_start().starts_with(start.as_str()), || {
                format!("the answer {} does not start with {}", shown(), quoted(start))
            })
        }
        Check::Regex(pattern) => match regex::Regex::new(pattern) {
            Ok(regex) => Verdict::of(regex.is_match(text), || {
                format!("the answer {} does not match /{pattern}/", shown())
            }),
            Err(error) => {
                Verdict::of(false, || format!("the regular expression does not compile: {error}"))
            }
        },
        Check::Json => match serde_json::from_str::<Value>(text) {
            Ok(_) => Verdict::of(true, String::new),
            Err(error) => Verdict::of(false, || format!("the answer is not JSON: {error}")),
        },
        Check::JsonSchema(schema) => {
            match (serde_json::from_str::<Value>(text), jsonschema::validator_for(schema)) {
                (Err(error), _) => {
                    Verdict::of(false, || format!("the answer is not JSON: {error}"))
                }
                (_, Err(error)) => {
                    Verdict::of(false, || format!("the JSON Schema is not valid: {error}"))
                }
                (Ok(value), Ok(validator)) => {
                    let first = validator
                        .iter_errors(&value)
                        .next()
                        .map(|e| format!("{} (at `{}`)", e, e.instance_path()));
                    Verdict::of(first.is_none(), || {
                        format!(
                            "the answer does not match the schema: {}",
                            first.unwrap_or_default()
                        )
                    })
                }
            }
        }
        Check::JsonPath { path, value } => json_path(text, path, value),
        Check::MaxLength(limit) => {
            let length = text.chars().count() as u64;
            Verdict::of(length <= *limit, || {
                format!("the answer is {length} characters long, over {limit}")
            })
        }
        Check::MaxTokens(limit) => match observed.output_tokens {
            Some(tokens) => Verdict::of(tokens <= *limit, || {
                format!("the answer took {tokens} tokens, over {limit}")
            }),
            None => Verdict::of(false, || "the provider reported no token count".to_owned()),
        },
        Check::MaxCost(limit) => match observed.cost {
            Some(cost) => {
                Verdict::of(cost <= *limit, || format!("the run cost ${cost:.6}, over ${limit}"))
            }
            None => {
                Verdict::of(false, || "the run has no known cost (an unpriced model)".to_owned())
            }
        },
        Check::MaxLatencyMs(limit) => match observed.latency_ms {
            Some(ms) => {
                Verdict::of(ms <= *limit, || format!("the answer took {ms} ms, over {limit}"))
            }
            None => Verdict::of(false, || "the run's latency is not known".to_owned()),
        },
        Check::Similar { reference, metric, threshold } => {
            let score = metric.score(text.trim(), reference.trim());
            Verdict {
                pass: score >= *threshold,
                score,
                reason: (score < *threshold)
                    .then(|| format!("similarity {score:.2}, under {threshold}")),
            }
        }
        Check::ImageSize(size) => every_image(observed.images, |image| {
            (image.size != *size).then(|| format!("a picture is {}, not {size}", image.size))
        }),
        Check::ImageFormat(format) => every_image(observed.images, |image| {
            (image.format != *format)
                .then(|| format!("a picture is {}, not {}", image.format.name(), format.name()))
        }),
        Check::Judge { .. } => return None,
    };
    Some(verdict)
}

/// Passes when there is at least one picture and `wrong` finds nothing wrong with any.
fn every_image(images: &[SeenImage], wrong: impl Fn(&SeenImage) -> Option<String>) -> Verdict {
    if images.is_empty() {
        return Verdict::of(false, || "the run made no picture".to_owned());
    }
    let first_wrong = images.iter().find_map(wrong);
    Verdict::of(first_wrong.is_none(), || first_wrong.unwrap_or_default())
}

fn contains(text: &str, part: &str, ignore_case: bool) -> bool {
    if ignore_case {
        text.to_lowercase().contains(&part.to_lowercase())
    } else {
        text.contains(part)
    }
}

fn json_path(text: &str, path: &str, expected: &Value) -> Verdict {
    let value = match serde_json::from_str::<Value>(text) {
        Ok(value) => value,
        Err(error) => return Verdict::of(false, || format!("the answer is not JSON: {error}")),
    };
    let path = match serde_json_path::JsonPath::parse(path) {
        Ok(path) => path,
        Err(error) => return Verdict::of(false, || format!("not a JSON path: {error}")),
    };
    let found = path.query(&value).all();
    match found.as_slice() {
        [one] => Verdict::of(*one == expected, || format!("`{path}` is {one}, not {expected}")),
        [] => Verdict::of(false, || format!("`{path}` finds nothing in the answer")),
        many => Verdict::of(false, || format!("`{path}` finds {} values, not one", many.len())),
    }
}

/// A case's score from its assertions' weights and verdicts (1 when it has none), and
/// whether it reaches `threshold`.
pub fn score(verdicts: &[(f64, &Verdict)], threshold: f64) -> (f64, bool) {
    let total: f64 = verdicts.iter().map(|(weight, _)| weight).sum();
    let score = if total > 0.0 {
        verdicts
            .iter()
            .map(|(weight, verdict)| weight * if verdict.pass { 1.0 } else { 0.0 })
            .sum::<f64>()
            / total
    } else {
        1.0
    };
    // A little slack, so that 3 weights of 1/3 reach a threshold of 1.
    (score, score + 1e-9 >= threshold)
}

fn quoted(text: &str) -> String {
    format!("`{}`", shorten_raw(text))
}

fn shorten(text: &str) -> String {
    quoted(text)
}

/// At most 80 characters of `text`, on one line.
fn shorten_raw(text: &str) -> String {
    let line: String = text.trim().chars().map(|c| if c == '\n' { ' ' } else { c }).collect();
    let mut short: String = line.chars().take(80).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::model::Metric;

    fn on(text: &str) -> Observed<'_> {
        Observed {
            text,
            output_tokens: Some(12),
            cost: Some(0.002),
            latency_ms: Some(900),
            images: &[],
        }
    }

    fn passes(check: &Check, text: &str) -> bool {
        evaluate(check, &on(text)).is_some_and(|verdict| verdict.pass)
    }

    #[test]
    fn each_check_passes_and_fails_where_it_should() {
        assert!(passes(&Check::Equals("positive".into()), " positive\n"));
        assert!(!passes(&Check::Equals("positive".into()), "negative"));
        assert!(passes(&Check::OneOf(vec!["a".into(), "b".into()]), "b"));
        assert!(passes(&Check::Contains { text: "REFUND".into(), ignore_case: true }, "a refund"));
        assert!(!passes(
            &Check::Contains { text: "REFUND".into(), ignore_case: false },
            "a refund"
        ));
        assert!(passes(&Check::NotContains { text: "sorry".into(), ignore_case: false }, "fine"));
        assert!(passes(&Check::Regex(r"^\d{3}$".into()), "123"));
        assert!(!passes(&Check::Regex(r"^\d{3}$".into()), "12a"));
        assert!(passes(&Check::StartsWith("Dear".into()), "  Dear Ann"));
        assert!(passes(&Check::Json, r#"{"a": 1}"#));
        assert!(!passes(&Check::Json, "{a: 1}"));
        let schema = serde_json::json!({"type": "object", "required": ["a"]});
        assert!(passes(&Check::JsonSchema(schema.clone()), r#"{"a": 1}"#));
        assert!(!passes(&Check::JsonSchema(schema), r#"{"b": 1}"#));
        let path = |value| Check::JsonPath { path: "$.items[0].name".into(), value };
        assert!(passes(&path(serde_json::json!("x")), r#"{"items": [{"name": "x"}]}"#));
        assert!(!passes(&path(serde_json::json!("y")), r#"{"items": [{"name": "x"}]}"#));
        assert!(passes(&Check::MaxLength(3), "abc"));
        assert!(!passes(&Check::MaxLength(2), "abc"));
        assert!(passes(&Check::MaxTokens(12), ""));
        assert!(!passes(&Check::MaxCost(0.001), ""));
        assert!(passes(&Check::MaxLatencyMs(1000), ""));
        let similar = |threshold| Check::Similar {
            reference: "kitten".into(),
            metric: Metric::Levenshtein,
            threshold,
        };
        assert!(passes(&similar(0.5), "sitting"));
        assert!(!passes(&similar(0.9), "sitting"));
        let unknown =
            Observed { text: "", output_tokens: None, cost: None, latency_ms: None, images: &[] };
        let verdict = evaluate(&Check::MaxCost(1.0), &unknown).unwrap();
        assert!(!verdict.pass && verdict.reason.unwrap().contains("unpriced"));
    }

    #[test]
    fn image_checks_need_a_picture_and_hold_for_every_one() {
        let square = ImageSize { width: 64, height: 64 };
        let wide = ImageSize { width: 96, height: 64 };
        let png = |size| SeenImage { format: ImageFormat::Png, size };
        let made = [png(square), png(wide)];
        let seen = Observed { images: &made, ..on("") };
        let size = evaluate(&Check::ImageSize(square), &seen).unwrap();
        assert!(!size.pass);
        assert_eq!(size.reason.as_deref(), Some("a picture is 96x64, not 64x64"));
        assert!(evaluate(&Check::ImageFormat(ImageFormat::Png), &seen).unwrap().pass);
        let webp = evaluate(&Check::ImageFormat(ImageFormat::Webp), &seen).unwrap();
        assert_eq!(webp.reason.as_deref(), Some("a picture is png, not webp"));
        let one = [png(square)];
        assert!(
            evaluate(&Check::ImageSize(square), &Observed { images: &one, ..on("") }).unwrap().pass
        );
        let none = evaluate(&Check::ImageFormat(ImageFormat::Png), &on("a text answer")).unwrap();
        assert_eq!(none.reason.as_deref(), Some("the run made no picture"));
    }

    #[test]
    fn a_score_weighs_its_assertions() {
        let (pass, fail) = (Verdict::of(true, String::new), Verdict::of(false, String::new));
        assert_eq!(score(&[(3.0, &pass), (1.0, &fail)], 0.75), (0.75, true));
        assert!(!score(&[(1.0, &pass), (3.0, &fail)], 0.5).1);
        assert_eq!(score(&[], 1.0), (1.0, true));
        let third = [(1.0 / 3.0, &pass), (1.0 / 3.0, &pass), (1.0 / 3.0, &pass)];
        assert!(score(&third, 1.0).1);
    }
}
