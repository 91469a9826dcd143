//! The arguments of `llmtool serve` and `llmtool token`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use llmtool_server::ConnectionLimits;

use crate::cli::{LogFormat, LogLevel, ModelArgs, ReportFormat};

/// Where the tool library is: `--db`, else a SQLite file in the data directory.
#[derive(Debug, Args)]
pub(crate) struct LibraryArgs {
    /// The library's database: a SQLite file (a path or `sqlite://PATH`), or
    /// `postgres://USER@HOST/DB` (default: `library.db` in the data directory).
    #[arg(long, value_name = "URL")]
    pub(crate) db: Option<String>,
}

/// What a command that lists the library's tokens, members or teams takes.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub(crate) library: LibraryArgs,
    /// How the list is printed.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub(crate) format: ReportFormat,
}

/// The Slack app the server answers for (docs/slack.md): the one these files give, else the
/// one an admin adds in the Control Center.
#[derive(Debug, Args)]
pub(crate) struct SlackArgs {
    /// A file holding the Slack app's signing secret (its first line): Slack's requests to
    /// `/slack/events`, `/slack/commands` and `/slack/interactivity` are then answered (with
    /// `--slack-bot-token-file`), whatever the Control Center says.
    #[arg(long = "slack-signing-secret-file", value_name = "FILE", requires = "bot_token_file")]
    pub(crate) signing_secret_file: Option<PathBuf>,
    /// A file holding the app's bot token (`xoxb-...`, its first line).
    #[arg(long = "slack-bot-token-file", value_name = "FILE", requires = "signing_secret_file")]
    pub(crate) bot_token_file: Option<PathBuf>,
    /// The Web API's base address (default: Slack's), for a stand-in to take Slack's place;
    /// "Add to Slack" then goes to the stand-in's site too.
    #[arg(long = "slack-api-url", value_name = "URL")]
    pub(crate) api_url: Option<String>,
}

/// Single sign-on for the studio, over the config's `[server.sso]` table (docs/teams.md).
#[derive(Debug, Args)]
pub(crate) struct SsoArgs {
    /// The OpenID provider's issuer URL: sign-in by OpenID Connect (with `--sso-client-id`,
    /// or the config's `[server.sso]`).
    #[arg(long = "sso-issuer", value_name = "URL")]
    pub(crate) issuer: Option<String>,
    /// The client id registered at the OpenID provider.
    #[arg(long = "sso-client-id", value_name = "ID")]
    pub(crate) client_id: Option<String>,
    /// The environment variable that holds the client secret.
    #[arg(
        long = "sso-client-secret-env",
        value_name = "NAME",
        conflicts_with = "client_secret_file"
    )]
    pub(crate) client_secret_env: Option<String>,
    /// A file that holds the client secret (its first line).
    #[arg(long = "sso-client-secret-file", value_name = "FILE")]
    pub(crate) client_secret_file: Option<String>,
    /// Make members on their first sign-in at this e-mail domain (repeat for several).
    #[arg(long = "sso-allowed-domain", value_name = "DOMAIN")]
    pub(crate) allowed_domains: Vec<String>,
    /// The role of members made on their first sign-in (viewer unless given).
    #[arg(long = "sso-default-role", value_name = "ROLE")]
    pub(crate) default_role: Option<String>,
}

/// Serve the shared tool library over HTTP (`/api/v1`): versioned, tagged, labelled tools.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool serve                                   # SQLite in the data directory, 127.0.0.1:8080\n  llmtool serve --public-read --listen 127.0.0.1:9000\n  llmtool serve --db postgres://llmtool@db.internal/library --listen 0.0.0.0:8080 --allowed-host tools.example.org\n\nA new library is seeded with the built-in tools (tag `built-in`). Binding a non-loopback\naddress needs at least one token (`llmtool token create`). See docs/registry.md."
)]
#[command(args_conflicts_with_subcommands = true)]
#[allow(clippy::struct_excessive_bools, reason = "independent command-line switches")]
pub(crate) struct ServeArgs {
    #[command(subcommand)]
    pub(crate) action: Option<ServeCommand>,
    #[command(flatten)]
    pub(crate) library: LibraryArgs,
    /// The address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub(crate) listen: std::net::SocketAddr,
    /// Let anyone read the library without a token (writing always needs one).
    #[arg(long)]
    pub(crate) public_read: bool,
    #[command(flatten)]
    pub(crate) connections: ConnectionArgs,
    /// Requests a minute for each token (or client address, without one); 0: no limit.
    #[arg(long, value_name = "N", default_value_t = 600)]
    pub(crate) rate_limit: u32,
    /// Serve over MCP (at `/mcp`) the versions this label points at, not the latest.
    #[arg(long, value_name = "LABEL")]
    pub(crate) mcp_label: Option<String>,
    /// Tool runs at once (the API's and MCP's, each); more wait their turn.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub(crate) max_runs: usize,
    /// Tool runs that may wait; past that, a run is refused as busy.
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub(crate) max_queued_runs: usize,
    /// The most mebibytes of image tools' pictures the library keeps with their runs, for
    /// the studio to show again: past that, the oldest runs' pictures go (0 keeps none).
    #[arg(long, default_value_t = 1024, value_name = "MIB")]
    pub(crate) picture_storage_mib: u64,
    /// Answer requests naming this `Host` too (`name` or `name:port`; repeat for more): the
    /// name clients, a reverse proxy or a load balancer use. Other names than localhost and
    /// the server's own address are refused on every route (DNS rebinding).
    #[arg(long, value_name = "HOST")]
    pub(crate) allowed_host: Vec<String>,
    /// Accept `/mcp` requests from this browser origin too (`https://app.example.org`; repeat).
    #[arg(long, value_name = "ORIGIN")]
    pub(crate) allowed_origin: Vec<String>,
    /// The address people reach the studio at (`https://tools.example.com`), for invites'
    /// links and the single sign-on's redirect (default: the config's `server.public_url`).
    #[arg(long, value_name = "URL")]
    pub(crate) public_url: Option<String>,
    /// The integration keys that seal the providers' keys in the library (one 32-byte key in
    /// base64 a line, the first sealing; `llmtool integration keygen` makes one). Default:
    /// `LLMTOOL_INTEGRATION_KEYS`, else `integration-keys` in the data directory, made on
    /// first start. Servers sharing a PostgreSQL library need the same keys.
    #[arg(long, value_name = "FILE")]
    pub(crate) integration_keys: Option<std::path::PathBuf>,
    /// Run the library's smart tools (their Python code, in the WebAssembly sandbox) when a
    /// member runs them; without it, such a run is refused. Their `llm()` calls are admitted
    /// and charged like any run. With `--yes`, the Python runtime is fetched at start if it is
    /// not installed (never later, because a client asked).
    #[arg(long)]
    pub(crate) smart_tools: bool,
    #[command(flatten)]
    pub(crate) sandbox: crate::commands::run::SandboxArgs,
    /// With `--smart-tools`: fetch the Python runtime at start if it is not installed.
    #[arg(long, short)]
    pub(crate) yes: bool,
    #[command(flatten)]
    pub(crate) sso: SsoArgs,
    #[command(flatten)]
    pub(crate) slack: SlackArgs,
    /// How the log lines on standard error are written: `json` is one object a line, with a
    /// line for each request (its `request_id` is also in the `X-Request-Id` header).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,
    /// What is logged (default: `info`, a line a request, with `--log-format json`; `warn`
    /// otherwise).
    #[arg(long, value_enum)]
    pub(crate) log_level: Option<LogLevel>,
    /// Serve `/metrics`, `/healthz` and `/readyz` on this address too (they are always on the
    /// main one). `/metrics` answers a client on this machine, else an admin's token.
    #[arg(long, value_name = "ADDR", conflicts_with = "no_metrics")]
    pub(crate) metrics_listen: Option<std::net::SocketAddr>,
    /// Name in `/metrics` the tools not every member sees (without the `all` tag) too; without
    /// it, their runs are counted under the tool `private`.
    #[arg(long, conflicts_with = "no_metrics")]
    pub(crate) metrics_private_tools: bool,
    /// Count nothing for `/metrics` (which then answers 404).
    #[arg(long)]
    pub(crate) no_metrics: bool,
    /// On SIGTERM or Ctrl-C, how long runs in flight may take to finish before the server
    /// stops anyway.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub(crate) shutdown_timeout: u64,
    #[command(flatten)]
    pub(crate) target: ModelArgs,
}

/// What else `serve` does besides serving.
#[derive(Debug, Subcommand)]
pub(crate) enum ServeCommand {
    /// Copy the library to a new file while it serves (`llmtool admin backup`'s older name).
    Backup {
        /// The new file.
        file: PathBuf,
        #[command(flatten)]
        library: LibraryArgs,
    },
}

/// Manage the library's API tokens: each has a name and a role (viewer, editor, admin, owner),
/// and belongs to a member.
#[derive(Debug, Subcommand)]
pub(crate) enum TokenCommand {
    /// Make a token; it is printed once, and only its hash is kept.
    Create {
        /// Who or what the token is for.
        name: String,
        /// The token's role: what it may do (never more than its member may). Default: the
        /// member's role with `--member`, else viewer.
        #[arg(long, value_enum)]
        role: Option<TokenRole>,
        /// The member the token belongs to (their e-mail); it sees what they see. Without it,
        /// the token gets a member of its own, `NAME@tokens.invalid`, with its role.
        #[arg(long, value_name = "EMAIL")]
        member: Option<String>,
        /// How many days the token works (1 to 366). Default: until revoked.
        #[arg(long, value_name = "DAYS")]
        days: Option<u32>,
        #[command(flatten)]
        library: LibraryArgs,
    },
    /// List the tokens (never the tokens themselves).
    List(ListArgs),
    /// Revoke a token: it stops working at once.
    Revoke {
        /// The token's name, as `token list` shows it.
        name: String,
        #[command(flatten)]
        library: LibraryArgs,
    },
}

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TokenRole {
    /// Read the library.
    Viewer,
    /// Also publish, tag and label.
    Editor,
    /// Also delete tools, and manage tokens, members and teams.
    Admin,
    /// Also make and unmake owners.
    Owner,
}

/// The limits of the server's connections (docs/security.md, "Connections").
#[derive(Debug, Args)]
pub(crate) struct ConnectionArgs {
    /// Seconds a request's header may take to arrive in full; an idle keep-alive connection is
    /// closed after as long.
    #[arg(long, value_name = "SECONDS", default_value_t = ConnectionLimits::default().header_timeout.as_secs())]
    pub(crate) header_timeout: u64,
    /// Seconds a connection may go with no byte read or written (streams send a keep-alive
    /// every 15 seconds).
    #[arg(long, value_name = "SECONDS", default_value_t = ConnectionLimits::default().idle_timeout.as_secs())]
    pub(crate) idle_timeout: u64,
    /// Connections open at once from one client address (a trusted proxy's excepted); past
    /// it, a new one is closed at once.
    #[arg(long, value_name = "N", default_value_t = ConnectionLimits::default().per_address)]
    pub(crate) max_connections_per_address: usize,
    /// Connections open at once in all (default: three quarters of the open-file limit, which
    /// the server raises to its hard limit at start, at most 10,000).
    #[arg(long, value_name = "N")]
    pub(crate) max_connections: Option<usize>,
    /// A reverse proxy in front of the server (an IP address; repeat for several): its
    /// `X-Forwarded-For` names the client, and it is not held to the per-address cap.
    #[arg(long = "trusted-proxy", value_name = "ADDR")]
    pub(crate) trusted_proxies: Vec<std::net::IpAddr>,
}

impl ConnectionArgs {
    /// The limits these arguments set, the total cap sized for this process when not given
    /// (its open-files limit raised to the hard one first).
    pub(crate) fn limits(&self) -> ConnectionLimits {
        let open_files = llmtool_runtime::smart::raise_open_files_limit();
        let for_this_process = ConnectionLimits::for_open_files(open_files);
        ConnectionLimits {
            header_timeout: Duration::from_secs(self.header_timeout.max(1)),
            idle_timeout: Duration::from_secs(self.idle_timeout.max(1)),
            per_address: self.max_connections_per_address.max(1),
            total: self.max_connections.unwrap_or(for_this_process.total).max(1),
            proxies: self.trusted_proxies.clone(),
        }
    }
}
