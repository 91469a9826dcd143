//! A small page that says how something went and, when there is a next place, goes there at
//! once. It ends the journeys that come back from another site (single sign-on, "Add to
//! Slack"): the session cookie is `SameSite=Strict`, so it is not sent with the other site's
//! redirect, but it is with this page's own navigation, which starts on the studio's site.

use axum::http::StatusCode;
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY};
use axum::response::{IntoResponse as _, Response};

/// The link the page offers when there is no next place.
#[derive(Clone, Copy)]
pub(crate) struct Back<'a> {
    pub(crate) href: &'a str,
    pub(crate) label: &'a str,
}

/// The page `title`, saying `message`; with `next`, it goes there at once (and links to it),
/// else it links `back`. No script runs on it, and the address it came to (which may hold a
/// code and a state) is told to no page it leads to.
pub(crate) fn page(
    title: &str,
    status: StatusCode,
    message: &str,
    next: Option<&str>,
    back: Back<'_>,
) -> Response {
    let go = next.map(|next| {
        let next = escaped(next);
        format!("<meta http-equiv=\"refresh\" content=\"0;url={next}\">")
    });
    let link = match next {
        Some(next) => format!("<p><a href=\"{}\">Continue</a></p>", escaped(next)),
        None => format!("<p><a href=\"{}\">{}</a></p>", escaped(back.href), escaped(back.label)),
    };
    let title = escaped(title);
    let html = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n{}\n<title>{title} · llmtool studio</title>\n<link rel=\"stylesheet\" href=\"/assets/studio.css\">\n</head>\n<body>\n<main id=\"main\">\n<h1>{title}</h1>\n<p id=\"status\" role=\"status\">{}</p>\n{link}\n</main>\n</body>\n</html>\n",
        go.unwrap_or_default(),
        escaped(message)
    );
    let headers = [
        (CONTENT_TYPE, "text/html; charset=utf-8"),
        (CONTENT_SECURITY_POLICY, "default-src 'self'; script-src 'none'; frame-ancestors 'none'"),
        (CACHE_CONTROL, "no-store"),
        (REFERRER_POLICY, "no-referrer"),
    ];
    (status, headers, html).into_response()
}

/// `text` with HTML's special characters escaped.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_escapes_what_it_says() {
        assert_eq!(
            escaped("<b>\"x\" & 'y'</b>"),
            "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;"
        );
    }
}
