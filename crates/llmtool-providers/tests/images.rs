//! Image generation's requests and answers, for OpenAI's images API (and servers that offer it)
//! and Gemini's image output, on answers shaped as the providers' references show them.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use base64::Engine as _;
use llmtool_format::output::{ImageFormat, ImageParams, ImageSize, ImageSpec};
use llmtool_providers::images::{self, ImageRequest};
use llmtool_providers::{ApiKind, Endpoint, Features, ProviderError};
use llmtool_testkit::pictures::png;
use serde_json::json;

fn endpoint(provider: &str, api: ApiKind) -> Endpoint {
    Endpoint {
        provider: provider.into(),
        display: provider.into(),
        api,
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: Some("sk-images-secret".into()),
        key_variable: None,
        features: Features::OPENAI,
        vertex_path: None,
    }
}

fn request(model: &str, spec: ImageSpec, params: ImageParams) -> ImageRequest {
    ImageRequest { model: model.into(), prompt: "a lighthouse in a storm".into(), spec, params }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn gpt_image_models_are_asked_for_their_format_size_count_and_quality() {
    let spec = ImageSpec {
        format: ImageFormat::Webp,
        size: Some(ImageSize { width: 1536, height: 1024 }),
    };
    let params = ImageParams { quality: Some("low".into()), count: Some(2), seed: Some(7) };
    let mut warnings = Vec::new();
    let http = images::build(
        &endpoint("openai", ApiKind::OpenAi),
        &request("gpt-image-1", spec, params),
        &mut warnings,
    )
    .unwrap();
    assert_eq!(http.url, "http://127.0.0.1:9/v1/images/generations");
    assert_eq!(
        http.body,
        json!({
            "model": "gpt-image-1", "prompt": "a lighthouse in a storm", "size": "1536x1024",
            "n": 2, "quality": "low", "output_format": "webp"
        })
    );
    assert_eq!(warnings, ["`seed` dropped: OpenAI's image API takes none"]);
    let shown = http.display_redacted();
    assert!(!shown.contains("sk-images-secret") && shown.contains("Bearer [redacted]"), "{shown}");
}

#[test]
fn a_gpt_image_model_behind_a_proxy_is_still_asked_for_its_format() {
    let spec = ImageSpec { format: ImageFormat::Jpeg, size: None };
    let http = images::build(
        &endpoint("litellm", ApiKind::OpenAi),
        &request("openai/gpt-image-1", spec, ImageParams::default()),
        &mut Vec::new(),
    )
    .unwrap();
    assert_eq!(http.body["output_format"], "jpeg");
    assert!(http.body.get("response_format").is_none(), "{}", http.body);
}

#[test]
fn other_servers_are_asked_for_base64_and_get_the_seed() {
    let mut warnings = Vec::new();
    let params = ImageParams { seed: Some(3), ..ImageParams::default() };
    let spec = ImageSpec { format: ImageFormat::Jpeg, size: None };
    let http = images::build(
        &endpoint("localai", ApiKind::OpenAi),
        &request("stable-diffusion-3.5", spec, params),
        &mut warnings,
    )
    .unwrap();
    assert_eq!(http.body["response_format"], "b64_json");
    assert_eq!(http.body["seed"], 3);
    assert!(http.body.get("size").is_none() && http.body.get("output_format").is_none());
    assert!(warnings[0].contains("saved as they come"), "{warnings:?}");
}

#[test]
fn gemini_is_asked_for_pictures_at_its_nearest_aspect_ratio() {
    let mut warnings = Vec::new();
    let spec =
        ImageSpec { format: ImageFormat::Png, size: Some(ImageSize { width: 1000, height: 560 }) };
    let params = ImageParams { quality: Some("high".into()), count: None, seed: Some(11) };
    let http = images::build(
        &endpoint("gemini", ApiKind::Gemini),
        &request("gemini-2.5-flash-image", spec, params),
        &mut warnings,
    )
    .unwrap();
    assert!(
        http.url.ends_with("/v1beta/models/gemini-2.5-flash-image:generateContent"),
        "{}",
        http.url
    );
    assert_eq!(
        http.body["generationConfig"],
        json!({ "responseModalities": ["IMAGE"], "imageConfig": { "aspectRatio": "16:9" }, "seed": 11 })
    );
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings.iter().any(|w| w.contains("16:9"))
            && warnings.iter().any(|w| w.contains("quality"))
    );
}

#[test]
fn gemini_3_is_asked_for_the_resolution_of_the_longer_side() {
    let build = |model: &str, width, height| {
        let mut warnings = Vec::new();
        let spec = ImageSpec { format: ImageFormat::Png, size: Some(ImageSize { width, height }) };
        let http = images::build(
            &endpoint("gemini", ApiKind::Gemini),
            &request(model, spec, ImageParams::default()),
            &mut warnings,
        )
        .unwrap();
        (http.body["generationConfig"]["imageConfig"].clone(), warnings)
    };
    let (config, warnings) = build("gemini-3-pro-image-preview", 2048, 1152);
    assert_eq!(config, json!({ "aspectRatio": "16:9", "imageSize": "2K" }));
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(build("gemini-3-pro-image-preview", 1024, 1024).0["imageSize"], "1K");
    assert_eq!(build("models/gemini-3-pro-image-preview", 4096, 4096).0["imageSize"], "4K");
    // The 2.x models take no resolution: a large size is said to be out of reach.
    let (config, warnings) = build("gemini-2.5-flash-image", 2048, 2048);
    assert_eq!(config, json!({ "aspectRatio": "1:1" }));
    assert!(warnings.iter().any(|w| w.contains("about 1024 pixels")), "{warnings:?}");
}

#[test]
fn apis_without_pictures_say_so() {
    let error = images::build(
        &endpoint("anthropic", ApiKind::Anthropic),
        &request("claude-sonnet-4-5", ImageSpec::default(), ImageParams::default()),
        &mut Vec::new(),
    )
    .unwrap_err();
    assert!(error.to_string().contains("makes no pictures"), "{error}");
}

#[test]
fn openai_answers_give_checked_measured_pictures_and_usage() {
    let answer = json!({
        "created": 1_713_833_628,
        "data": [
            { "b64_json": b64(&png(64, 32)), "revised_prompt": "A lighthouse, storm clouds, waves" },
            { "b64_json": b64(&png(64, 32)) }
        ],
        "usage": { "total_tokens": 100, "input_tokens": 50, "output_tokens": 50,
                   "input_tokens_details": { "text_tokens": 10, "image_tokens": 40 } }
    });
    let parsed =
        images::parse(&endpoint("openai", ApiKind::OpenAi), answer.to_string().as_bytes()).unwrap();
    assert_eq!(parsed.pictures.len(), 2);
    assert_eq!(parsed.pictures[0].size, ImageSize { width: 64, height: 32 });
    assert_eq!(parsed.pictures[0].format, ImageFormat::Png);
    assert_eq!(parsed.revised_prompt.as_deref(), Some("A lighthouse, storm clouds, waves"));
    assert_eq!((parsed.usage.input_tokens, parsed.usage.output_tokens), (Some(50), Some(50)));
}

#[test]
fn links_broken_pictures_and_lies_are_refused() {
    let openai = endpoint("openai", ApiKind::OpenAi);
    let parse = |answer: serde_json::Value| images::parse(&openai, answer.to_string().as_bytes());
    let link = parse(json!({ "data": [{ "url": "http://169.254.169.254/picture.png" }] }));
    assert!(matches!(&link, Err(ProviderError::Unusable(m)) if m.contains("does not download")));
    let text = parse(json!({ "data": [{ "b64_json": b64(b"<svg></svg>") }] }));
    assert!(text.unwrap_err().to_string().contains("not PNG, JPEG or WebP"));
    // A PNG header that says 0 x 0.
    let mut empty = png(1, 1);
    empty[16..24].copy_from_slice(&[0; 8]);
    let nothing = parse(json!({ "data": [{ "b64_json": b64(&empty) }] }));
    assert!(nothing.unwrap_err().to_string().contains("no readable size"));
    // A PNG header that says 100,000 pixels wide.
    let mut huge = png(1, 1);
    huge[16..20].copy_from_slice(&100_000u32.to_be_bytes());
    let huge = parse(json!({ "data": [{ "b64_json": b64(&huge) }] }));
    assert!(huge.unwrap_err().to_string().contains("100000x1, larger than 8192"));
    let broken = parse(json!({ "data": [{ "b64_json": "%%%" }] }));
    assert!(broken.unwrap_err().to_string().contains("base64"));
    let none = parse(json!({ "data": [] }));
    assert!(none.unwrap_err().to_string().contains("no picture"));
    let not_json = images::parse(&openai, b"<html>502</html>");
    assert!(not_json.unwrap_err().to_string().contains("not JSON"));
    // Gemini says what each picture is; a PNG said to be a JPEG is refused.
    let gemini = endpoint("gemini", ApiKind::Gemini);
    let lie = json!({ "candidates": [{ "content": { "parts": [
        { "inlineData": { "mimeType": "image/jpeg", "data": b64(&png(8, 8)) } }
    ] } }] });
    let error = images::parse(&gemini, lie.to_string().as_bytes()).unwrap_err();
    assert!(error.to_string().contains("said to be jpeg is png"), "{error}");
}

#[test]
fn gemini_answers_give_inline_pictures_their_text_and_refusals() {
    let gemini = endpoint("gemini", ApiKind::Gemini);
    let answer = json!({
        "candidates": [{ "content": { "role": "model", "parts": [
            { "text": "Here is a lighthouse." },
            { "thought": true, "inlineData": { "mimeType": "image/png", "data": b64(&png(4, 4)) } },
            { "inline_data": { "mime_type": "image/png", "data": b64(&png(16, 9)) } }
        ] }, "finishReason": "STOP" }],
        "usageMetadata": { "promptTokenCount": 12, "candidatesTokenCount": 1290 }
    });
    let parsed = images::parse(&gemini, answer.to_string().as_bytes()).unwrap();
    assert_eq!(parsed.pictures.len(), 1, "a thinking model's draft is not a picture of the answer");
    assert_eq!(parsed.pictures[0].size, ImageSize { width: 16, height: 9 });
    assert_eq!(parsed.text.as_deref(), Some("Here is a lighthouse."));
    assert_eq!(parsed.usage.output_tokens, Some(1290));

    let blocked = json!({ "promptFeedback": { "blockReason": "SAFETY" } });
    let error = images::parse(&gemini, blocked.to_string().as_bytes()).unwrap_err();
    assert!(matches!(error, ProviderError::ContentFiltered { .. }), "{error}");
    let refused = json!({ "candidates": [{ "finishReason": "IMAGE_SAFETY" }] });
    let error = images::parse(&gemini, refused.to_string().as_bytes()).unwrap_err();
    assert!(matches!(error, ProviderError::ContentFiltered { .. }), "{error}");
    assert!(error.to_string().contains("IMAGE_SAFETY"), "{error}");
    // An answer that ran out of tokens, or made no picture, was not filtered.
    for reason in ["MAX_TOKENS", "NO_IMAGE"] {
        let ended = json!({ "candidates": [{ "finishReason": reason }] });
        let error = images::parse(&gemini, ended.to_string().as_bytes()).unwrap_err();
        assert!(matches!(error, ProviderError::Unusable(_)), "{error}");
        assert!(error.to_string().contains(reason), "{error}");
    }
    let words = json!({ "candidates": [{ "content": { "parts": [{ "text": "I cannot draw." }] }, "finishReason": "STOP" }] });
    let error = images::parse(&gemini, words.to_string().as_bytes()).unwrap_err();
    assert!(error.to_string().contains("only text: I cannot draw."), "{error}");
}

mod over_http {
    //! The whole run of an image tool against the mock server, with its faults.

    use std::time::Duration;

    use llmtool_format::output::{ImageFormat, ImageSize, ImageSpec, OutputKind, OutputSpec};
    use llmtool_providers::backend::Backend;
    use llmtool_providers::pricing::{Price, PriceEntry};
    use llmtool_providers::resolve::Target;
    use llmtool_providers::run::{RunOptions, RunRequest, run};
    use llmtool_providers::transport::{RetryPolicy, Timeouts, Transport};
    use llmtool_providers::{ApiKind, Endpoint, Features, Params, ProviderError};
    use llmtool_testkit::{Mock, Reply};
    use serde_json::json;

    use super::{b64, png};

    fn request(mock: &Mock, params: Params) -> RunRequest {
        let endpoint = Endpoint {
            provider: "mock".into(),
            display: "Mock".into(),
            api: ApiKind::OpenAi,
            base_url: mock.url.clone(),
            api_key: None,
            key_variable: None,
            features: Features::COMPATIBLE,
            vertex_path: None,
        };
        let spec =
            ImageSpec { format: ImageFormat::Png, size: Some(ImageSize { width: 48, height: 32 }) };
        RunRequest {
            history: Vec::new(),
            target: Target::new(endpoint, "gpt-image-1"),
            prompt: "a lighthouse in a storm".into(),
            chat: false,
            params,
            spec: OutputSpec { kind: OutputKind::Image(spec), format: None },
            price: Some(PriceEntry {
                entry: "mock/gpt-image-1".into(),
                source: "this test".into(),
                price: Price { input: 5e-6, output: 40e-6, ..Price::default() },
            }),
            redaction: None,
            notices: Vec::new(),
            secrets: llmtool_providers::Redactor::default(),
            cache: false,
            cache_key: None,
            functions: None,
        }
    }

    fn transport(retries: u32) -> Transport {
        let timeouts = Timeouts { idle: Duration::from_secs(5), ..Timeouts::default() };
        let retry = RetryPolicy {
            max_retries: retries,
            max_rate_limit_retries: retries,
            base_delay: Duration::from_millis(1),
            ..RetryPolicy::default()
        };
        Transport::new(timeouts, retry).unwrap()
    }

    fn pictures(count: usize) -> Reply {
        let data: Vec<_> = (0..count).map(|_| json!({ "b64_json": b64(&png(48, 32)) })).collect();
        let body = json!({ "data": data, "usage": { "input_tokens": 10, "output_tokens": 1000 } });
        Reply::json(200, body.to_string())
    }

    #[tokio::test]
    async fn an_image_tool_gets_its_pictures_their_size_and_cost() {
        let mock = Mock::start(vec![pictures(2)]).await;
        let mut params = Params::default();
        params.extra.insert("n".into(), json!(2));
        params.extra.insert("quality".into(), json!("low"));
        let report = run(
            &Backend::Http(&transport(0)),
            &request(&mock, params),
            RunOptions::default(),
            &mut |_| panic!("pictures are not text"),
        )
        .await
        .unwrap();
        assert_eq!(report.pictures.len(), 2);
        assert!(report.pictures.iter().all(|p| p.size == ImageSize { width: 48, height: 32 }));
        assert_eq!(report.output, None);
        let cost = report.cost.unwrap();
        assert!((cost - (10.0 * 5e-6 + 1000.0 * 40e-6)).abs() < 1e-12, "{cost}");
        let sent = mock.requests();
        assert_eq!(sent[0].path, "/images/generations");
        assert_eq!(sent[0].body["size"], "48x32");
        assert_eq!(
            (sent[0].body["n"].clone(), sent[0].body["quality"].clone()),
            (json!(2), json!("low"))
        );
        assert_eq!(sent[0].body["output_format"], "png");
    }

    #[tokio::test]
    async fn server_errors_and_rate_limits_are_retried_and_bad_answers_are_refused() {
        let mock = Mock::start(vec![
            Reply::json(500, r#"{"error":{"message":"overloaded"}}"#),
            Reply::json(429, r#"{"error":{"message":"slow down"}}"#)
                .with_header("retry-after", "0"),
            pictures(1),
        ])
        .await;
        let report = run(
            &Backend::Http(&transport(2)),
            &request(&mock, Params::default()),
            RunOptions::default(),
            &mut |_| {},
        )
        .await
        .unwrap();
        assert_eq!(report.pictures.len(), 1);
        assert_eq!(mock.requests().len(), 3);

        // The link leads to another mock: were it fetched, that mock would see a request; were
        // the answer asked for again, this one would see a second.
        let elsewhere = Mock::start(vec![]).await;
        let link = format!(r#"{{"data":[{{"url":"{}/x.png"}}]}}"#, elsewhere.url);
        let mock = Mock::start(vec![Reply::json(200, link.clone()), Reply::json(200, link)]).await;
        let error = run(
            &Backend::Http(&transport(2)),
            &request(&mock, Params::default()),
            RunOptions::default(),
            &mut |_| {},
        )
        .await
        .unwrap_err();
        assert!(
            matches!(&error, ProviderError::Unusable(m) if m.contains("does not download")),
            "{error}"
        );
        assert_eq!(mock.requests().len(), 1, "a picture that cannot be used is not asked again");
        assert!(elsewhere.requests().is_empty(), "the link is not followed");
    }
}
