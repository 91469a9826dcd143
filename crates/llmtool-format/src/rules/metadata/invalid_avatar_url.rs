//! LT503: an avatar URL that is not http(s) or a data URL.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// An avatar of type `url` is not an `http`/`https` URL or a `data:` URL.
    ///
    /// The URL is only parsed, never fetched.
    ///
    /// ```json
    /// "avatar_type": "url", "avatar": "ftp://example.org/icon.png"
    /// ```
    pub static INVALID_AVATAR_URL = ("LT503", "invalid-avatar-url", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(avatar) = cx.avatar() else { return };
    let (Some(kind), Some(data)) = (&avatar.kind, &avatar.data) else { return };
    if kind.value != "url" {
        return;
    }
    let problem = match url::Url::parse(&data.value) {
        Ok(url)
            if matches!(url.scheme(), "http" | "https")
                && url.host_str().is_some_and(|h| !h.is_empty()) =>
        {
            return;
        }
        Ok(url) if url.scheme() == "data" => {
            if data.value.starts_with("data:image/") {
                return;
            }
            "a `data:` URL must hold an image (`data:image/...`)".to_owned()
        }
        Ok(url) => format!("scheme `{}` is not http or https", url.scheme()),
        Err(error) => format!("it is not a URL ({error})"),
    };
    out.push(
        Diagnostic::new(&INVALID_AVATAR_URL, format!("avatar URL is not usable: {problem}"))
            .at(data.span)
            .with_help(
                "use an https URL of the image, or `avatar_type: base64` with the image data",
            ),
    );
}

#[cfg(test)]
mod tests {
    /// International host names are mapped and encoded by the IDNA rules with the backend the
    /// workspace pins (`idna_adapter` 1.1): full-width and upper-case letters folded, the
    /// result in punycode.
    #[test]
    fn international_host_names_are_read_by_the_idna_rules() {
        let url = url::Url::parse("https://\u{FF22}\u{00DC}CHER.example/avatar.png").unwrap();
        assert_eq!(url.host_str(), Some("xn--bcher-kva.example"));
    }
}
