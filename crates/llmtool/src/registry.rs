//! Which tool library the user means, and the token sent to it: `--registry`, else
//! `LLMTOOL_REGISTRY`, else the config file's `registry` (which `llmtool login` writes), else
//! the address `llmtool serve` listens on by default. The token is `LLMTOOL_TOKEN`, else the
//! config file's `registry_token`, which goes to the config's library and to no other. The
//! client itself is `llmtool_registry::client`, reached as `llmtool_runtime::files` does.

use llmtool_registry::client::{ClientError, LibraryClient};

/// The library when none is named: where `llmtool serve` listens by default.
pub(crate) const DEFAULT_LIBRARY: &str = "http://127.0.0.1:8080";

/// The library the user means: `--registry` (or `LLMTOOL_REGISTRY`, which clap reads into
/// it), else the config file's, else [`DEFAULT_LIBRARY`].
pub(crate) fn client(registry: Option<&str>) -> anyhow::Result<LibraryClient> {
    let config = crate::settings::load_providers(config_file().as_deref())?.config;
    let named = registry.map(str::trim).filter(|url| !url.is_empty());
    let (url, hint) = match (named, &config.registry) {
        (Some(url), _) => (url.to_owned(), "is `llmtool serve` running there?".to_owned()),
        (None, Some(url)) => (
            url.clone(),
            "is `llmtool serve` running there? (the config file's `registry`)".to_owned(),
        ),
        (None, None) => (
            DEFAULT_LIBRARY.to_owned(),
            "no library is named, so this is the one `llmtool serve` starts by default: start it, or name another with `llmtool login URL`, --registry or LLMTOOL_REGISTRY".to_owned(),
        ),
    };
    let from_env = std::env::var("LLMTOOL_TOKEN").ok();
    let token = token_for(&url, named.is_some(), from_env.as_deref(), &config);
    if let Some(token) = &token {
        crate::secrets::add(token);
    }
    Ok(llmtool_runtime::files::library_client(&url, token)?.with_unreachable_hint(hint))
}

/// The token sent to the library at `url` (`named` when the user named it, not the default):
/// `LLMTOOL_TOKEN`, except to the default address, where on a shared machine anyone may
/// listen; else the config file's, for the config file's library alone.
fn token_for(
    url: &str,
    named: bool,
    from_env: Option<&str>,
    config: &llmtool_config::Config,
) -> Option<String> {
    let defaulted = !named && config.registry.is_none();
    match from_env.map(str::trim).filter(|token| !token.is_empty()) {
        Some(_) if defaulted => None,
        Some(token) => Some(token.to_owned()),
        None if config.registry.as_deref().is_some_and(|saved| same_library(saved, url)) => {
            config.registry_token.clone()
        }
        None => None,
    }
}

/// The config file the library commands read and `login` writes: `LLMTOOL_CONFIG`, as every
/// command's `--config` defaults to it, else the default one.
pub(crate) fn config_file() -> Option<std::path::PathBuf> {
    std::env::var_os("LLMTOOL_CONFIG").filter(|path| !path.is_empty()).map(Into::into)
}

/// The library `registry:` names are pulled from: `LLMTOOL_REGISTRY`, else the config
/// file's, else [`DEFAULT_LIBRARY`]. A config file that cannot be read is an error.
pub(crate) fn named() -> anyhow::Result<LibraryClient> {
    client(std::env::var("LLMTOOL_REGISTRY").ok().as_deref())
}

/// Whether two URLs name one library (`/api/v1` and a trailing `/` aside).
pub(crate) fn same_library(a: &str, b: &str) -> bool {
    let bare = |url: &str| {
        let url = url.trim().trim_end_matches('/');
        url.strip_suffix("/api/v1").unwrap_or(url).to_ascii_lowercase()
    };
    bare(a) == bare(b)
}

/// `error` with what to do about it: a library that wants a token (or a stronger one) names
/// `LLMTOOL_TOKEN`, `llmtool login` and `llmtool token create`; `role` is the least role the
/// call needs.
pub(crate) fn explained(error: ClientError, client: &LibraryClient, role: &str) -> anyhow::Error {
    match &error {
        ClientError::Refused { status: 401, .. } => {
            let what = if client.has_token() {
                "the library does not know this token"
            } else if std::env::var("LLMTOOL_TOKEN").is_ok_and(|t| !t.trim().is_empty()) {
                "LLMTOOL_TOKEN is sent only to a library named by --registry, LLMTOOL_REGISTRY or the config file, not to the default address"
            } else {
                "the library wants a token"
            };
            anyhow::anyhow!(
                "{error}\n  {what}: set LLMTOOL_TOKEN to a token with the {role} role (or save one with `llmtool login {}`); the library's operator makes one with `llmtool token create NAME --role {role}`",
                bare_url(client)
            )
        }
        ClientError::Refused { status: 403, .. } => anyhow::anyhow!(
            "{error}\n  this needs a token with the {role} role; the library's operator makes one with `llmtool token create NAME --role {role}`"
        ),
        _ => error.into(),
    }
}

/// The library's address as the user writes it (without `/api/v1`).
fn bare_url(client: &LibraryClient) -> &str {
    client.url().strip_suffix("/api/v1").unwrap_or(client.url())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_goes_only_where_it_was_meant() {
        let saved = llmtool_config::Config {
            registry: Some("http://lib:8080".into()),
            registry_token: Some("llmt_saved".into()),
            ..Default::default()
        };
        let none = llmtool_config::Config::default();
        let token = |url, named, env, config| token_for(url, named, env, config);
        // LLMTOOL_TOKEN: to a library someone named, never to the default address.
        assert_eq!(token(DEFAULT_LIBRARY, false, Some("llmt_env"), &none), None);
        assert_eq!(token("http://x:1", true, Some("llmt_env"), &none).as_deref(), Some("llmt_env"));
        // The saved token: to the saved library only.
        assert_eq!(token("http://lib:8080/", false, None, &saved).as_deref(), Some("llmt_saved"));
        assert_eq!(token("http://other:8080", true, None, &saved), None);
    }

    #[test]
    fn one_library_whatever_its_spelling() {
        assert!(same_library("http://h:8080", "http://H:8080/api/v1/"));
        assert!(!same_library("http://h:8080", "http://h:8081"));
        assert!(!same_library("http://h:8080", "http://h:8080.evil.example"));
    }
}
