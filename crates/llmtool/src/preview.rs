//! Pictures shown in the terminal under their paths: in the kitty graphics protocol, which
//! kitty, `WezTerm` and Ghostty speak, or as sixels, which foot, mlterm and Konsole draw.
//!
//! The kitty sequence is written by hand: it is one escape sequence (the PNG's bytes in
//! base64, in pieces of 4096 characters), and the terminal scales it. Sixels are a picture's
//! pixels in the terminal's own palette: the PNG is decoded (`png`), made at most
//! [`SIXEL_WIDTH`] pixels wide, and encoded by `icy_sixel`.
//!
//! Shown only when standard output is such a terminal (told by the variables it sets, never by
//! a query a pipe would swallow), unless `--no-preview`; `LLMTOOL_PREVIEW=kitty`, `=sixel` or
//! `=off` says it instead. Only PNG pictures.

use base64::Engine as _;

/// How many columns wide a preview is drawn (the terminal keeps its shape).
const COLUMNS: u32 = 40;

/// The widest a sixel preview is drawn, in pixels.
const SIXEL_WIDTH: usize = 320;

/// How a terminal draws pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    Kitty,
    Sixel,
}

/// How this terminal draws pictures, if it does.
pub(crate) fn protocol() -> Option<Protocol> {
    let variable = |name: &str| std::env::var(name).unwrap_or_default();
    match variable("LLMTOOL_PREVIEW").as_str() {
        "kitty" => return Some(Protocol::Kitty),
        "sixel" => return Some(Protocol::Sixel),
        "off" => return None,
        _ => {}
    }
    let term = variable("TERM");
    if std::env::var_os("KITTY_WINDOW_ID").is_some()
        || term == "xterm-kitty"
        || matches!(variable("TERM_PROGRAM").as_str(), "WezTerm" | "ghostty")
    {
        Some(Protocol::Kitty)
    } else if term.starts_with("foot")
        || term.starts_with("mlterm")
        || std::env::var_os("KONSOLE_VERSION").is_some()
    {
        Some(Protocol::Sixel)
    } else {
        None
    }
}

/// What draws the PNG `png` in `protocol`, then a line end; `None` for bytes that do not
/// decode as a PNG.
pub(crate) fn draw(protocol: Protocol, png: &[u8]) -> Option<String> {
    match protocol {
        Protocol::Kitty => Some(kitty(png)),
        Protocol::Sixel => sixel(png),
    }
}

/// The PNG `png` as sixels, at most [`SIXEL_WIDTH`] pixels wide.
fn sixel(png: &[u8]) -> Option<String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().ok()?;
    let mut buffer = vec![0; reader.output_buffer_size()?];
    let frame = reader.next_frame(&mut buffer).ok()?;
    let (width, height) = (frame.width as usize, frame.height as usize);
    let channels = frame.color_type.samples();
    let rgba = |x: usize, y: usize| {
        let at = (y * width + x) * channels;
        let pixel = &buffer[at..at + channels];
        match channels {
            1 => [pixel[0], pixel[0], pixel[0], 255],
            2 => [pixel[0], pixel[0], pixel[0], pixel[1]],
            3 => [pixel[0], pixel[1], pixel[2], 255],
            _ => [pixel[0], pixel[1], pixel[2], pixel[3]],
        }
    };
    // The nearest pixel of each, when the picture is wider than a preview.
    let scale = width.div_ceil(SIXEL_WIDTH).max(1);
    let (shown_width, shown_height) = (width / scale, height / scale);
    let mut pixels = Vec::with_capacity(shown_width * shown_height * 4);
    for y in 0..shown_height {
        for x in 0..shown_width {
            pixels.extend(rgba(x * scale, y * scale));
        }
    }
    let encoded = icy_sixel::SixelImage::from_rgba(pixels, shown_width, shown_height).encode();
    encoded.ok().map(|sixels| sixels + "\n")
}

/// The escape sequence that draws the PNG `png`, [`COLUMNS`] wide, then a line end.
fn kitty(png: &[u8]) -> String {
    let data = base64::engine::general_purpose::STANDARD.encode(png);
    let pieces: Vec<&[u8]> = data.as_bytes().chunks(4096).collect();
    let mut out = String::with_capacity(data.len() + pieces.len() * 16 + 32);
    for (at, piece) in pieces.iter().enumerate() {
        let more = u8::from(at + 1 < pieces.len());
        let keys =
            if at == 0 { format!("a=T,f=100,c={COLUMNS},m={more}") } else { format!("m={more}") };
        out.push_str(&format!("\x1b_G{keys};{}\x1b\\", String::from_utf8_lossy(piece)));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_picture_is_sent_in_pieces_that_say_whether_more_follow() {
        let png = vec![7u8; 5000];
        let drawn = kitty(&png);
        let pieces: Vec<&str> =
            drawn.trim_end().split("\x1b\\").filter(|p| !p.is_empty()).collect();
        assert_eq!(pieces.len(), 2);
        assert!(pieces[0].starts_with("\x1b_Ga=T,f=100,c=40,m=1;"));
        assert!(pieces[1].starts_with("\x1b_Gm=0;"));
        let data: String =
            pieces.iter().map(|p| p.split_once(';').map_or("", |(_, d)| d)).collect();
        let decoded = base64::engine::general_purpose::STANDARD.decode(data).unwrap_or_default();
        assert_eq!(decoded, png);
    }

    #[test]
    fn a_wide_picture_is_drawn_in_sixels_at_most_320_pixels_wide() {
        let png = llmtool_testkit::pictures::png(1000, 500);
        let drawn = sixel(&png).unwrap_or_default();
        assert!(drawn.starts_with("\x1bP"), "{:?}", &drawn[..drawn.len().min(20)]);
        let image = icy_sixel::SixelImage::decode(drawn.trim_end().as_bytes());
        let image = image.unwrap_or_else(|e| panic!("{e}"));
        // 1000x500 at one pixel in four: 250x125, drawn in bands six pixels high.
        assert_eq!((image.width, image.height.div_ceil(6)), (250, 125usize.div_ceil(6)));
        assert_eq!(sixel(b"not a picture"), None);
    }
}
