//! Image tools: what makes a tool one, and the picture it asks for (format, size, quality,
//! count, seed), read once here for `check`, the run and every server.
//!
//! A tool makes images when its expected output says `"type": "image"`, or when its first model
//! is an image model. The picture is described by `expected_output.format` (`png`, `jpeg` or
//! `webp`) and `expected_output.size` (`WIDTHxHEIGHT` or `auto`); the request by three
//! parameters an image API takes: `quality`, `n` (how many pictures) and `seed`.

use crate::model::Tool;
use crate::span::Span;

/// The file formats an image tool may ask for, as its `format` is written.
pub const IMAGE_FORMATS: [&str; 3] = ["png", "jpeg", "webp"];

/// A size as the schemas write it (`WIDTHxHEIGHT`, each side 1 to 9999 without leading zeros;
/// [`ImageSize::parse`] also holds each side to [`MAX_SIDE`]), unanchored.
pub const IMAGE_SIZE_PATTERN: &str = "[1-9][0-9]{0,3}[xX][1-9][0-9]{0,3}";

/// The parameters of an image request. `seed` is also kept for text tools (some chat APIs take
/// it); `quality` and `n` mean something only for pictures.
pub const IMAGE_PARAMETERS: [&str; 3] = ["quality", "n", "seed"];

/// The qualities image APIs take: GPT image models' `low`, `medium`, `high` and `auto`, and
/// DALL-E 3's `standard` and `hd`.
pub const IMAGE_QUALITIES: [&str; 6] = ["auto", "low", "medium", "high", "standard", "hd"];

/// The most pictures one request may ask for (OpenAI's limit).
pub const MAX_IMAGES: u64 = 10;

/// The widest or tallest picture a size may name, in pixels.
pub const MAX_SIDE: u32 = 8192;

/// A picture's file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageFormat {
    Png,
    Jpeg,
    Webp,
}

impl ImageFormat {
    /// The format `name` names (any case; `jpg` is JPEG), if it is one of [`IMAGE_FORMATS`].
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "png" => Some(Self::Png),
            "jpeg" | "jpg" => Some(Self::Jpeg),
            "webp" => Some(Self::Webp),
            _ => None,
        }
    }

    /// The name image APIs take (`output_format`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpeg",
            Self::Webp => "webp",
        }
    }

    /// The file name extension pictures of this format are saved with.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpg",
            Self::Webp => "webp",
        }
    }

    /// The media type pictures of this format are served with.
    pub fn media_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Webp => "image/webp",
        }
    }

    /// The format of a media type (`image/png`, ...), if it is one of these.
    pub fn from_media_type(media_type: &str) -> Option<Self> {
        let essence = media_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        match essence.as_str() {
            "image/png" => Some(Self::Png),
            "image/jpeg" | "image/jpg" => Some(Self::Jpeg),
            "image/webp" => Some(Self::Webp),
            _ => None,
        }
    }
}

/// A picture's size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ImageSize {
    pub width: u32,
    pub height: u32,
}

impl ImageSize {
    /// Reads `WIDTHxHEIGHT` (`1024x1536`, or with `X`): each side a number from 1 to
    /// [`MAX_SIDE`] without leading zeros, as the schema's pattern has it. `auto` is not a
    /// size: it is the absence of one.
    pub fn parse(text: &str) -> Option<Self> {
        let (width, height) = text.split_once(['x', 'X'])?;
        let side = |s: &str| {
            (!s.starts_with('0') && !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u32>().ok())
                .flatten()
                .filter(|n| (1..=MAX_SIDE).contains(n))
        };
        Some(Self { width: side(width)?, height: side(height)? })
    }
}

impl std::fmt::Display for ImageSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

/// The picture an image tool asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSpec {
    /// PNG unless the tool says otherwise.
    pub format: ImageFormat,
    /// `None` for `auto` or no size: the model chooses.
    pub size: Option<ImageSize>,
}

impl Default for ImageSpec {
    fn default() -> Self {
        Self { format: ImageFormat::Png, size: None }
    }
}

/// What an image request asks besides the prompt, from the tool's parameters (each only when
/// written, and valid: `check` reports the rest).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageParams {
    pub quality: Option<String>,
    /// How many pictures; one when `None`.
    pub count: Option<u64>,
    pub seed: Option<u64>,
}

impl ImageParams {
    /// The image parameters among parameters the format does not name (as a run carries them).
    pub fn from_extra(other: &serde_json::Map<String, serde_json::Value>) -> Self {
        let whole = |name: &str| other.get(name).and_then(serde_json::Value::as_u64);
        Self {
            quality: other
                .get("quality")
                .and_then(serde_json::Value::as_str)
                .filter(|q| IMAGE_QUALITIES.contains(q))
                .map(str::to_owned),
            count: whole("n").filter(|n| (1..=MAX_IMAGES).contains(n)),
            seed: whole("seed"),
        }
    }
}

/// Whether `model` names an image-generation model: OpenAI's GPT image models and DALL-E,
/// Google's Imagen and Gemini image models, and the open models servers offer under their own
/// names (Stable Diffusion, FLUX). Matched by name, since the lists change every few months.
pub fn is_image_model(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    ["gpt-image", "chatgpt-image", "dall-e", "imagen", "stable-diffusion", "sdxl", "flux"]
        .iter()
        .any(|family| name.starts_with(family))
        || name.starts_with("gemini") && name.split(['-', '.']).any(|part| part == "image")
}

impl Tool {
    /// Whether the tool makes pictures: its expected output is an image, or its first model is
    /// an image model.
    pub fn makes_images(&self) -> bool {
        let output = self.metadata.as_ref().and_then(|m| m.expected_output.as_ref());
        if let Some(kind) = output.and_then(|o| o.kind.as_ref()) {
            return kind.value == "image";
        }
        self.models().first().is_some_and(|model| is_image_model(model))
    }

    /// The picture the tool asks for (for an image tool).
    pub fn image_spec(&self) -> ImageSpec {
        let output = self.metadata.as_ref().and_then(|m| m.expected_output.as_ref());
        ImageSpec {
            format: output
                .and_then(|o| o.format.as_ref())
                .and_then(|f| ImageFormat::from_name(&f.value))
                .unwrap_or(ImageFormat::Png),
            size: output.and_then(|o| o.size.as_ref()).and_then(|s| ImageSize::parse(&s.value)),
        }
    }

    /// Each image parameter written in the tool, with where its key is.
    pub fn image_parameters(&self) -> Vec<(&str, Span, &serde_json::Value)> {
        let Some(parameters) = self.metadata.as_ref().and_then(|m| m.parameters.as_ref()) else {
            return Vec::new();
        };
        parameters
            .other_keys
            .iter()
            .filter(|key| IMAGE_PARAMETERS.contains(&key.value.as_str()))
            .filter_map(|key| {
                parameters.other.get(&key.value).map(|value| (key.value.as_str(), key.span, value))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_two_sides_in_range() {
        assert_eq!(ImageSize::parse("1024x1536"), Some(ImageSize { width: 1024, height: 1536 }));
        assert_eq!(ImageSize::parse("512X512"), Some(ImageSize { width: 512, height: 512 }));
        assert_eq!(ImageSize::parse("8192x1"), Some(ImageSize { width: 8192, height: 1 }));
        for bad in [
            "auto", "1024", "0x10", "010x10", "10x", "x10", "-5x10", "+5x10", "9000x10", "1.5x2",
            " 512x512", "64×32", "1x2x3",
        ] {
            assert_eq!(ImageSize::parse(bad), None, "{bad}");
        }
        assert_eq!(ImageSize { width: 3, height: 4 }.to_string(), "3x4");
    }

    #[test]
    fn image_models_are_known_by_family() {
        for model in [
            "gpt-image-1",
            "gpt-image-1.5",
            "chatgpt-image-latest",
            "openai/GPT-Image-1",
            "dall-e-3",
            "imagen-4.0-generate-001",
            "gemini-2.5-flash-image",
            "gemini-3-pro-image-preview",
            "models/gemini-2.5-flash-image",
            "black-forest-labs/flux-schnell",
            "stable-diffusion-3.5-large",
        ] {
            assert!(is_image_model(model), "{model}");
        }
        for model in ["gpt-4o-mini", "gemini-2.5-flash", "claude-sonnet-4-5", "imagine-7b"] {
            assert!(!is_image_model(model), "{model}");
        }
    }

    #[test]
    fn formats_have_one_name_extension_and_media_type() {
        assert_eq!(ImageFormat::from_name("JPG"), Some(ImageFormat::Jpeg));
        assert_eq!(ImageFormat::from_name("gif"), None);
        assert_eq!(ImageFormat::Jpeg.extension(), "jpg");
        assert_eq!(ImageFormat::from_media_type("image/webp; q=1"), Some(ImageFormat::Webp));
        for name in IMAGE_FORMATS {
            let format = ImageFormat::from_name(name).unwrap_or(ImageFormat::Png);
            assert_eq!(format.name(), name);
            assert_eq!(ImageFormat::from_media_type(format.media_type()), Some(format));
        }
    }
}
