//! `llmtool publish --from langfuse FILE`: a Langfuse project's prompts (its export, every
//! version) brought into the library with their history. Each version of each prompt is
//! published in order, oldest first, with its commit message as the version's note; then each
//! Langfuse label points at the version it is on (`latest` aside: the library always knows
//! its latest), and each prompt gets the tags of its newest version.

use llmtool_core::convert::langfuse::{self, LangfuseVersion};
use llmtool_registry::client::{ClientError, LibraryClient};

use super::PublishArgs;

/// Langfuse's own label for the newest version, which a library needs no label for.
const LATEST: &str = "latest";

/// Publishes the prompts of `text` (the file `name`); whether every version was published.
pub(super) async fn publish(
    client: &LibraryClient,
    name: &str,
    text: &str,
    args: &PublishArgs,
) -> Result<bool, ClientError> {
    let versions = match langfuse::versions(text) {
        Ok(versions) => versions,
        Err(problem) => {
            crate::commands::render::print_problems(name, text, &[*problem]);
            return Ok(false);
        }
    };
    // Two prompts whose names make one slug would share a history: refused before anything
    // is published.
    let mut slugs: Vec<(String, &str)> = Vec::new();
    for version in &versions {
        let Ok(tool) = &version.tool else { continue };
        let Ok(publication) = llmtool_registry::Publication::from_text(&tool.value, name) else {
            continue;
        };
        let slug = publication.default_slug();
        match slugs.iter().find(|(seen, _)| *seen == slug) {
            Some((_, other)) if *other != version.name => {
                eprintln!(
                    "{name}: the prompts `{other}` and `{}` would both be `{slug}` in the library; rename one in the file (nothing is published)",
                    version.name
                );
                return Ok(false);
            }
            Some(_) => {}
            None => slugs.push((slug, &version.name)),
        }
    }
    let mut all_published = true;
    // What each version became in the library: its slug and number.
    let mut made: Vec<(&LangfuseVersion, String, u32)> = Vec::new();
    for version in &versions {
        let shown = match version.version {
            Some(number) => format!("{} v{number}", version.name),
            None => version.name.clone(),
        };
        let tool = match &version.tool {
            Ok(tool) => {
                crate::commands::render::print_problems(name, text, &tool.diagnostics);
                &tool.value
            }
            Err(problem) => {
                crate::commands::render::print_problems(name, text, &[(**problem).clone()]);
                eprintln!("{name}: {shown} is not published");
                all_published = false;
                continue;
            }
        };
        let note = version.commit_message.as_deref().or(args.note.as_deref());
        match client.publish(tool, None, note).await {
            Ok(published) => {
                let what = if published.created { "a new version" } else { "unchanged" };
                println!("{name}: {shown}: {}@{} ({what})", published.slug, published.version);
                made.push((version, published.slug, published.version));
            }
            Err(ClientError::Refused { diagnostics, .. }) if !diagnostics.is_empty() => {
                super::say_refused(&format!("{name} ({shown})"), &diagnostics);
                all_published = false;
            }
            Err(error) => return Err(error),
        }
    }
    // Oldest first: a label on several versions ends on the newest, as Langfuse moves it.
    for (version, slug, number) in &made {
        for label in version.labels.iter().filter(|label| *label != LATEST) {
            client.label(slug, label, *number).await?;
        }
    }
    // A prompt's tags are its newest version's (Langfuse sets them on all its versions), and
    // `--label` points at its newest version.
    let mut newest: Vec<&str> = Vec::new();
    for (version, slug, number) in made.iter().rev() {
        if newest.contains(&slug.as_str()) {
            continue;
        }
        newest.push(slug);
        for tag in version.tags.iter().chain(&args.tags) {
            client.tag(slug, tag).await?;
        }
        if let Some(label) = &args.label {
            client.label(slug, label, *number).await?;
        }
    }
    Ok(all_published)
}
