//! Avatar images: decoding base64 and `data:` URLs, and sniffing the image format and size.

use base64::Engine;
use serde::Serialize;

/// The image formats an avatar may be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    Png,
    Jpeg,
    Gif,
    Webp,
    Svg,
}

impl ImageFormat {
    /// The format's media type (`image/png`, ...).
    pub const fn media_type(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
            ImageFormat::Gif => "image/gif",
            ImageFormat::Webp => "image/webp",
            ImageFormat::Svg => "image/svg+xml",
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            ImageFormat::Png => "PNG",
            ImageFormat::Jpeg => "JPEG",
            ImageFormat::Gif => "GIF",
            ImageFormat::Webp => "WebP",
            ImageFormat::Svg => "SVG",
        }
    }
}

/// What an image's bytes turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ImageInfo {
    pub format: ImageFormat,
    /// Pixel size; `None` for an SVG without a usable width, height or viewBox.
    pub size: Option<(u32, u32)>,
    /// Size of the decoded image in bytes.
    pub bytes: usize,
}

/// Why avatar data is not an image.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("it is not valid base64 ({0})")]
    Base64(String),
    #[error("it decodes to {0} bytes that are not a PNG, JPEG, GIF, WebP or SVG image")]
    UnknownFormat(usize),
    #[error("it is empty")]
    Empty,
}

/// Decodes base64 image data (whitespace ignored, padding optional, a `data:` prefix allowed).
pub fn decode_base64(data: &str) -> Result<Vec<u8>, ImageError> {
    let payload = match memchr::memmem::find(data.as_bytes(), b";base64,") {
        Some(at) => &data[at + ";base64,".len()..],
        None => data,
    };
    if payload.is_empty() {
        return Err(ImageError::Empty);
    }
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    // Most data has no line breaks: it is decoded as it is, and only data the decoder refuses
    // is looked at again for whitespace to leave out.
    engine.decode(payload).or_else(|error| {
        if !payload.bytes().any(|b| b.is_ascii_whitespace()) {
            return Err(ImageError::Base64(error.to_string()));
        }
        let compact: String = payload.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        if compact.is_empty() {
            return Err(ImageError::Empty);
        }
        engine.decode(compact).map_err(|e| ImageError::Base64(e.to_string()))
    })
}

/// Sniffs the format and pixel size of image bytes.
pub fn sniff(bytes: &[u8]) -> Result<ImageInfo, ImageError> {
    if bytes.is_empty() {
        return Err(ImageError::Empty);
    }
    if let Some(svg) = sniff_svg(bytes) {
        return Ok(svg);
    }
    let format = match imagesize::image_type(bytes) {
        Ok(imagesize::ImageType::Png) => ImageFormat::Png,
        Ok(imagesize::ImageType::Jpeg) => ImageFormat::Jpeg,
        Ok(imagesize::ImageType::Gif) => ImageFormat::Gif,
        Ok(imagesize::ImageType::Webp) => ImageFormat::Webp,
        _ => return Err(ImageError::UnknownFormat(bytes.len())),
    };
    let size = imagesize::blob_size(bytes).ok().map(|s| {
        (u32::try_from(s.width).unwrap_or(u32::MAX), u32::try_from(s.height).unwrap_or(u32::MAX))
    });
    if size.is_none() {
        return Err(ImageError::UnknownFormat(bytes.len()));
    }
    Ok(ImageInfo { format, size, bytes: bytes.len() })
}

/// The image info when the bytes are an SVG document. Written by hand: the image crates read
/// raster formats only, and all that is needed is the root element's width and height.
fn sniff_svg(bytes: &[u8]) -> Option<ImageInfo> {
    let start = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    if start.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'<') {
        return None;
    }
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    let start = head.find("<svg")?;
    let before = head[..start].trim_start_matches('\u{feff}').trim();
    let preamble_ok = before.is_empty() || before.starts_with("<?xml") || before.starts_with("<!");
    if !preamble_ok {
        return None;
    }
    let tag_end = head[start..].find('>')? + start;
    let tag = &head[start..tag_end];
    let attr = |name: &str| -> Option<f64> {
        let at = tag.find(&format!(" {name}="))? + name.len() + 2;
        let quote = tag[at..].chars().next()?;
        let value = tag[at + 1..].split(quote).next()?;
        value.trim_end_matches("px").trim().parse().ok()
    };
    // The size, if the root says it: an SVG without one is still an SVG (its `?`s answer
    // "no size", not "not an image").
    let view_box = || -> Option<(u32, u32)> {
        let at = tag.find("viewBox=")? + "viewBox=".len();
        let quote = tag[at..].chars().next()?;
        let values: Vec<f64> = tag[at + 1..]
            .split(quote)
            .next()?
            .split([' ', ','])
            .filter_map(|v| v.parse().ok())
            .collect();
        match values.as_slice() {
            [_, _, w, h] => Some((w.round() as u32, h.round() as u32)),
            _ => None,
        }
    };
    let size = match (attr("width"), attr("height")) {
        (Some(w), Some(h)) => Some((w.round() as u32, h.round() as u32)),
        _ => view_box(),
    };
    Some(ImageInfo { format: ImageFormat::Svg, size, bytes: bytes.len() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

    #[test]
    fn png_from_base64() {
        let bytes = decode_base64(PNG_1X1).unwrap();
        let info = sniff(&bytes).unwrap();
        assert_eq!(info.format, ImageFormat::Png);
        assert_eq!(info.size, Some((1, 1)));
    }

    #[test]
    fn svg_sizes() {
        let info = sniff(br#"<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="256" height="256px"></svg>"#).unwrap();
        assert_eq!((info.format, info.size), (ImageFormat::Svg, Some((256, 256))));
        let info = sniff(br#"<svg viewBox="0 0 64 32"/>"#).unwrap();
        assert_eq!(info.size, Some((64, 32)));
        // No size anywhere, or one in percent: an SVG of unknown size, not "not an image"
        // (the library listed such an avatar and then could not serve it).
        for svg in [
            &br#"<svg xmlns="http://www.w3.org/2000/svg"><circle r="8"/></svg>"#[..],
            br#"<svg width="100%" height="100%"></svg>"#,
            br#"<svg viewBox="oops"></svg>"#,
        ] {
            let info = sniff(svg).unwrap();
            assert_eq!((info.format, info.size), (ImageFormat::Svg, None));
        }
    }

    #[test]
    fn rejects_non_images() {
        assert!(matches!(decode_base64("not base64!"), Err(ImageError::Base64(_))));
        assert_eq!(sniff(b"hello world"), Err(ImageError::UnknownFormat(11)));
    }
}
