//! An image API's whole answer, read into types that borrow each picture's base64 from the
//! body (copied only where the JSON escaped a character of it), and its pictures decoded one at
//! a time: OpenAI's `data` list and Gemini's `inlineData` parts, with their usage, a revised
//! prompt, and the reasons a model made no picture. A large answer is so held once, beside its
//! decoded pictures, rather than also as a parsed copy.

use std::borrow::Cow;

use serde::Deserialize;

use super::{ImageAnswer, picture};
use crate::endpoint::{ApiKind, Endpoint};
use crate::error::ProviderError;
use crate::event::Usage;

/// The pictures in a whole answer of `endpoint`'s API.
pub fn parse(endpoint: &Endpoint, body: &[u8]) -> Result<ImageAnswer, ProviderError> {
    let unreadable = |error: serde_json::Error| {
        ProviderError::Unusable(format!("the image API's answer is not JSON: {error}"))
    };
    match endpoint.api {
        ApiKind::Gemini | ApiKind::Vertex => {
            let answer = serde_json::from_slice(body).map_err(unreadable)?;
            parse_gemini(&endpoint.display, &answer)
        }
        _ => parse_openai(&serde_json::from_slice(body).map_err(unreadable)?),
    }
}

/// OpenAI's answer, as much of it as is read.
#[derive(Deserialize)]
struct OpenAiAnswer<'a> {
    #[serde(borrow)]
    data: Option<Vec<OpenAiPicture<'a>>>,
    usage: Option<OpenAiUsage>,
}

#[derive(Deserialize)]
struct OpenAiPicture<'a> {
    #[serde(borrow)]
    b64_json: Option<Text<'a>>,
    /// Whether the server offered a link instead (whatever it holds).
    #[serde(default, deserialize_with = "present")]
    url: bool,
    revised_prompt: Option<String>,
}

#[derive(Deserialize)]
struct OpenAiUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

/// A string borrowed from the body where it can be: serde borrows a `Cow` only when it is a
/// field of its own, not inside an `Option`, hence this wrapper.
#[derive(Deserialize)]
#[serde(transparent)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

/// Whether a field is there, whatever it holds.
fn present<'de, D: serde::Deserializer<'de>>(field: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(field).map(|_| true)
}

fn parse_openai(answer: &OpenAiAnswer<'_>) -> Result<ImageAnswer, ProviderError> {
    let items = answer.data.as_ref().ok_or_else(|| {
        ProviderError::Unusable("the image API's answer has no `data` list".into())
    })?;
    let mut pictures = Vec::with_capacity(items.len());
    let mut revised_prompt = None;
    for item in items {
        let Some(Text(data)) = &item.b64_json else {
            let problem = if item.url {
                "the server sent a link to the picture, not the picture; llmtool does not download what a server points at (it asks for `b64_json`)"
            } else {
                "a picture in the answer has no `b64_json`"
            };
            return Err(ProviderError::Unusable(problem.into()));
        };
        pictures.push(picture(data, None)?);
        if revised_prompt.is_none() {
            revised_prompt.clone_from(&item.revised_prompt);
        }
    }
    if pictures.is_empty() {
        return Err(ProviderError::Unusable("the image API answered no picture".into()));
    }
    let counted = answer.usage.as_ref();
    let usage = Usage {
        input_tokens: counted.and_then(|u| u.input_tokens),
        output_tokens: counted.and_then(|u| u.output_tokens),
        ..Usage::default()
    };
    Ok(ImageAnswer { pictures, revised_prompt, text: None, usage })
}

/// Gemini's answer, as much of it as is read (its REST API writes camelCase; snake_case is
/// taken too, as some proxies write it).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiAnswer<'a> {
    #[serde(borrow)]
    candidates: Option<Vec<GeminiCandidate<'a>>>,
    #[serde(alias = "prompt_feedback")]
    prompt_feedback: Option<GeminiFeedback>,
    #[serde(alias = "usage_metadata")]
    usage_metadata: Option<GeminiUsage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiFeedback {
    #[serde(alias = "block_reason")]
    block_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiCandidate<'a> {
    #[serde(borrow)]
    content: Option<GeminiContent<'a>>,
    #[serde(alias = "finish_reason")]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct GeminiContent<'a> {
    #[serde(borrow)]
    parts: Option<Vec<GeminiPart<'a>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiPart<'a> {
    thought: Option<bool>,
    #[serde(borrow, alias = "inline_data")]
    inline_data: Option<GeminiInline<'a>>,
    text: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiInline<'a> {
    #[serde(borrow, default)]
    data: Cow<'a, str>,
    #[serde(alias = "mime_type")]
    mime_type: Option<String>,
}

/// `usageMetadata`: the tokens of the prompt, the answer and the thinking.
#[derive(Deserialize)]
struct GeminiUsage {
    #[serde(rename = "promptTokenCount", alias = "prompt_token_count")]
    prompt: Option<u64>,
    #[serde(rename = "candidatesTokenCount", alias = "candidates_token_count")]
    candidates: Option<u64>,
    #[serde(rename = "thoughtsTokenCount", alias = "thoughts_token_count")]
    thoughts: Option<u64>,
}

/// Gemini's finish reasons that say a filter stopped the answer (the others, such as
/// `MAX_TOKENS`, `NO_IMAGE` or `IMAGE_OTHER`, say it ended for another reason).
const FILTERED: [&str; 8] = [
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
];

fn parse_gemini(provider: &str, answer: &GeminiAnswer<'_>) -> Result<ImageAnswer, ProviderError> {
    if let Some(reason) = answer.prompt_feedback.as_ref().and_then(|f| f.block_reason.as_ref()) {
        return Err(ProviderError::ContentFiltered {
            provider: provider.into(),
            reason: reason.clone(),
        });
    }
    let mut pictures = Vec::new();
    let mut text = String::new();
    let mut finish = None;
    for candidate in answer.candidates.iter().flatten() {
        finish = finish.or(candidate.finish_reason.as_deref());
        let parts = candidate.content.iter().flat_map(|content| content.parts.iter().flatten());
        for part in parts {
            // A thinking model's drafts (its pictures too) are not its answer.
            if part.thought == Some(true) {
                continue;
            }
            if let Some(inline) = &part.inline_data {
                pictures.push(picture(&inline.data, inline.mime_type.as_deref())?);
            } else if let Some(words) = &part.text {
                text.push_str(words);
            }
        }
    }
    if pictures.is_empty() {
        return Err(match finish {
            Some(reason) if FILTERED.contains(&reason) => {
                ProviderError::ContentFiltered { provider: provider.into(), reason: reason.into() }
            }
            Some(reason) if reason != "STOP" => ProviderError::Unusable(format!(
                "the model answered no picture (it stopped with `{reason}`)"
            )),
            _ => ProviderError::Unusable(if text.is_empty() {
                "the model answered no picture".into()
            } else {
                format!("the model answered no picture, only text: {}", text.trim())
            }),
        });
    }
    let counted = answer.usage_metadata.as_ref();
    // Thinking is paid as output, as in a chat answer.
    let thoughts = counted.and_then(|u| u.thoughts);
    let usage = Usage {
        input_tokens: counted.and_then(|u| u.prompt),
        output_tokens: counted.and_then(|u| u.candidates).map(|n| n + thoughts.unwrap_or(0)),
        reasoning_tokens: thoughts,
        ..Usage::default()
    };
    let text = Some(text.trim().to_owned()).filter(|t| !t.is_empty());
    Ok(ImageAnswer { pictures, revised_prompt: None, text, usage })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pictures_base64_is_borrowed_from_the_body_unless_it_was_escaped() {
        let plain: OpenAiAnswer<'_> =
            serde_json::from_str(r#"{"data": [{"b64_json": "iVBORw0K+/=="}]}"#).unwrap();
        let Text(data) = plain.data.unwrap().remove(0).b64_json.unwrap();
        assert!(matches!(data, Cow::Borrowed("iVBORw0K+/==")));
        // A server that escapes `/` (JSON allows it) still gives the same text, owned.
        let escaped: OpenAiAnswer<'_> =
            serde_json::from_str(r#"{"data": [{"b64_json": "iVBORw0K+\/=="}]}"#).unwrap();
        let Text(data) = escaped.data.unwrap().remove(0).b64_json.unwrap();
        assert!(matches!(&data, Cow::Owned(text) if text == "iVBORw0K+/=="));
        let gemini: GeminiAnswer<'_> = serde_json::from_str(
            r#"{"candidates": [{"content": {"parts": [{"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]}}]}"#,
        )
        .unwrap();
        let parts = gemini.candidates.unwrap().remove(0).content.unwrap().parts.unwrap();
        assert!(matches!(parts[0].inline_data.as_ref().unwrap().data, Cow::Borrowed("AAAA")));
    }

    #[test]
    fn nulls_where_a_server_has_nothing_to_say_are_nothing() {
        let openai: OpenAiAnswer<'_> = serde_json::from_str(
            r#"{"data": [{"b64_json": null, "url": null, "revised_prompt": null}], "usage": null}"#,
        )
        .unwrap();
        assert!(openai.usage.is_none());
        assert!(openai.data.unwrap()[0].url, "a `url` key, even null, is a link offered");
        let gemini: GeminiAnswer<'_> = serde_json::from_str(
            r#"{"candidates": [{"content": {"parts": null}, "finish_reason": "STOP"}], "usage_metadata": null, "promptFeedback": null}"#,
        )
        .unwrap();
        assert_eq!(gemini.candidates.unwrap()[0].finish_reason.as_deref(), Some("STOP"));
    }
}
