//! Image generation: the request an image tool sends, and the pictures read out of the answer.
//!
//! Two APIs, as data in and data out (the transport sends the request):
//! - OpenAI's `images/generations`, also offered by OpenAI-compatible servers: the pictures
//!   come back as base64 (`b64_json`); a link instead of the bytes is refused, since llmtool
//!   does not download what a server points at;
//! - Gemini's `generateContent` with `responseModalities: ["IMAGE"]` (AI Studio and Vertex):
//!   the pictures are `inlineData` parts.
//!
//! Each picture is checked to be what it says (PNG, JPEG or WebP, by its first bytes) and
//! measured, so that a run reports the real size, not the one asked for.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use base64::Engine as _;
use serde_json::json;

use llmtool_format::output::{ImageFormat, ImageParams, ImageSize, ImageSpec, MAX_SIDE};

use crate::backend::Backend;
use crate::endpoint::{ApiKind, Endpoint};
use crate::error::ProviderError;
use crate::event::{Decoder, StreamEvent, Usage};
use crate::http::HttpRequest;
use crate::run::{RunReport, RunRequest};
use crate::transport::Delivery;

mod answer;

pub use answer::parse;

/// The largest picture accepted, decoded (a 4096x4096 PNG of noise is about 50 MiB).
pub const MAX_IMAGE_BYTES: usize = 64 << 20;

/// What an image tool asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRequest {
    pub model: String,
    /// The rendered prompt.
    pub prompt: String,
    pub spec: ImageSpec,
    pub params: ImageParams,
}

impl ImageRequest {
    /// The image request of `run`, an image tool's run asking for `spec`.
    pub fn of(run: &RunRequest, spec: &ImageSpec) -> Self {
        Self {
            model: run.target.model.clone(),
            prompt: run.image_prompt(),
            spec: spec.clone(),
            params: ImageParams::from_extra(&run.params.extra),
        }
    }
}

/// One picture, as received. Its bytes are shared, not copied, by what keeps or hands it on
/// (a server both stores it with the run and returns it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    pub bytes: bytes::Bytes,
    pub format: ImageFormat,
    pub size: ImageSize,
}

/// A picture as a run's JSON report and its record describe it, never its bytes: what it is,
/// its SHA-256, and where it was saved (none for one handed back to a server's client).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SavedImage {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub format: String,
    pub width: u32,
    pub height: u32,
    pub bytes: u64,
    pub sha256: String,
}

/// What an image API answered.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageAnswer {
    pub pictures: Vec<Picture>,
    /// The prompt as the model rewrote it, when the API says (DALL-E 3 does).
    pub revised_prompt: Option<String>,
    /// Text the model wrote beside its pictures (Gemini may).
    pub text: Option<String>,
    pub usage: Usage,
}

/// Whether `model` is one of OpenAI's own image models, which take `output_format` and always
/// answer in base64, rather than the older `response_format`.
fn is_gpt_image(model: &str) -> bool {
    // As a proxy may name it too: `openai/gpt-image-1`, any case.
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    name.starts_with("gpt-image") || name.starts_with("chatgpt-image")
}

/// The HTTP request for `request` on `endpoint`; `warnings` says what the API cannot take.
pub fn build(
    endpoint: &Endpoint,
    request: &ImageRequest,
    warnings: &mut Vec<String>,
) -> Result<HttpRequest, ProviderError> {
    match endpoint.api {
        ApiKind::OpenAi => Ok(openai(endpoint, request, warnings)),
        ApiKind::Gemini | ApiKind::Vertex
            if request.model.to_ascii_lowercase().starts_with("imagen") =>
        {
            Err(ProviderError::Unsupported(format!(
                "`{}` is served at Imagen's own `:predict` API, which llmtool does not speak yet; use a Gemini image model (such as `gemini-2.5-flash-image`)",
                request.model
            )))
        }
        ApiKind::Gemini | ApiKind::Vertex => Ok(gemini(endpoint, request, warnings)),
        ApiKind::Anthropic | ApiKind::Local => Err(ProviderError::Unsupported(format!(
            "{} makes no pictures; run an image tool on OpenAI, Gemini, Vertex AI or a server with `/v1/images/generations`",
            endpoint.display
        ))),
    }
}

fn openai(endpoint: &Endpoint, request: &ImageRequest, warnings: &mut Vec<String>) -> HttpRequest {
    let mut body = json!({ "model": request.model, "prompt": request.prompt });
    let fields = body.as_object_mut().expect("a JSON object literal");
    if let Some(size) = request.spec.size {
        fields.insert("size".into(), json!(size.to_string()));
    }
    if let Some(count) = request.params.count {
        fields.insert("n".into(), json!(count));
    }
    if let Some(quality) = &request.params.quality {
        fields.insert("quality".into(), json!(quality));
    }
    if is_gpt_image(&request.model) {
        fields.insert("output_format".into(), json!(request.spec.format.name()));
    } else {
        fields.insert("response_format".into(), json!("b64_json"));
        if request.spec.format != ImageFormat::Png {
            warnings.push(format!(
                "`{}` pictures asked for: `{}` takes no output format, and its pictures are saved as they come",
                request.spec.format.name(),
                request.model
            ));
        }
    }
    if request.params.seed.is_some() {
        if endpoint.provider == "openai" {
            warnings.push("`seed` dropped: OpenAI's image API takes none".to_owned());
        } else {
            fields.insert("seed".into(), json!(request.params.seed));
        }
    }
    crate::openai::post(endpoint, "images/generations", body)
}

/// The aspect ratios Gemini's image models take.
const GEMINI_RATIOS: [(u32, u32); 10] =
    [(1, 1), (2, 3), (3, 2), (3, 4), (4, 3), (4, 5), (5, 4), (9, 16), (16, 9), (21, 9)];

/// The ratio of Gemini's nearest to `size`'s shape (by the logarithm of width over height).
fn gemini_ratio(size: ImageSize) -> (u32, u32) {
    let shape = (f64::from(size.width) / f64::from(size.height)).ln();
    let distance = |&(w, h): &(u32, u32)| (shape - (f64::from(w) / f64::from(h)).ln()).abs();
    GEMINI_RATIOS.into_iter().min_by(|a, b| distance(a).total_cmp(&distance(b))).unwrap_or((1, 1))
}

/// Whether `model` is of Gemini's 2.x image models, which take no resolution.
fn is_gemini_2(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    name.starts_with("gemini-2")
}

fn gemini(endpoint: &Endpoint, request: &ImageRequest, warnings: &mut Vec<String>) -> HttpRequest {
    let mut config = serde_json::Map::new();
    config.insert("responseModalities".into(), json!(["IMAGE"]));
    if let Some(size) = request.spec.size {
        let (w, h) = gemini_ratio(size);
        let mut image = json!({ "aspectRatio": format!("{w}:{h}") });
        if u64::from(size.width) * u64::from(h) != u64::from(size.height) * u64::from(w) {
            warnings.push(format!(
                "size {size}: Gemini takes an aspect ratio, not a size; asked for {w}:{h}, the nearest it takes"
            ));
        }
        // Gemini 3's image models take a resolution by the longer side's tier; the 2.x ones
        // make about 1024 pixels a side whatever is asked.
        let longer = size.width.max(size.height);
        if is_gemini_2(&request.model) {
            if longer > 1536 {
                warnings.push(format!(
                    "size {size}: {} makes pictures of about 1024 pixels a side",
                    request.model
                ));
            }
        } else {
            image["imageSize"] = json!(match longer {
                ..=1536 => "1K",
                1537..=3072 => "2K",
                _ => "4K",
            });
        }
        config.insert("imageConfig".into(), image);
    }
    if let Some(count) = request.params.count.filter(|&n| n > 1) {
        warnings.push(format!(
            "`n` = {count}: Gemini's image models make one picture a request; asked for one"
        ));
    }
    if let Some(seed) = request.params.seed {
        config.insert("seed".into(), json!(seed));
    }
    if request.params.quality.is_some() {
        warnings.push("`quality` dropped: Gemini's image models take none".to_owned());
    }
    if request.spec.format != ImageFormat::Png {
        warnings.push(format!(
            "`{}` pictures asked for: Gemini takes no output format, and its pictures are saved as they come",
            request.spec.format.name()
        ));
    }
    let body = json!({
        "contents": [{ "role": "user", "parts": [{ "text": request.prompt }] }],
        "generationConfig": config,
    });
    crate::gemini::post(endpoint, &request.model, "generateContent", body)
}

/// Decodes one picture and checks it is what it says: its format by its first bytes, its size
/// by its header.
pub(crate) fn picture(data: &str, media_type: Option<&str>) -> Result<Picture, ProviderError> {
    let bad = ProviderError::Unusable;
    if data.len() / 4 * 3 > MAX_IMAGE_BYTES {
        return Err(bad(format!(
            "a picture is larger than {} MiB; refused",
            MAX_IMAGE_BYTES >> 20
        )));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|error| bad(format!("a picture's base64 is broken: {error}")))?;
    let format = sniff(&bytes)
        .ok_or_else(|| bad("a picture in the answer is not PNG, JPEG or WebP".into()))?;
    if let Some(said) = media_type.and_then(ImageFormat::from_media_type)
        && said != format
    {
        return Err(bad(format!("a picture said to be {} is {}", said.name(), format.name())));
    }
    let size = imagesize::blob_size(&bytes)
        .ok()
        .and_then(|s| {
            Some(ImageSize {
                width: u32::try_from(s.width).ok()?,
                height: u32::try_from(s.height).ok()?,
            })
        })
        // A picture of no pixels is no picture.
        .filter(|size| size.width > 0 && size.height > 0)
        .ok_or_else(|| {
            bad(format!("a {} picture in the answer has no readable size", format.name()))
        })?;
    // No image API makes larger ones; a header that says so is a lie, and a viewer would be
    // asked for gigabytes of pixels.
    if size.width > MAX_SIDE || size.height > MAX_SIDE {
        return Err(bad(format!(
            "a {} picture in the answer says it is {size}, larger than {MAX_SIDE} pixels a side",
            format.name()
        )));
    }
    Ok(Picture { bytes: bytes.into(), format, size })
}

/// The format a picture's first bytes show.
pub fn sniff(bytes: &[u8]) -> Option<ImageFormat> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageFormat::Png)
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some(ImageFormat::Jpeg)
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some(ImageFormat::Webp)
    } else {
        None
    }
}

/// Runs an image tool's request: the pictures and what they cost, in a [`RunReport`] whose
/// `pictures` hold them (its `output` is `None`: there is no text to show). One attempt is
/// made per transport rule (retries on server errors and rate limits); nothing is asked again,
/// since a picture has no expected output to miss.
pub(crate) async fn generate(
    backend: &Backend<'_>,
    run: &RunRequest,
    spec: &ImageSpec,
) -> Result<RunReport, ProviderError> {
    let started = Instant::now();
    let endpoint = &run.target.endpoint;
    let Backend::Http(transport) = backend else {
        return Err(ProviderError::Unsupported(
            "the embedded local model makes no pictures; run an image tool on a provider".into(),
        ));
    };
    let request = ImageRequest::of(run, spec);
    let mut warnings = Vec::new();
    let http = build(endpoint, &request, &mut warnings)?;
    let slot: Arc<Mutex<Option<ImageAnswer>>> = Arc::default();
    let factory = {
        let (endpoint, slot) = (endpoint.clone(), slot.clone());
        move || -> Box<dyn Decoder> {
            Box::new(ImageDecoder { endpoint: endpoint.clone(), slot: slot.clone() })
        }
    };
    let completion = transport.send(&http, false, Delivery::Whole, &factory, &mut |_| {}).await?;
    let answer =
        slot.lock().ok().and_then(|mut slot| slot.take()).ok_or_else(|| {
            ProviderError::Unusable("the image API's answer held no pictures".into())
        })?;
    let usage = completion.usage;
    Ok(RunReport {
        output: None,
        raw: answer.text.clone().unwrap_or_default(),
        model: run.target.model.clone(),
        provider: endpoint.provider.clone(),
        usage,
        cost: run.image_cost(&usage, answer.pictures.len()),
        price: run.price.clone(),
        latency_ms: crate::run::millis(started.elapsed()),
        time_to_first_token_ms: None,
        finish_reason: completion.finish_reason,
        repairs: 0,
        error: None,
        warnings,
        redactions: run.redaction_counts(),
        local: None,
        revised_prompt: answer.revised_prompt,
        pictures: answer.pictures,
        images: Vec::new(),
        calls: Vec::new(),
        placeholders: crate::run::Placeholders::default(),
    })
}

/// Reads a whole image answer into the slot [`generate`] takes it from (the transport's
/// decoders give text events; pictures are not text).
struct ImageDecoder {
    endpoint: Endpoint,
    slot: Arc<Mutex<Option<ImageAnswer>>>,
}

impl Decoder for ImageDecoder {
    fn event(&mut self, _: &str, _: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        Err(ProviderError::Unusable("an image answer is not streamed".into()))
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        Ok(Vec::new())
    }

    fn response(&mut self, body: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        let answer = parse(&self.endpoint, body.as_bytes())?;
        let usage = answer.usage;
        if let Ok(mut slot) = self.slot.lock() {
            *slot = Some(answer);
        }
        Ok(vec![StreamEvent::Usage(usage), StreamEvent::Finish("stop".into())])
    }
}
