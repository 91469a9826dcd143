//! Pictures shown in the terminal under their paths, in the kitty graphics protocol, which
//! kitty, `WezTerm` and Ghostty speak. Written by hand: it is one escape sequence (the PNG's
//! bytes in base64, in pieces of 4096 characters), and the crates that do it also decode and
//! scale pictures, which the terminal does itself here.
//!
//! Shown only when standard output is such a terminal (told by the variables it sets, never by
//! a query a pipe would swallow), unless `--no-preview`; `LLMTOOL_PREVIEW=kitty` or `=off`
//! says it instead. Only PNG pictures: the protocol takes no JPEG or WebP.

use base64::Engine as _;

/// How many columns wide a preview is drawn (the terminal keeps its shape).
const COLUMNS: u32 = 40;

/// Whether this terminal shows pictures in the kitty graphics protocol.
pub(crate) fn kitty_terminal() -> bool {
    let variable = |name: &str| std::env::var(name).unwrap_or_default();
    match variable("LLMTOOL_PREVIEW").as_str() {
        "kitty" => return true,
        "off" => return false,
        _ => {}
    }
    std::env::var_os("KITTY_WINDOW_ID").is_some()
        || variable("TERM") == "xterm-kitty"
        || matches!(variable("TERM_PROGRAM").as_str(), "WezTerm" | "ghostty")
}

/// The escape sequence that draws the PNG `png`, [`COLUMNS`] wide, then a line end.
pub(crate) fn kitty(png: &[u8]) -> String {
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
}
