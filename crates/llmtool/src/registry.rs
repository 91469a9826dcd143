//! Which tool library the user means (`--registry`, `LLMTOOL_REGISTRY`, or the config file's
//! `registry`); the client itself is `llmtool_registry::client`, reached as
//! `llmtool_runtime::files::library_client` does.

use llmtool_registry::client::LibraryClient;

/// The library the user means: `--registry` (or `LLMTOOL_REGISTRY`, which clap reads into
/// it), else the config file's `registry`.
pub(crate) fn client(registry: Option<&str>) -> anyhow::Result<LibraryClient> {
    library(registry)?.ok_or_else(|| {
        anyhow::anyhow!(
            "no tool library named: give --registry URL, set LLMTOOL_REGISTRY, or `registry = \"URL\"` in the config file"
        )
    })
}

/// The library `registry:` names are pulled from: `LLMTOOL_REGISTRY`, else the config
/// file's; `None` when neither names one (a `registry:` name then fails saying so). A config
/// file that cannot be read is an error, not "no library".
pub(crate) fn named() -> anyhow::Result<Option<LibraryClient>> {
    library(std::env::var("LLMTOOL_REGISTRY").ok().filter(|url| !url.is_empty()).as_deref())
}

/// The library at `url`, else the config file's; `None` when neither names one.
fn library(url: Option<&str>) -> anyhow::Result<Option<LibraryClient>> {
    let url = match url {
        Some(url) => url.to_owned(),
        None => match crate::settings::load_providers(None)?.config.registry {
            Some(url) => url,
            None => return Ok(None),
        },
    };
    Ok(Some(llmtool_runtime::files::library_client(&url)?))
}
