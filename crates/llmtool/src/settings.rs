//! Where the configuration file is, and the providers it and the environment configure.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use llmtool_providers::config::{Config, Env};
use llmtool_providers::resolve::Providers;

/// `$XDG_CONFIG_HOME/llmtool/config.toml`, or `~/.config/llmtool/config.toml`.
pub(crate) fn default_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|home| Path::new(&home).join(".config"))
        })?;
    Some(base.join("llmtool").join("config.toml"))
}

/// The providers from the given (or default) config file and the process environment. A
/// missing default file is an empty configuration; a missing named file is an error.
pub(crate) fn load_providers(config: Option<&Path>) -> anyhow::Result<Providers> {
    let (path, required) = match config {
        Some(path) => (Some(path.to_path_buf()), true),
        None => (default_config_path(), false),
    };
    let config = match path {
        Some(path) if required || path.exists() => {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read `{}`", path.display()))?;
            Config::parse(&text).with_context(|| format!("in `{}`", path.display()))?
        }
        _ => Config::default(),
    };
    let providers = Providers::new(config, Env::from_process());
    crate::secrets::learn(&providers);
    Ok(providers)
}
