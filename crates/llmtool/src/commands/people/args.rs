//! The arguments of `llmtool member` and `llmtool team`.

use std::path::PathBuf;

use clap::Subcommand;

use crate::commands::serve::{LibraryArgs, ListArgs, TokenRole};

/// Manage the library's members: each has an e-mail, a name, a role and teams.
#[derive(Debug, Subcommand)]
#[command(
    after_help = "Examples:\n  llmtool member add ana@example.org --name 'Ana Lima' --role editor --team sales\n  llmtool member import people.csv --dry-run\n  llmtool member invite ana@example.org\n  llmtool member edit ana@example.org --team sales --team support\n\nA member sees the tools tagged `all` or with one of their teams' names; owners and admins\nsee every tool. See docs/teams.md."
)]
pub(crate) enum MemberCommand {
    /// Add a member.
    Add {
        /// The member's e-mail (one member whatever its case).
        email: String,
        /// The name shown for them (default: the e-mail's part before `@`).
        #[arg(long)]
        name: Option<String>,
        /// What they may do.
        #[arg(long, value_enum, default_value_t = TokenRole::Viewer)]
        role: TokenRole,
        /// A team of theirs (repeat for several); it must exist.
        #[arg(long = "team", value_name = "TEAM")]
        teams: Vec<String>,
        #[command(flatten)]
        library: LibraryArgs,
    },
    /// List the members.
    List(ListArgs),
    /// Change a member's name, role or teams.
    Edit {
        /// The member's e-mail.
        email: String,
        /// Their new display name.
        #[arg(long)]
        name: Option<String>,
        /// Their new role (the last owner stays an owner).
        #[arg(long, value_enum)]
        role: Option<TokenRole>,
        /// Their teams, all of them (repeat for several); replaces those they have.
        #[arg(long = "team", value_name = "TEAM", conflicts_with = "no_teams")]
        teams: Vec<String>,
        /// Take them out of every team.
        #[arg(long)]
        no_teams: bool,
        #[command(flatten)]
        library: LibraryArgs,
    },
    /// Remove a member: their tokens are revoked and their sessions end.
    Remove {
        /// The member's e-mail.
        email: String,
        #[command(flatten)]
        library: LibraryArgs,
    },
    /// Send a member a one-time sign-in link to the studio by mail, valid for 72 hours,
    /// through the SMTP server of the config's `[server.smtp]` table.
    Invite {
        /// The member's e-mail.
        email: String,
        /// The config file with `[server]` (default: `~/.config/llmtool/config.toml`).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// The studio's address, which the link opens (default: the config's
        /// `server.public_url`).
        #[arg(long, value_name = "URL")]
        public_url: Option<String>,
        /// Print the link on standard output instead of mailing it, to hand it over yourself.
        #[arg(long)]
        print_link: bool,
        #[command(flatten)]
        library: LibraryArgs,
    },
    /// Add the members of a CSV file (columns email, name, role, teams): all, or none if any
    /// row is wrong (each wrong row is named with its line).
    Import {
        /// The CSV file (`-` for standard input).
        file: PathBuf,
        /// Check the file against the library, and add nobody.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        library: LibraryArgs,
    },
}

/// Manage the library's teams: a team's name is the tag that curates tools for it.
#[derive(Debug, Subcommand)]
pub(crate) enum TeamCommand {
    /// Make a team (its name: lowercase letters, digits, `-`, `_`, `.`; not `all` or
    /// `built-in`).
    Create {
        /// The team's name, which is also the tag that curates tools for it.
        name: String,
        /// Make it even though tools carry its name as a tag already (put on before the team
        /// existed): its members will see them. Without it, that is refused.
        #[arg(long)]
        adopt_tagged: bool,
        #[command(flatten)]
        library: LibraryArgs,
    },
    /// List the teams, with their members and tools.
    List(ListArgs),
    /// Rename a team: its members and its tag on every tool follow.
    Rename {
        /// The team's name now.
        from: String,
        /// Its new name.
        to: String,
        #[command(flatten)]
        library: LibraryArgs,
    },
    /// Remove a team; its tools keep the tag (seen by owners and admins only).
    Remove {
        /// The team's name.
        name: String,
        #[command(flatten)]
        library: LibraryArgs,
    },
}
