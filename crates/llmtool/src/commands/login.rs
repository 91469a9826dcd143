//! `llmtool login`, `logout` and `whoami`: a tool library's URL and a token, got by signing
//! in through the studio (the device flow) or given, checked with the library, then saved in
//! the config file (made readable by its owner only), the rest of the file kept as it was
//! written, comments included; revoked on the library at logout.

mod browser;

mod args;

pub(crate) use args::{LoginArgs, LogoutArgs, WhoamiArgs};

use std::io::{IsTerminal as _, Read as _};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use llmtool_config::Config;
use llmtool_registry::GrantAnswer;
use llmtool_registry::client::ClientError;
use llmtool_registry::wire::Signed;

use crate::cli::ReportFormat;
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
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let token = match (args.token.as_deref(), args.no_token) {
        (_, true) => None,
        (Some("-"), false) => Some(read_token(url)?),
        (Some(given), false) => Some(given.trim().to_owned()),
        (None, false) => Some(runtime.block_on(sign_in_by_browser(url, args.no_browser))?),
    };
    if let Some(token) = &token {
        secrets::add(token);
    }
    let client = llmtool_runtime::files::library_client(url, token.clone())?;
    let explained = |error| registry::explained(error, &client, "viewer");
    // Nothing is saved that the library does not take.
    match &token {
        Some(_) => {
            let who = runtime.block_on(client.who()).map_err(explained)?;
            eprintln!("signed in to {url} as {}", described(&who));
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

/// Signs in through the studio: asks the library for a grant, shows where to allow it, and
/// waits for the token it then hands over.
async fn sign_in_by_browser(url: &str, no_browser: bool) -> anyhow::Result<String> {
    let client = llmtool_runtime::files::library_client(url, None)?;
    let explained = |error| registry::explained(error, &client, "viewer");
    let grant = client.open_device_grant(&this_machine()).await.map_err(explained)?;
    let page = format!("{url}{}", grant.verification_uri_complete);
    eprintln!("To sign in, open {page}");
    eprintln!(
        "and allow the code {} there (it expires in {} minutes).",
        grant.user_code,
        grant.expires_in / 60
    );
    if !no_browser && browser::open(&page) {
        eprintln!("(opened in your browser)");
    }
    let interval = std::time::Duration::from_secs(grant.interval.clamp(1, 30));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(grant.expires_in);
    while std::time::Instant::now() < deadline {
        tokio::time::sleep(interval).await;
        match client.redeem_device_grant(&grant.device_code).await.map_err(explained)? {
            GrantAnswer::Waiting => {}
            GrantAnswer::Allowed(made) => {
                let until = made
                    .info
                    .expires_at
                    .as_deref()
                    .map_or("never", |at| at.get(..10).unwrap_or(at));
                eprintln!(
                    "the library made the token `{}` for you (expires {until})",
                    made.info.name
                );
                return Ok(made.token);
            }
            GrantAnswer::Refused(words) => anyhow::bail!("not signed in: {words}"),
        }
    }
    anyhow::bail!("not signed in: nobody allowed the code {} in time", grant.user_code)
}

/// What this machine is called to the member asked to allow it.
fn this_machine() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "a terminal".to_owned());
    format!("llmtool on {host}")
}

/// A signed-in caller in words: the member, the role, the teams and the token's name.
fn described(who: &Signed) -> String {
    let teams = if who.teams.is_empty() {
        "no team".to_owned()
    } else {
        format!("teams {}", who.teams.join(", "))
    };
    let member = if who.member.is_empty() { &who.name } else { &who.member };
    format!("{member} ({}; {teams}), token `{}`", who.role, who.name)
}

pub(crate) fn logout(_args: &LogoutArgs) -> anyhow::Result<Outcome> {
    let path = config_path()?;
    if !path.exists() {
        eprintln!("no token is saved: {} does not exist", path.display());
        return Ok(Outcome::Ok);
    }
    let config = crate::settings::load_providers(Some(&path))?.config;
    if let (Some(url), Some(token)) = (&config.registry, &config.registry_token) {
        secrets::add(token);
        // Revoked on the library first: a token only forgotten here would still work.
        let client = llmtool_runtime::files::library_client(url, Some(token.clone()))?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let revoked = runtime.block_on(async {
            let who = client.who().await?;
            client.revoke_token(&who.name).await.map(|()| who.name)
        });
        match revoked {
            Ok(name) => eprintln!("the token `{name}` is revoked on {url}"),
            Err(ClientError::Refused { status: 401, .. }) => {
                eprintln!("{url} no longer takes the saved token (revoked or expired)");
            }
            Err(error) => {
                return Err(registry::explained(error, &client, "viewer").context(
                    "the token was not revoked, so it is kept: try again, or revoke it on the studio's Tokens page",
                ));
            }
        }
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

pub(crate) fn whoami(args: &WhoamiArgs) -> anyhow::Result<Outcome> {
    let client = registry::client(args.registry.as_deref())?;
    anyhow::ensure!(client.has_token(), "no token: sign in with `llmtool login URL`");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let who = runtime
        .block_on(client.who())
        .map_err(|error| registry::explained(error, &client, "viewer"))?;
    let text = match args.format {
        ReportFormat::Json => {
            let shown = serde_json::json!({
                "member": who.member, "role": who.role, "teams": who.teams, "token": who.name,
            });
            serde_json::to_string_pretty(&shown)? + "\n"
        }
        ReportFormat::Text => format!("{}\n", described(&who)),
    };
    crate::io::write_stdout(text.as_bytes())?;
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
        eprint!("token for {url} (from the studio's Tokens page): ");
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
