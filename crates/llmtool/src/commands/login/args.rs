//! The arguments of `llmtool login` and `llmtool logout`.

use clap::Args;

/// Save a tool library's URL and token in the config file, so that `publish`, `search`,
/// `pull`, `usage --library` and `registry:` names reach it without flags.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool login http://library.internal:8080          # asks for the token (not echoed)\n  echo \"$TOKEN\" | llmtool login http://library.internal:8080\n  llmtool login http://127.0.0.1:8080 --no-token      # a library open to read\n\nThe token is checked with the library first (it says whose it is and its role), then\nwritten as `registry_token` next to `registry` in the config file, which is made readable by\nits owner only (`$LLMTOOL_CONFIG` when set, as every command reads it). The token is sent to\nthat library and to no other; LLMTOOL_TOKEN still wins.\nThe library's operator makes tokens with `llmtool token create NAME --role ROLE`."
)]
pub(crate) struct LoginArgs {
    /// The library's URL (`http://HOST:PORT`, as `llmtool serve` prints it).
    #[arg(value_name = "URL")]
    pub(crate) url: String,
    /// Save the URL alone: the library is read without a token.
    #[arg(long)]
    pub(crate) no_token: bool,
}

/// Remove the saved token from the config file (the library's URL stays).
#[derive(Debug, Args)]
pub(crate) struct LogoutArgs {}
