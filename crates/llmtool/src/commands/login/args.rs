//! The arguments of `llmtool login` and `llmtool logout`.

use clap::Args;

/// Sign in to a tool library: in the browser (single sign-on included) by default, which hands
/// this machine a personal token of yours; or with a token you have (`--token`). The URL and
/// the token are saved in the config file, so that `run registry:…`, `publish`, `search`,
/// `pull`, `usage --library` and `mcp --registry` reach the library without flags.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool login http://library.internal:8080          # opens the studio: allow the code shown\n  llmtool login http://library.internal:8080 --no-browser\n  echo \"$TOKEN\" | llmtool login http://library.internal:8080 --token\n  llmtool login http://127.0.0.1:8080 --no-token      # a library open to read\n\nWithout --token, llmtool asks the library for a sign-in code, prints the studio's page\nto allow it at (and opens it in your browser on a desktop), and waits up to 10 minutes:\nonce you allow it, signed in as yourself, the library makes a token of yours (your role,\n90 days) and hands it over. With --token, the token is LLMTOOL_TOKEN's, else asked for\non a terminal (not echoed), else the first line of standard input. Either way it is\nchecked with the library, then written as `registry_token` next to `registry` in the\nconfig file, readable by its owner only. `llmtool logout` revokes it on the library."
)]
pub(crate) struct LoginArgs {
    /// The library's URL (`http://HOST:PORT`, as `llmtool serve` prints it).
    #[arg(value_name = "URL")]
    pub(crate) url: String,
    /// Sign in with a token you have instead of the browser (alone, or as `-`: read from
    /// `LLMTOOL_TOKEN`, the terminal or standard input; naming it here puts it in your shell's
    /// history).
    #[arg(
        long,
        value_name = "TOKEN",
        num_args = 0..=1,
        default_missing_value = "-",
        conflicts_with = "no_token"
    )]
    pub(crate) token: Option<String>,
    /// Save the URL alone: the library is read without a token.
    #[arg(long)]
    pub(crate) no_token: bool,
    /// Print the page to open instead of opening a browser.
    #[arg(long)]
    pub(crate) no_browser: bool,
}

/// Sign out: the saved token is revoked on the library, then removed from the config file
/// (the library's URL stays).
#[derive(Debug, Args)]
pub(crate) struct LogoutArgs {}

/// Who the saved token (or `LLMTOOL_TOKEN`) signs in as: the member, their teams, the role.
#[derive(Debug, Args)]
pub(crate) struct WhoamiArgs {
    /// The library (default: the config file's, as `llmtool login` saved it).
    #[arg(long, env = "LLMTOOL_REGISTRY", value_name = "URL")]
    pub(crate) registry: Option<String>,
    /// `json` for the library's own answer.
    #[arg(long, value_enum, default_value_t = crate::cli::ReportFormat::Text)]
    pub(crate) format: crate::cli::ReportFormat,
}
