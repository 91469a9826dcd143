//! Where the configuration file is, the providers it and the environment configure, and the
//! runtime settings of the flags that choose a model.

use std::path::{Path, PathBuf};

use std::time::Duration;

use anyhow::Context as _;
use llmtool_config::{Config, Env};
use llmtool_format::model::Tool;
use llmtool_providers::ProviderError;
use llmtool_providers::resolve::Providers;
use llmtool_providers::transport::Timeouts;
use llmtool_runtime::{LogPolicy, ParamOverrides, RunError, Runtime, RuntimeOptions};

use crate::cli::ModelArgs;

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
    let config = load_config(config)?;
    // A saved library token is hidden like a key, from the moment the file is read.
    if let Some(token) = &config.registry_token {
        crate::secrets::add(token);
    }
    let providers = Providers::new(config, Env::from_process());
    crate::secrets::learn(&providers);
    Ok(providers)
}

/// The given (or default) config file. A missing default file is an empty configuration; a
/// missing named file is an error.
pub(crate) fn load_config(config: Option<&Path>) -> anyhow::Result<Config> {
    let (path, required) = match config {
        Some(path) => (Some(path.to_path_buf()), true),
        None => (default_config_path(), false),
    };
    Ok(match path {
        Some(path) if required || path.exists() => {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read `{}`", path.display()))?;
            Config::parse(&text).with_context(|| format!("in `{}`", path.display()))?
        }
        _ => Config::default(),
    })
}

/// The runtime settings of `args`, which every command that runs a tool shares; the command
/// adds its own (fetching, retries, the seed).
pub(crate) fn runtime_options(args: &ModelArgs) -> RuntimeOptions {
    RuntimeOptions {
        model: args.model.clone(),
        provider: args.provider.clone(),
        timeouts: Timeouts {
            total: Duration::from_secs(args.setup.timeout.max(1)),
            ..Timeouts::default()
        },
        allow_local_paths: args.setup.allow_local_paths,
        dlp: args.setup.dlp.map(Into::into),
        // Every run is logged unless LLMTOOL_NO_LOG says not to (docs/usage.md).
        log: LogPolicy::from_env(false),
        max_prompt_bytes: Some(crate::io::max_file_bytes()),
        ..RuntimeOptions::default()
    }
}

/// Makes the data directory and what it keeps of runs (the run log, the library's database,
/// the test cache, pulled tools) the user's alone, saying so for each that other users could
/// read: made by an earlier llmtool, or under a loose umask. What is made from now on is
/// private from the start (`llmtool_log::private`).
pub(crate) fn narrow_data_dir() {
    use llmtool_log::private::{private_sqlite, tighten};
    let Some(dir) = llmtool_log::data_dir().filter(|dir| dir.is_dir()) else { return };
    let mut narrowed: Vec<_> = tighten(&dir, 0o700).ok().flatten().into_iter().collect();
    for database in [llmtool_log::DATABASE_FILE, "library.db"] {
        if dir.join(database).exists() {
            narrowed.extend(private_sqlite(&dir.join(database)).unwrap_or_default());
        }
    }
    for folder in ["test-cache", "registry-cache"] {
        narrowed.extend(tighten(&dir.join(folder), 0o700).ok().flatten());
    }
    for done in narrowed {
        eprintln!("warning: {done}");
    }
}

/// What stands in for a key that is not configured in what sends nothing (it shows redacted).
const STAND_IN_KEY: &str = "no-key-configured";

/// For what sends nothing (`run --dry-run`, `batch --estimate`): when making `tool`'s request
/// on `runtime` fails only for want of a key, a runtime on `providers` with a stand-in for
/// it, so that the request can still be shown and priced; the runtime given otherwise. The
/// stand-in is said on standard error.
pub(crate) fn with_stand_in_key(
    runtime: Runtime,
    tool: &Tool,
    providers: Providers,
    options: RuntimeOptions,
) -> anyhow::Result<Runtime> {
    match runtime.request(tool, String::new(), ParamOverrides::default()) {
        Err(RunError::Provider(ProviderError::MissingKey { provider, variable })) => {
            eprintln!(
                "note: no key for {provider} is configured (`{variable}` is not set): nothing is sent, so the request is made as it would be with one"
            );
            let mut providers = providers;
            providers.env = providers.env.with(&variable, STAND_IN_KEY);
            Ok(Runtime::new(providers, options)?)
        }
        _ => Ok(runtime),
    }
}
