//! `llmtool serve` (the tool library over HTTP) and `llmtool token` (its API tokens).

mod args;
mod slack;

pub(crate) use args::{
    LibraryArgs, ListArgs, ServeArgs, ServeCommand, SsoArgs, TokenCommand, TokenRole,
};

use std::io::Write as _;
use std::sync::Arc;

use anyhow::Context as _;
use comfy_table::{ContentArrangement, Table, presets};
use llmtool_config::{ServerConfig, SsoConfig};
use llmtool_mcp::RunLimits;
use llmtool_mcp::transport::HttpOptions;
use llmtool_providers::resolve::Providers;
use llmtool_registry::{NewToken, Role, Store, TokensOf};
use llmtool_runtime::pictures::Pictures;
use llmtool_runtime::{Fetch, LogPolicy, Runtime, RuntimeOptions};
use llmtool_server::{
    Access, KEYRING_VARIABLE, Keyring, McpOptions, RateLimiter, ServerState, SignInSetup,
    new_token, token_hash,
};

use crate::cli::ReportFormat;
use crate::io;
use crate::outcome::Outcome;
use crate::settings;

/// The library's file in the data directory, when `--db` names none.
const LIBRARY_FILE: &str = "library.db";

pub(crate) fn serve(args: &ServeArgs) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    if let Some(ServeCommand::Backup { file, library }) = &args.action {
        return runtime.block_on(crate::commands::admin::backup(file, library));
    }
    let default_level = match args.log_format {
        crate::cli::LogFormat::Json => crate::cli::LogLevel::Info,
        crate::cli::LogFormat::Text => crate::cli::LogLevel::Warn,
    };
    let telemetry = crate::telemetry::start()?;
    crate::logging::init(
        args.log_level.unwrap_or(default_level),
        args.log_format,
        telemetry.as_ref(),
    );
    runtime.block_on(async {
        let (store, shown) = open(&args.library).await?;
        if !args.listen.ip().is_loopback() {
            let tokens = store.tokens(TokensOf::Everyone).await?;
            anyhow::ensure!(
                tokens.iter().any(|t| !t.revoked),
                "{} is not a loopback address: make a token first (`llmtool token create NAME --role admin`), so that the library is not open to the network",
                args.listen
            );
        }
        let seeded = llmtool_server::seed_built_ins(store.as_ref()).await?;
        if seeded > 0 {
            eprintln!("llmtool serve: a new library, seeded with {seeded} built-in tools");
        }
        let providers = settings::load_providers(args.target.setup.config.as_deref())?;
        let limits = RunLimits { concurrent: args.max_runs.max(1), queued: args.max_queued_runs };
        // Several servers of one PostgreSQL library keep their rate limits in it, as one.
        let limiter = RateLimiter::new(args.rate_limit).shared_through(&store);
        let connections = args.connections.limits();
        let state = ServerState::new(store, Access { public_read: args.public_read }, Arc::new(limiter))
        .with_metrics(!args.no_metrics)
        .with_private_tools_in_metrics(args.metrics_private_tools)
        .with_traces(telemetry.is_some())
        .with_allowed_hosts(args.allowed_host.clone())
        .with_sign_in(sign_in_setup(args, providers.config.server.clone())?)
        .with_keyring(keyring(args.integration_keys.as_deref())?)
        .with_picture_storage(args.picture_storage_mib.saturating_mul(1 << 20))
        .with_connection_limits(connections.clone())
        .with_runtime(tool_runtime(args, providers)?, limits);
        let state = match slack::options(&args.slack)? {
            Some(options) => state.with_slack(options),
            None => state.with_slack_api(args.slack.api_url.clone()),
        }
        .map_err(anyhow::Error::msg)?;
        let runner = state.library_runner().context("the server has no runtime")?;
        let http = HttpOptions {
            allowed_hosts: args.allowed_host.clone(),
            allowed_origins: args.allowed_origin.clone(),
            ..HttpOptions::default()
        };
        let mcp = McpOptions { label: args.mcp_label.clone(), limits, http };
        let state = state.with_mcp(runner, mcp).await?;
        state.follow_changes().await?;
        state.start_slack();
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let address = listener.local_addr()?;
        // A server goes on serving when nobody reads its standard error any more.
        let _ = writeln!(
            std::io::stderr(),
            "llmtool serve: http://{address}/api/v1 (library: {shown})\nllmtool serve: the studio at http://{address}/ (sign in with a token: `llmtool token create NAME`)\nllmtool serve: MCP at http://{address}/mcp (a token of the library's)"
        );
        if let Some(address) = args.metrics_listen {
            let listener = tokio::net::TcpListener::bind(address)
                .await
                .with_context(|| format!("cannot listen on {address}"))?;
            let _ = writeln!(
                std::io::stderr(),
                "llmtool serve: metrics at http://{}/metrics",
                listener.local_addr()?
            );
            let app = llmtool_server::operations_router(state.clone());
            tokio::spawn(async move {
                llmtool_mcp::transport::serve_app(app, listener, &connections, stop_signal()).await
            });
        }
        let state = state.with_grace(std::time::Duration::from_secs(args.shutdown_timeout));
        llmtool_server::serve(state, listener, stop_signal()).await?;
        let _ = writeln!(std::io::stderr(), "llmtool serve: stopped");
        Ok(Outcome::Ok)
    })
}

/// Completes on SIGTERM (what systemd, Docker and Kubernetes send to stop a service) or
/// Ctrl-C.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut terminate) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// The integration keys: `--integration-keys FILE`, else `LLMTOOL_INTEGRATION_KEYS`, else the
/// data directory's `integration-keys`, made (readable by its owner only) on first start.
fn keyring(file: Option<&std::path::Path>) -> anyhow::Result<Keyring> {
    if let Some(file) = file {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read the integration keys {}", file.display()))?;
        return Keyring::parse(&text).with_context(|| file.display().to_string());
    }
    if let Ok(text) = std::env::var(KEYRING_VARIABLE) {
        return Keyring::parse(&text).context(KEYRING_VARIABLE);
    }
    let dir = llmtool_log::data_dir().context(
        "cannot tell where the integration keys are: set HOME, XDG_DATA_HOME or LLMTOOL_DATA_DIR, or give --integration-keys",
    )?;
    llmtool_log::private::private_dir(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join("integration-keys");
    match std::fs::read_to_string(&path) {
        Ok(text) => Keyring::parse(&text).with_context(|| path.display().to_string()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let text = format!(
                "# The keys that seal the providers' keys in the library: keep a copy apart from\n# the database's backups. See docs/control-center.md.\n{}\n",
                Keyring::new_key()
            );
            // A new file only: a server starting at the same moment may have made it.
            let mut options = std::fs::OpenOptions::new();
            match llmtool_log::private::open_private(options.write(true).create_new(true), &path) {
                Ok((mut file, _)) => {
                    std::io::Write::write_all(&mut file, text.as_bytes())
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    eprintln!("llmtool serve: made the integration keys {}", path.display());
                    Ok(Keyring::parse(&text)?)
                }
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                    keyring(Some(&path))
                }
                Err(error) => {
                    Err(error).with_context(|| format!("cannot write {}", path.display()))
                }
            }
        }
        Err(error) => Err(error).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// How people sign in besides pasting a token: the config's `[server]` table, under the flags.
fn sign_in_setup(args: &ServeArgs, mut server: ServerConfig) -> anyhow::Result<SignInSetup> {
    server.sso = sso_config(&args.sso, server.sso.take());
    Ok(SignInSetup::new(args.public_url.clone(), &server)?)
}

/// The `[server.sso]` table with the flags over it; the flags alone when it has none.
fn sso_config(flags: &SsoArgs, table: Option<SsoConfig>) -> Option<SsoConfig> {
    let mut config = match (table, &flags.issuer, &flags.client_id) {
        (Some(table), _, _) => table,
        (None, Some(issuer), Some(client_id)) => SsoConfig {
            issuer: issuer.clone(),
            client_id: client_id.clone(),
            client_secret_env: None,
            client_secret_file: None,
            allowed_domains: Vec::new(),
            default_role: None,
            ca_file: None,
            trust_unverified_email: false,
        },
        (None, _, _) => return None,
    };
    if let Some(issuer) = &flags.issuer {
        config.issuer.clone_from(issuer);
    }
    if let Some(client_id) = &flags.client_id {
        config.client_id.clone_from(client_id);
    }
    if flags.client_secret_env.is_some() || flags.client_secret_file.is_some() {
        config.client_secret_env.clone_from(&flags.client_secret_env);
        config.client_secret_file.clone_from(&flags.client_secret_file);
    }
    if !flags.allowed_domains.is_empty() {
        config.allowed_domains.clone_from(&flags.allowed_domains);
    }
    if flags.default_role.is_some() {
        config.default_role.clone_from(&flags.default_role);
    }
    Some(config)
}

pub(crate) fn token(command: &TokenCommand) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        match command {
            TokenCommand::Create { name, role, member, days, library } => {
                let store = open_by_user(library).await?;
                let role = match (role, member) {
                    (Some(role), _) => role_of(*role),
                    (None, Some(email)) => store.member(email).await?.role,
                    (None, None) => Role::Viewer,
                };
                let token = new_token();
                let hash = token_hash(&token);
                let member = member.as_deref();
                let made = NewToken { name, role, token_hash: &hash, member, days: *days };
                store.issue_token(&made).await?;
                eprintln!("the token of `{name}` (shown once; only its hash is kept):");
                io::write_stdout(format!("{token}\n").as_bytes())?;
            }
            TokenCommand::List(ListArgs { library, format }) => {
                let (store, _) = open(library).await?;
                let tokens = store.tokens(TokensOf::Everyone).await?;
                let text = match format {
                    ReportFormat::Json => serde_json::to_string_pretty(&tokens)? + "\n",
                    ReportFormat::Text => {
                        let header = ["name", "role", "member", "created", "expires", "last used"];
                        let mut table = table(header);
                        for token in &tokens {
                            let expires = match (&token.expires_at, token.revoked) {
                                (_, true) => "revoked",
                                (Some(at), false) => at.as_str(),
                                (None, false) => "never",
                            };
                            table.add_row([
                                &token.name,
                                token.role.as_str(),
                                token.member.as_deref().unwrap_or(""),
                                &token.created_at,
                                expires,
                                token.last_used_at.as_deref().unwrap_or("never"),
                            ]);
                        }
                        table.to_string() + "\n"
                    }
                };
                io::write_stdout(text.as_bytes())?;
            }
            TokenCommand::Revoke { name, library } => {
                let store = open_by_user(library).await?;
                store.revoke_token(name, TokensOf::Everyone).await?;
                eprintln!("the token of `{name}` is revoked");
            }
        }
        Ok(Outcome::Ok)
    })
}

/// A table of the library's tokens, members or teams, under `header`.
pub(crate) fn table<const N: usize>(header: [&str; N]) -> Table {
    let mut table = Table::new();
    table
        .load_style(presets::ASCII_BORDERS_ONLY_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header);
    table
}

/// How the server runs tools: the providers of the config, the model flags, nothing ever
/// fetched because a client asked, and each run logged in the library's own database.
fn tool_runtime(args: &ServeArgs, providers: Providers) -> anyhow::Result<Runtime> {
    let options = RuntimeOptions {
        fetch: Fetch::Never,
        secrets: std::env::var("LLMTOOL_TOKEN").into_iter().collect(),
        log: LogPolicy::Off,
        // A client runs only what this server's operator configured.
        only_configured: true,
        smart: if args.smart_tools { Some(args.sandbox.limits()?) } else { None },
        // An image tool's pictures go back to an MCP client as image content; the run API
        // refuses image tools (see `run_api`).
        pictures: Pictures::Returned,
        ..settings::runtime_options(&args.target)
    };
    if args.smart_tools {
        crate::commands::sandbox::ready_python(args.yes)?;
    }
    Ok(Runtime::new(providers, options)?)
}

pub(crate) fn role_of(role: TokenRole) -> Role {
    match role {
        TokenRole::Viewer => Role::Viewer,
        TokenRole::Editor => Role::Editor,
        TokenRole::Admin => Role::Admin,
        TokenRole::Owner => Role::Owner,
    }
}

/// [`open`], each change made through it recorded in the audit log as the user's on this
/// machine: `cli:USER` (from `USER` or `LOGNAME`), since whoever holds the database file
/// holds the library.
pub(crate) async fn open_by_user(library: &LibraryArgs) -> anyhow::Result<Arc<dyn Store>> {
    let (store, _) = open(library).await?;
    let user = ["USER", "LOGNAME"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|user| !user.trim().is_empty()))
        .unwrap_or_else(|| "unknown".to_owned());
    Ok(store
        .acting_as(llmtool_registry::Actor { name: format!("cli:{}", user.trim()), address: None }))
}

/// The library `--db` names, or the SQLite file in the data directory (its folder made); and
/// how to show it (a PostgreSQL URL without its password).
pub(crate) fn database(library: &LibraryArgs) -> anyhow::Result<(String, String)> {
    let database = match &library.db {
        Some(database) => database.clone(),
        None => {
            let dir = llmtool_log::data_dir().context(
                "cannot tell where the library is: set HOME, XDG_DATA_HOME or LLMTOOL_DATA_DIR, or give --db",
            )?;
            llmtool_log::private::private_dir(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            dir.join(LIBRARY_FILE).to_string_lossy().into_owned()
        }
    };
    let shown = crate::secrets::redact(&database).into_owned();
    Ok((database, shown))
}

/// The library `--db` names, or the SQLite file in the data directory, opened; and how to show
/// it (a PostgreSQL URL without its password).
pub(crate) async fn open(library: &LibraryArgs) -> anyhow::Result<(Arc<dyn Store>, String)> {
    let (database, shown) = database(library)?;
    let store = llmtool_registry::open(&database)
        .await
        .with_context(|| format!("cannot open the library {shown}"))?;
    Ok((store, shown))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags() -> SsoArgs {
        SsoArgs {
            issuer: None,
            client_id: None,
            client_secret_env: None,
            client_secret_file: None,
            allowed_domains: Vec::new(),
            default_role: None,
        }
    }

    #[test]
    fn single_sign_on_flags_go_over_the_config() {
        assert_eq!(sso_config(&flags(), None), None);
        let issuer_only = SsoArgs { issuer: Some("https://login.example.com".into()), ..flags() };
        assert_eq!(sso_config(&issuer_only, None), None, "an issuer needs a client id");
        let given = SsoArgs {
            client_id: Some("llmtool".into()),
            client_secret_file: Some("/run/secret".into()),
            allowed_domains: vec!["example.com".into()],
            ..issuer_only
        };
        let made = sso_config(&given, None).unwrap();
        assert_eq!(
            (made.issuer.as_str(), made.client_id.as_str()),
            ("https://login.example.com", "llmtool")
        );
        let table = SsoConfig {
            issuer: "https://old.example.com".into(),
            client_id: "old".into(),
            client_secret_env: Some("OLD_SECRET".into()),
            client_secret_file: None,
            allowed_domains: vec![],
            default_role: Some("editor".into()),
            ca_file: None,
            trust_unverified_email: false,
        };
        let over = sso_config(&given, Some(table)).unwrap();
        assert_eq!(over.issuer, "https://login.example.com");
        assert_eq!(
            (over.client_secret_env, over.client_secret_file.as_deref()),
            (None, Some("/run/secret"))
        );
        assert_eq!(
            (over.allowed_domains, over.default_role.as_deref()),
            (vec!["example.com".to_owned()], Some("editor"))
        );
    }
}
