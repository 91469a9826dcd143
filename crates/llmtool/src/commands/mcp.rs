//! `llmtool mcp`: serve tool files over the Model Context Protocol, on standard input and
//! output or over Streamable HTTP, with the files watched.

mod args;
mod relay;

pub(crate) use args::{McpArgs, McpHttpArgs, McpOnly};

use std::sync::Arc;
use std::time::Duration;

use std::net::SocketAddr;

use anyhow::Context as _;
use llmtool_format::model::ToolKind;
use llmtool_mcp::transport::HttpOptions;
use llmtool_mcp::{
    FileProblem, Library, LibraryOptions, Only, RunLimits, Server, transport, watch,
};
use llmtool_registry::Reference;
use llmtool_runtime::pictures::Pictures;
use llmtool_runtime::{Fetch, Runtime, RuntimeOptions};

use crate::outcome::Outcome;
use crate::settings;

pub(crate) fn run(args: &McpArgs) -> anyhow::Result<Outcome> {
    // Standard output belongs to the protocol.
    let telemetry = crate::telemetry::start()?;
    crate::logging::init(args.log_level, crate::cli::LogFormat::Text, telemetry.as_ref());
    if let Some(url) = &args.registry {
        return relay::relay(url);
    }
    if !args.name_prefix.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        anyhow::bail!(
            "`--name-prefix {}`: use letters, digits, `_`, `-` and `.`",
            args.name_prefix
        );
    }
    let is_in_library =
        |path: &std::path::Path| path.to_str().and_then(Reference::from_path).is_some();
    let in_library = args.paths.iter().any(|path| is_in_library(path));
    for path in &args.paths {
        if !path.exists() && !is_in_library(path) {
            anyhow::bail!("{} does not exist", path.display());
        }
    }
    // Refuse an unsafe address before anything is loaded or fetched.
    let http = args
        .http
        .map(|address| http_options(address, &args.http_options).map(|o| (address, o)))
        .transpose()?;
    let providers = settings::load_providers(args.target.setup.config.as_deref())?;
    let options = RuntimeOptions {
        // A server never downloads because a client asked: `--yes` pulls at start instead.
        fetch: Fetch::Never,
        secrets: http.iter().filter_map(|(_, o)| o.token.clone()).collect(),
        // A tool runs only on what this server's operator configured.
        only_configured: true,
        smart: if args.smart_tools { Some(args.sandbox.limits()?) } else { None },
        // An image tool's pictures go back to the client, as MCP image content.
        pictures: Pictures::Returned,
        ..settings::runtime_options(&args.target)
    };
    let runtime = Runtime::new(providers, options)?;
    let options = LibraryOptions {
        name_prefix: args.name_prefix.clone(),
        max_file_bytes: crate::io::max_file_bytes(),
        library: if in_library { Some(crate::registry::named()?) } else { None },
    };
    let (library, problems) = Library::load(&args.paths, &options, None);
    report(&problems, &library);
    if args.yes && runtime.needs_default_local_model(library.entries().iter().map(|e| &e.tool)) {
        let spec = &llmtool_local::store::DEFAULT_MODEL;
        if llmtool_local::store::installed_path(spec)?.is_none() {
            crate::commands::model::pull(spec, None)?;
        }
    }
    let smart = library.entries().iter().any(|e| e.tool.kind() == ToolKind::Smart);
    if args.smart_tools && smart {
        crate::commands::sandbox::ready_python(args.yes)?;
    }
    let only = match args.only {
        None => Only::Both,
        Some(McpOnly::Prompts) => Only::Prompts,
        Some(McpOnly::Tools) => Only::Tools,
    };
    let limits = RunLimits {
        concurrent: args.http_options.max_runs.max(1),
        queued: args.http_options.max_queued_runs,
    };
    let server = Server::with_limits(library, Arc::new(runtime), only, limits);
    // Serving goes on without watching if the system refuses a watch (e.g. inotify limits).
    let _watcher = watch::spawn(server.clone(), args.paths.clone(), options, report)
        .inspect_err(|error| tracing::warn!("the files are not watched: {error}"))
        .ok();
    let threads = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    threads.block_on(async {
        match http {
            Some((address, options)) => {
                let listener = tokio::net::TcpListener::bind(address).await?;
                let address = listener.local_addr()?;
                tracing::info!("serving MCP at http://{address}{}", transport::MCP_PATH);
                let shutdown = async {
                    let _ = tokio::signal::ctrl_c().await;
                };
                transport::serve_http(&server, listener, &options, shutdown).await?;
            }
            None => {
                tracing::info!("serving MCP on standard input and output");
                tokio::select! {
                    result = transport::serve_stdio(server) => result?,
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
        }
        anyhow::Ok(())
    })?;
    Ok(Outcome::Ok)
}

/// The access rules and limits of the HTTP endpoint. A token comes from `--token-file` or
/// `LLMTOOL_MCP_TOKEN`; an address other than loopback needs one (or `--insecure-no-auth`).
fn http_options(address: SocketAddr, args: &McpHttpArgs) -> anyhow::Result<HttpOptions> {
    let token = match &args.token_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the token file `{}`", path.display()))?;
            let token = text.trim().to_owned();
            anyhow::ensure!(!token.is_empty(), "the token file `{}` is empty", path.display());
            crate::secrets::add(&token);
            Some(token)
        }
        None => std::env::var("LLMTOOL_MCP_TOKEN")
            .ok()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty()),
    };
    if token.is_none() && !address.ip().is_loopback() {
        if !args.insecure_no_auth {
            anyhow::bail!(
                "`--http {address}` is reachable from other machines, and no token is set: pass `--token-file FILE` or set LLMTOOL_MCP_TOKEN (or, knowing that anyone who reaches it may run tools, `--insecure-no-auth`)"
            );
        }
        tracing::warn!(
            "serving {address} with no token: anyone who can reach it may list and run the tools"
        );
    }
    Ok(HttpOptions {
        allowed_hosts: args.allowed_host.clone(),
        allowed_origins: args.allowed_origin.clone(),
        token,
        max_sessions: args.max_sessions.max(1),
        session_idle: Duration::from_secs(args.session_idle.max(1)),
        connections: transport::ConnectionLimits::for_open_files(
            llmtool_runtime::smart::raise_open_files_limit(),
        ),
        ..HttpOptions::default()
    })
}

/// Logs the files that cannot be served, and what is served.
fn report(problems: &[FileProblem], library: &Library) {
    for problem in problems {
        let kept =
            if problem.kept_previous { " (its last good version is still served)" } else { "" };
        tracing::warn!("skipped {}{kept}:\n{}", problem.path.display(), problem.report.trim_end());
    }
    tracing::info!(
        "{} tool(s): {}",
        library.entries().len(),
        library.names().collect::<Vec<_>>().join(", ")
    );
}
