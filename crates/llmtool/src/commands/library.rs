//! `llmtool publish`, `llmtool search` and `llmtool pull`: the CLI side of the tool library.

mod args;
mod from_langfuse;

use args::HistoryFormat;
pub(crate) use args::{PublishArgs, PullArgs, RegistryArgs, SearchArgs, TagCommand};
use llmtool_convert::langfuse;

use comfy_table::{ContentArrangement, Table, presets};

use crate::cli::ReportFormat;
use crate::io;
use crate::outcome::Outcome;
use llmtool_registry::client::{ClientError, LibraryClient};
use llmtool_registry::{Publication, Reference, Selector, content_hash};

use crate::registry::{self, client};

pub(crate) fn publish(args: &PublishArgs) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        args.slug.is_none() || args.files.len() == 1,
        "--slug names the slug of one file"
    );
    let client = client(args.registry.registry.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let explained = |error| registry::explained(error, &client, "editor");
    let mut outcome = Outcome::Ok;
    for file in &args.files {
        let name = io::display_name(file);
        let text = String::from_utf8(io::read_input(file)?)
            .map_err(|_| anyhow::anyhow!("{name} is not UTF-8 text"))?;
        if args.from.is_some() {
            let published = runtime.block_on(from_langfuse::publish(&client, &name, &text, args));
            if !published.map_err(explained)? {
                outcome = Outcome::Problems;
            }
            continue;
        }
        if args.dry_run {
            if !runtime.block_on(would_publish(&client, &name, &text, args))? {
                outcome = Outcome::Problems;
            }
            continue;
        }
        let published = runtime.block_on(client.publish(
            &text,
            args.slug.as_deref(),
            args.note.as_deref(),
            &args.tags,
        ));
        let published = match published {
            Ok(published) => published,
            Err(ClientError::Refused { diagnostics, .. }) if !diagnostics.is_empty() => {
                say_refused(&name, &diagnostics);
                outcome = Outcome::Problems;
                continue;
            }
            Err(error) => return Err(explained(error)),
        };
        runtime
            .block_on(async {
                for tag in &args.tags {
                    client.tag(&published.slug, tag).await?;
                }
                if let Some(label) = &args.label {
                    client.label(&published.slug, label, published.version).await?;
                }
                Ok::<_, ClientError>(())
            })
            .map_err(explained)?;
        let what = if published.created { "a new version" } else { "unchanged" };
        let mut tags = published.tags.clone();
        tags.extend(args.tags.iter().cloned());
        println!("{name}: {}@{} ({what}), {}", published.slug, published.version, seen_by(tags));
    }
    Ok(outcome)
}

/// Who sees a tool with `tags`, in words: every member (`all`), else the teams its tags name.
fn seen_by(mut tags: Vec<String>) -> String {
    tags.sort();
    tags.dedup();
    if tags.iter().any(|tag| tag == llmtool_registry::ALL) {
        "seen by every member (tagged all)".to_owned()
    } else if tags.is_empty() {
        "seen by owners and admins only (no tag)".to_owned()
    } else {
        format!("seen by owners, admins and the teams tagged {}", tags.join(", "))
    }
}

/// `publish --dry-run` of one file: the library's own check, run here, and what publishing
/// would make of it next to the library's latest version (read, never written). Whether the
/// file may be published.
async fn would_publish(
    client: &LibraryClient,
    name: &str,
    text: &str,
    args: &PublishArgs,
) -> anyhow::Result<bool> {
    let publication = match Publication::from_text(text, name) {
        Ok(publication) => publication,
        Err(rejection) => {
            say_refused(name, &rejection.diagnostics);
            return Ok(false);
        }
    };
    let slug = args.slug.clone().unwrap_or_else(|| publication.default_slug());
    let latest = client.pull(&Reference { slug: slug.clone(), selector: Selector::Latest }).await;
    let what = match &latest {
        Ok(pulled) if content_hash(&pulled.text) == publication.content_hash => {
            format!("unchanged: {slug}@{} has this content", pulled.version)
        }
        Ok(pulled) => format!("{slug}@{} (a new version)", pulled.version + 1),
        Err(ClientError::Refused { status: 404, .. }) => format!("{slug}@1 (a new tool)"),
        Err(error) => format!("{slug} (what the library has is not known: {error})"),
    };
    let cached = match &latest {
        Ok(pulled) if pulled.from_cache => {
            " (compared with the cached copy: the library cannot be reached)"
        }
        _ => "",
    };
    let mut also = Vec::new();
    if !args.tags.is_empty() {
        also.push(format!("tagged {}", args.tags.join(", ")));
    }
    if let Some(label) = &args.label {
        also.push(format!("labelled {label}"));
    }
    let also = if also.is_empty() { String::new() } else { format!(", {}", also.join(", ")) };
    println!("{name}: would publish {what}{also}{cached}; nothing is sent (--dry-run)");
    Ok(true)
}

/// Says why a file is not published: its diagnostics, one a line.
fn say_refused(name: &str, diagnostics: &[serde_json::Value]) {
    for diagnostic in diagnostics {
        eprintln!("{}", shown(name, diagnostic));
    }
    eprintln!("{name}: not published: it has errors (`llmtool check {name}` shows them in full)");
}

/// A diagnostic of a refused file, as one line: `FILE:LINE:COL: severity[CODE]: message`.
fn shown(name: &str, diagnostic: &serde_json::Value) -> String {
    let at = &diagnostic["location"];
    let place = match (at["line"].as_u64(), at["column"].as_u64()) {
        (Some(line), Some(column)) => format!("{name}:{line}:{column}"),
        _ => name.to_owned(),
    };
    format!(
        "{place}: {}[{}]: {}",
        diagnostic["severity"].as_str().unwrap_or("error"),
        diagnostic["code"].as_str().unwrap_or("?"),
        diagnostic["message"].as_str().unwrap_or("")
    )
}

pub(crate) fn search(args: &SearchArgs) -> anyhow::Result<Outcome> {
    let client = client(args.registry.registry.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let page = runtime
        .block_on(client.search(args.query.as_deref(), args.tag.as_deref(), args.limit))
        .map_err(|error| registry::explained(error, &client, "viewer"))?;
    let text = match args.format {
        ReportFormat::Json => serde_json::to_string_pretty(&page)? + "\n",
        ReportFormat::Text if page.tools.is_empty() => "no tools found\n".to_owned(),
        ReportFormat::Text => {
            let mut table = Table::new();
            table
                .load_style(presets::ASCII_BORDERS_ONLY_CONDENSED)
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_header(["tool", "version", "name", "tags", "description"]);
            for tool in &page.tools {
                table.add_row([
                    tool.slug.clone(),
                    tool.version.to_string(),
                    tool.name.clone().unwrap_or_default(),
                    tool.tags.join(", "),
                    tool.description.clone().unwrap_or_default(),
                ]);
            }
            table.to_string() + "\n"
        }
    };
    io::write_stdout(text.as_bytes())?;
    Ok(Outcome::Ok)
}

pub(crate) fn pull(args: &PullArgs) -> anyhow::Result<Outcome> {
    if let Some(HistoryFormat::Langfuse) = args.to {
        return pull_history(args);
    }
    let [reference] = args.references.as_slice() else {
        anyhow::bail!("one tool is pulled at a time; several only with `--to langfuse`");
    };
    let reference = Reference::parse(reference)
        .ok_or_else(|| anyhow::anyhow!("`{reference}` is not SLUG, SLUG@VERSION or SLUG:LABEL"))?;
    let client = client(args.registry.registry.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let pulled = runtime
        .block_on(client.pull(&reference))
        .map_err(|error| registry::explained(error, &client, "viewer"))?;
    if pulled.from_cache {
        eprintln!(
            "warning: the tool library cannot be reached; this is the cached {}@{}",
            pulled.slug, pulled.version
        );
    }
    let written = format!("{}@{}", pulled.slug, pulled.version);
    write_pulled(args, &pulled.text, &written)?;
    Ok(Outcome::Ok)
}

/// `pull --to langfuse`: every version of each tool named, as Langfuse's export.
fn pull_history(args: &PullArgs) -> anyhow::Result<Outcome> {
    let client = client(args.registry.registry.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let mut histories = Vec::new();
    for reference in &args.references {
        let Some(Reference { slug, selector: Selector::Latest }) = Reference::parse(reference)
        else {
            anyhow::bail!(
                "`{reference}` is not a SLUG: `--to langfuse` takes every version of a tool"
            );
        };
        let versions = runtime
            .block_on(client.versions(&slug))
            .map_err(|error| registry::explained(error, &client, "viewer"))?;
        let mut history = Vec::new();
        for version in versions {
            let text = version
                .checked_text()
                .map_err(|error| registry::explained(error, &client, "viewer"))?;
            history.push((version, text));
        }
        histories.push((slug, history));
    }
    let versions: Vec<langfuse::LibraryVersion<'_>> = histories
        .iter()
        .flat_map(|(slug, history)| {
            history.iter().map(move |(version, text)| langfuse::LibraryVersion {
                name: slug,
                version: version.version,
                tool: text,
                labels: &version.labels,
                tags: &version.tags,
                note: version.note.as_deref(),
            })
        })
        .collect();
    let written = langfuse::export(&versions);
    crate::commands::render::print_problems("langfuse export", "", &written.diagnostics);
    let count = versions.len();
    write_pulled(args, &written.value, &format!("{count} versions of {} tools", histories.len()))?;
    Ok(Outcome::Ok)
}

/// Writes what `pull` fetched to `--output` (privately: it holds prompts), or to standard
/// output; `what` names it in the note that says where it went.
fn write_pulled(args: &PullArgs, text: &str, what: &str) -> anyhow::Result<()> {
    match &args.output {
        Some(path) => {
            io::write_privately(path, text.as_bytes())?;
            eprintln!("{what} written to {}", path.display());
        }
        None => io::write_stdout(text.as_bytes())?,
    }
    Ok(())
}

/// `llmtool tag add|remove SLUG TAG`.
pub(crate) fn tag(command: &TagCommand) -> anyhow::Result<Outcome> {
    let (args, adding) = match command {
        TagCommand::Add(args) => (args, true),
        TagCommand::Remove(args) => (args, false),
    };
    let client = client(args.registry.registry.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let done = if adding {
        runtime.block_on(client.tag(&args.slug, &args.tag))
    } else {
        runtime.block_on(client.untag(&args.slug, &args.tag))
    };
    done.map_err(|error| registry::explained(error, &client, "editor"))?;
    let how = if adding { "tagged" } else { "no longer tagged" };
    eprintln!("{} is {how} `{}`", args.slug, args.tag);
    Ok(Outcome::Ok)
}
