//! `llmtool member` and `llmtool team`: the library's people, managed on its database as
//! `llmtool token` manages tokens.

mod args;

pub(crate) use args::{MemberCommand, TeamCommand};

use llmtool_registry::people_csv::{RowProblem, check_import};
use llmtool_registry::{MemberEdit, NewMember};
use llmtool_server::{Mailer, make_invite, send_invite};

use crate::cli::ReportFormat;
use crate::commands::serve::{ListArgs, open_by_user, role_of, table};
use crate::io;
use crate::outcome::Outcome;
use crate::settings;

pub(crate) fn member(command: &MemberCommand) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        match command {
            MemberCommand::Add { email, name, role, teams, library } => {
                let store = open_by_user(library).await?;
                let name = name
                    .clone()
                    .unwrap_or_else(|| email.split('@').next().unwrap_or(email).trim().to_owned());
                let member = NewMember {
                    email: email.clone(),
                    name,
                    role: role_of(*role),
                    teams: teams.clone(),
                };
                store.add_members(&[member]).await?;
                let added = store.member(email).await?;
                eprintln!("added `{}` ({})", added.email, added.role.as_str());
            }
            MemberCommand::List(ListArgs { library, format }) => {
                let store = open_by_user(library).await?;
                let members = store.members().await?;
                let text = match format {
                    ReportFormat::Json => serde_json::to_string_pretty(&members)? + "\n",
                    ReportFormat::Text => {
                        let mut table = table(["email", "name", "role", "teams", "since"]);
                        for member in &members {
                            table.add_row([
                                member.email.as_str(),
                                &member.name,
                                member.role.as_str(),
                                &member.teams.join(" "),
                                &member.created_at,
                            ]);
                        }
                        table.to_string() + "\n"
                    }
                };
                io::write_stdout(text.as_bytes())?;
            }
            MemberCommand::Edit { email, name, role, teams, no_teams, library } => {
                let store = open_by_user(library).await?;
                // No `--team` leaves their teams as they are; `--no-teams` empties them.
                let teams = (*no_teams || !teams.is_empty()).then(|| teams.clone());
                let edit = MemberEdit { name: name.clone(), role: role.map(role_of), teams };
                let member = store.edit_member(email, &edit).await?;
                eprintln!(
                    "`{}`: {}, {}, teams: {}",
                    member.email,
                    member.name,
                    member.role.as_str(),
                    if member.teams.is_empty() { "none".into() } else { member.teams.join(" ") }
                );
            }
            MemberCommand::Remove { email, library } => {
                let store = open_by_user(library).await?;
                store.remove_member(email).await?;
                eprintln!("removed `{email}`: their tokens are revoked and their sessions ended");
            }
            MemberCommand::Invite { email, config, public_url, print_link, library } => {
                let server = settings::load_config(config.as_deref())?.server;
                let Some(public_url) = public_url.clone().or(server.public_url) else {
                    anyhow::bail!(
                        "the link needs the studio's address: `--public-url URL`, or `public_url` in the config's `[server]` table"
                    );
                };
                let store = open_by_user(library).await?;
                if *print_link {
                    let (invite, _) = make_invite(store.as_ref(), &public_url, email).await?;
                    eprintln!(
                        "the sign-in link of `{}` (it works once, until {}):",
                        invite.email, invite.expires_at
                    );
                    io::write_stdout(format!("{}\n", invite.link).as_bytes())?;
                } else {
                    let Some(smtp) = &server.smtp else {
                        anyhow::bail!(
                            "no SMTP server to send the invite through: add `[server.smtp]` to the config (docs/teams.md), or hand the link over yourself with `--print-link`"
                        );
                    };
                    let mailer = Mailer::new(smtp)?;
                    let invite = send_invite(store.as_ref(), &mailer, &public_url, email).await?;
                    eprintln!(
                        "sent `{}` a sign-in link (it works once, until {})",
                        invite.email, invite.expires_at
                    );
                }
            }
            MemberCommand::Import { file, dry_run, library } => {
                let name = io::display_name(file);
                let bytes = io::read_input(file)?;
                let Ok(text) = String::from_utf8(bytes) else {
                    eprintln!("{name}: not UTF-8 text");
                    return Ok(Outcome::Problems);
                };
                // Every row is checked, against the file and the library, before any is added.
                let store = open_by_user(library).await?;
                let members = match check_import(store.as_ref(), &text).await? {
                    Ok(members) => members,
                    Err(problems) => return Ok(refused(&name, &problems)),
                };
                if *dry_run {
                    eprintln!(
                        "{name}: {} members would be added (dry run: none is)",
                        members.len()
                    );
                } else {
                    store.add_members(&members).await?;
                    eprintln!("{name}: {} members added", members.len());
                }
            }
        }
        Ok(Outcome::Ok)
    })
}

pub(crate) fn team(command: &TeamCommand) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        match command {
            TeamCommand::Create { name, adopt_tagged, library } => {
                let store = open_by_user(library).await?;
                store.create_team(name, *adopt_tagged).await?;
                eprintln!("made the team `{name}`: tag tools `{name}` for its members to see them");
            }
            TeamCommand::List(ListArgs { library, format }) => {
                let store = open_by_user(library).await?;
                let teams = store.teams().await?;
                let text = match format {
                    ReportFormat::Json => serde_json::to_string_pretty(&teams)? + "\n",
                    ReportFormat::Text => {
                        let mut table = table(["team", "members", "tools", "since"]);
                        for team in &teams {
                            table.add_row([
                                team.name.clone(),
                                team.members.to_string(),
                                team.tools.to_string(),
                                team.created_at.clone(),
                            ]);
                        }
                        table.to_string() + "\n"
                    }
                };
                io::write_stdout(text.as_bytes())?;
            }
            TeamCommand::Rename { from, to, library } => {
                let store = open_by_user(library).await?;
                store.rename_team(from, to).await?;
                eprintln!("renamed the team `{from}` to `{to}`, with its tag on every tool");
            }
            TeamCommand::Remove { name, library } => {
                let store = open_by_user(library).await?;
                store.remove_team(name).await?;
                eprintln!("removed the team `{name}`; tools tagged `{name}` keep the tag");
            }
        }
        Ok(Outcome::Ok)
    })
}

/// A CSV file refused: each problem with its line, and nothing imported.
fn refused(name: &str, problems: &[RowProblem]) -> Outcome {
    for problem in problems {
        eprintln!("{name}:{}: {}", problem.line, problem.message);
    }
    let count = match problems.len() {
        1 => "1 problem".to_owned(),
        n => format!("{n} problems"),
    };
    eprintln!("{name}: nothing imported ({count})");
    Outcome::Problems
}
