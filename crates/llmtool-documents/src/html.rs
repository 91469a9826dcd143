//! HTML as text: the page's text in reading order, paragraphs, list items and table cells on
//! lines of their own, scripts and styles left out, nothing fetched.

use crate::error::DocumentError;
use crate::kind::Kind;

/// Wide enough that no line of prose is wrapped: the text keeps its own line breaks.
const WIDTH: usize = 10_000;

/// The deepest nesting read. `html2text` takes time that grows with the square of the depth
/// (50,000 nested `<div>`s took over a minute); real pages stay far below this.
pub(crate) const MAX_NESTING: usize = 1_000;

/// Elements that have no end tag, or whose end tag may be left out: a scan of the tags cannot
/// tell where they end, so they do not count towards the nesting.
const NOT_COUNTED: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "p", "li", "dt", "dd", "tr", "td", "th", "thead", "tbody", "tfoot", "option",
    "optgroup", "rb", "rt", "rp", "colgroup", "caption", "html", "head", "body",
];

pub(crate) fn text(html: &str) -> Result<String, DocumentError> {
    let depth = nesting(html);
    if depth > MAX_NESTING {
        let reason = format!("its elements nest {depth} deep; at most {MAX_NESTING} are read");
        return Err(DocumentError::Damaged { kind: Kind::Html, reason });
    }
    html2text::config::plain_no_decorate()
        .raw_mode(true)
        .allow_width_overflow()
        .string_from_read(html.as_bytes(), WIDTH)
        .map_err(|error| DocumentError::Damaged { kind: Kind::Html, reason: error.to_string() })
}

/// How deep the page's elements nest, as a scan of its tags tells: an end tag closes, a
/// self-closed tag and the elements of [`NOT_COUNTED`] do not open, comments and the contents
/// of `script` and `style` are passed over.
fn nesting(html: &str) -> usize {
    let bytes = html.as_bytes();
    let (mut depth, mut deepest, mut at) = (0usize, 0usize, 0usize);
    while let Some(found) = memchr::memchr(b'<', &bytes[at..]) {
        let start = at + found + 1;
        let closing = bytes.get(start) == Some(&b'/');
        let name_start = start + usize::from(closing);
        let name_len = bytes[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
            .count();
        let end = memchr::memchr(b'>', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        at = end.min(bytes.len());
        if name_len == 0 {
            continue; // `<!--`, `<!doctype`, `<?`, or a lone `<` in text
        }
        let name = html[name_start..name_start + name_len].to_ascii_lowercase();
        if NOT_COUNTED.contains(&name.as_str()) {
            continue;
        }
        if closing {
            depth = depth.saturating_sub(1);
        } else if bytes.get(end.wrapping_sub(1)) != Some(&b'/') {
            if name == "script" || name == "style" {
                // The search stops at its own end tag: the whole scan stays linear.
                let close = format!("</{name}");
                let rest = &bytes[at..];
                at += rest
                    .windows(close.len())
                    .position(|window| window.eq_ignore_ascii_case(close.as_bytes()))
                    .unwrap_or(rest.len());
                continue;
            }
            depth += 1;
            deepest = deepest.max(depth);
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_counts_what_a_page_opens_and_closes() {
        assert_eq!(nesting("<div><div><span>x</span></div></div>"), 3);
        // Paragraphs and items left open, void elements, comments and scripts do not count.
        let sloppy = "<!doctype html><ul><li>a<li>b</ul><p>one<p>two<br><img src=x><!-- <div> -->";
        assert_eq!(nesting(sloppy), 1);
        assert_eq!(nesting("<script>if (a<b) { x = '<div>' }</script><div></div>"), 1);
        assert_eq!(nesting("<div/><div />"), 0);
    }

    #[test]
    fn a_page_nested_past_the_limit_is_refused_at_once() {
        let deep = format!("{}x{}", "<div>".repeat(50_000), "</div>".repeat(50_000));
        let refused = text(&deep).unwrap_err().to_string();
        assert!(refused.contains("nest 50000 deep"), "{refused}");
    }

    #[test]
    fn paragraphs_and_items_stay_apart_and_scripts_go() {
        let html = "<html><head><title>T</title><style>p{color:red}</style>\
                    <script>alert('x')</script></head><body><h1>Terms</h1>\
                    <p>First <b>paragraph</b>.</p><p>Second.</p><ul><li>one</li><li>two</li></ul>\
                    <img src=\"https://example.invalid/x.png\" alt=\"\"></body></html>";
        let text = crate::tidy(&text(html).unwrap());
        assert!(text.contains("Terms"), "{text}");
        assert!(text.contains("First paragraph."), "{text}");
        assert!(text.contains("Second."), "{text}");
        assert!(!text.contains("alert") && !text.contains("color"), "{text}");
        let first = text.find("First").unwrap();
        assert!(
            first < text.find("Second").unwrap()
                && text.find("one").unwrap() < text.find("two").unwrap()
        );
    }
}
