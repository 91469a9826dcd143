//! `llmtool publish --from langfuse FILE`: a Langfuse project's prompts (its export, every
//! version) brought into the library with their history. Each version of each prompt is
//! published in order, oldest first, with its commit message as the version's note; then each
//! Langfuse label points at the version it is on (`latest` aside: the library always knows
//! its latest), and each prompt gets the tags of its newest version. Importing the same export
//! again publishes nothing twice: a version whose text the library already holds, in the same
//! order, is that version.

use llmtool_convert::langfuse::{self, LangfuseVersion};
use llmtool_registry::Publication;
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
    // Where each version goes in the library: its slug and content hash.
    let planned: Vec<Option<(String, String)>> = versions
        .iter()
        .map(|version| {
            let tool = version.tool.as_ref().ok()?;
            let publication = Publication::from_text(&tool.value, name).ok()?;
            Some((publication.default_slug(), publication.content_hash))
        })
        .collect();
    // Two prompts whose names make one slug would share a history: refused before anything
    // is published.
    let mut slugs: Vec<(&str, &str)> = Vec::new();
    for (version, plan) in versions.iter().zip(&planned) {
        let Some((slug, _)) = plan else { continue };
        match slugs.iter().find(|(seen, _)| seen == slug) {
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
    // What the library has already (an earlier import of the same export): each slug's
    // versions, and the last one this import has reached.
    let mut library: Vec<History> = Vec::new();
    for (slug, _) in &slugs {
        let versions = match client.versions(slug).await {
            Ok(versions) => versions,
            Err(ClientError::Refused { status: 404, .. }) => Vec::new(),
            Err(other) => return Err(other),
        };
        let versions = versions.into_iter().map(|v| (v.version, v.content_hash)).collect();
        library.push(History { slug: (*slug).to_owned(), versions, reached: 0 });
    }
    let mut all_published = true;
    // What each version became in the library: its slug and number.
    let mut made: Vec<(&LangfuseVersion, String, u32)> = Vec::new();
    for (version, plan) in versions.iter().zip(&planned) {
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
        let mut history = plan.as_ref().and_then(|(slug, hash)| {
            Some((library.iter_mut().find(|history| history.slug == *slug)?, hash.as_str()))
        });
        if let Some((history, hash)) = &mut history
            && let Some(number) = history.reach(hash)
        {
            println!("{name}: {shown}: {}@{number} (already in the library)", history.slug);
            made.push((version, history.slug.clone(), number));
            continue;
        }
        let note = version.commit_message.as_deref().or(args.note.as_deref());
        match client.publish(tool, None, note, &args.tags).await {
            Ok(published) => {
                let what = if published.created { "a new version" } else { "unchanged" };
                println!("{name}: {shown}: {}@{} ({what})", published.slug, published.version);
                if let Some((history, _)) = history {
                    history.reached = published.version;
                }
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

/// A slug's versions in the library, as an import walks through them.
struct History {
    slug: String,
    /// Each version's number and content hash, oldest first.
    versions: Vec<(u32, String)>,
    /// The version the import's last prompt version is, or 0.
    reached: u32,
}

impl History {
    /// The first version after the one reached that holds the content `hash` (one an earlier
    /// import of the same history published), now reached. In order, so that a prompt that
    /// went back to an earlier text keeps its later version.
    fn reach(&mut self, hash: &str) -> Option<u32> {
        let mut later = self.versions.iter().filter(|(number, _)| *number > self.reached);
        let number = later.find(|(_, held)| held == hash).map(|(number, _)| *number)?;
        self.reached = number;
        Some(number)
    }
}
