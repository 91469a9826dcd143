//! `llmtool login` and `llmtool logout`: a tool library's URL and token, checked with the
//! library, then saved in the config file (made readable by its owner only), the rest of the
//! file kept as it was written, comments included.

mod args;

pub(crate) use args::{LoginArgs, LogoutArgs};

use std::io::{IsTerminal as _, Read as _};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use llmtool_config::Config;

use crate::outcome::Outcome;
use crate::{registry, secrets, settings};

/// The longest token read from standard input.
const MAX_TOKEN_BYTES: u64 = 4096;

pub(crate) fn login(args: &LoginArgs) -> anyhow::Result<Outcome> {
    let url = args.url.trim().trim_end_matches('/');
    let url = url.strip_suffix("/api/v1").unwrap_or(url);
    anyhow::ensure!(
        url.starts_with("http://") || url.starts_with("https://"),
        "`{url}` is not a library's URL: write http://HOST:PORT, as `llmtool serve` prints it"
    );
    let token = if args.no_token { None } else { Some(read_token(url)?) };
    if let Some(token) = &token {
        secrets::add(token);
    }
    let client = llmtool_runtime::files::library_client(url, token.clone())?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let explained = |error| registry::explained(error, &client, "viewer");
    // Nothing is saved that the library does not take.
    match &token {
        Some(_) => {
            let who = runtime.block_on(client.who()).map_err(explained)?;
            eprintln!("signed in to {url} as `{}` ({})", who.name, who.role);
        }
        None => {
            runtime.block_on(client.search(None, None, 1)).map_err(explained)?;
            eprintln!("{url} answers without a token");
        }
    }
    let path = config_path()?;
    edit_config(&path, |config| {
        config["registry"] = toml_edit::value(url);
        match &token {
            Some(token) => config["registry_token"] = toml_edit::value(token.as_str()),
            None => drop(config.remove("registry_token")),
        }
    })?;
    eprintln!("saved in {} (readable by you only)", path.display());
    Ok(Outcome::Ok)
}

pub(crate) fn logout(_args: &LogoutArgs) -> anyhow::Result<Outcome> {
    let path = config_path()?;
    if !path.exists() {
        eprintln!("no token is saved: {} does not exist", path.display());
        return Ok(Outcome::Ok);
    }
    let mut removed = false;
    edit_config(&path, |config| removed = config.remove("registry_token").is_some())?;
    if removed {
        eprintln!("the library's token is removed from {}", path.display());
    } else {
        eprintln!("no token is saved in {}", path.display());
    }
    Ok(Outcome::Ok)
}

/// The token for `url`: `LLMTOOL_TOKEN`, else asked for on a terminal (not echoed), else the
/// first line of standard input.
fn read_token(url: &str) -> anyhow::Result<String> {
    if let Ok(token) = std::env::var("LLMTOOL_TOKEN")
        && !token.trim().is_empty()
    {
        eprintln!("the token is LLMTOOL_TOKEN's");
        return Ok(token.trim().to_owned());
    }
    let token = if std::io::stdin().is_terminal() {
        eprint!("token for {url} (`llmtool token create NAME` on the library's machine): ");
        console::Term::stderr().read_secure_line().context("cannot read the token")?
    } else {
        let mut text = String::new();
        std::io::stdin()
            .take(MAX_TOKEN_BYTES)
            .read_to_string(&mut text)
            .context("cannot read the token from standard input")?;
        text.lines().next().unwrap_or_default().to_owned()
    };
    let token = token.trim();
    anyhow::ensure!(
        !token.is_empty(),
        "no token given: paste one, pipe one in, or pass --no-token for a library open to read"
    );
    Ok(token.to_owned())
}

/// The config file the library commands read: `LLMTOOL_CONFIG`, else the default one.
fn config_path() -> anyhow::Result<PathBuf> {
    match registry::config_file() {
        Some(path) => Ok(path),
        None => settings::default_config_path().context(
            "cannot tell where the config file is: set HOME, XDG_CONFIG_HOME or LLMTOOL_CONFIG",
        ),
    }
}

/// Applies `change` to the config file at `path` (made if missing), keeping the rest of it as
/// written. The result must still be a config llmtool reads; it replaces the file at once
/// (`io::write_privately`: a link written through, a private file renamed over it), so that a
/// crash leaves the old file or the new one whole.
fn edit_config(
    path: &Path,
    change: impl FnOnce(&mut toml_edit::DocumentMut),
) -> anyhow::Result<()> {
    let shown = path.display();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(error).with_context(|| format!("cannot read `{shown}`")),
    };
    let mut config: toml_edit::DocumentMut =
        text.parse().with_context(|| format!("`{shown}` is not TOML"))?;
    change(&mut config);
    let text = config.to_string();
    Config::parse(&text).with_context(|| format!("`{shown}` would not read afterwards"))?;
    if let Some(folder) = path.parent().filter(|folder| !folder.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot make {}", folder.display()))?;
    }
    crate::io::write_privately(path, text.as_bytes())
}
