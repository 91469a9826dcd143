//! The word search kept in step with the library: the index of [`crate::search_index`] is
//! built from the store on the first search (or [`Store::warm_search`]), and before each
//! search it takes in the tools announced as changed since (by this process's writes at once,
//! by other servers' through PostgreSQL's `NOTIFY`), reading each again from the database. A
//! search therefore always sees this server's own writes.
//!
//! [`Store::warm_search`]: crate::Store::warm_search

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use crate::changes::{Change, Changes};
use crate::db::{Db, statement};
use crate::model::{Page, Query};
use crate::rows;
use crate::search_index::{After, Entry, Filter, SearchIndex};
use crate::sql_store::SqlStore;
use crate::store::{Store, StoreError};

/// A tool's row for the index: id, slug, latest version, name, description, usage notes,
/// prompt, variable types (space-separated), output type, models (JSON), creator, whether it
/// has a picture, whether it is smart, tags (space-separated).
type EntryRow = (
    i64,
    String,
    i64,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
    String,
    Option<String>,
    String,
    Option<String>,
    bool,
    bool,
    Option<String>,
);

const SQLITE_ENTRIES: &str = "SELECT t.id, t.slug, t.latest, v.name, v.description,
        v.usage_notes, v.prompt, v.variable_types, v.output_type, v.models, v.creator,
        v.has_avatar, v.smart,
        (SELECT group_concat(tag, ' ') FROM (SELECT tag FROM tags WHERE tool_id = t.id ORDER BY tag))
     FROM tools t JOIN versions v ON v.tool_id = t.id AND v.number = t.latest
     WHERE t.deleted_at IS NULL";

const POSTGRES_ENTRIES: &str = "SELECT t.id, t.slug, t.latest, v.name, v.description,
        v.usage_notes, v.prompt, array_to_string(v.variable_types, ' '), v.output_type,
        array_to_json(v.models)::text, v.creator, v.has_avatar, v.smart,
        (SELECT string_agg(tag, ' ' ORDER BY tag) FROM tags WHERE tool_id = t.id)
     FROM tools t JOIN versions v ON v.tool_id = t.id AND v.number = t.latest
     WHERE t.deleted_at IS NULL";

/// How often the index is built again on SQLite (see [`SqlStore::follow_in_background`]).
const REBUILD_EVERY: std::time::Duration = std::time::Duration::from_mins(10);

/// How many tools a build reads at a time.
const BUILD_BATCH: u16 = 500;

/// The index and how far it has followed the store's changes.
#[derive(Default)]
pub(crate) struct Searcher {
    index: RwLock<SearchIndex>,
    /// The changes heard since the index was built (`None` before).
    follow: tokio::sync::Mutex<Option<Following>>,
    /// How many of the store's announcements the index has taken in.
    applied: AtomicU64,
    /// Whether the index is built and nothing but new announcements waits to be taken in
    /// (false while changes are taken in, after one failed, or with a rebuild asked for).
    whole: AtomicBool,
    /// How many times the whole index was built.
    builds: AtomicU64,
}

struct Following {
    changes: Changes,
    /// Changes taken from the channel and not yet in the index: kept here until they are, so
    /// a search cancelled (or failing) on the way loses none of them.
    pending: BTreeSet<String>,
    /// Whether the whole index must be built again (a listener fell behind, or the periodic
    /// rebuild that catches writes by another process on a SQLite file).
    rebuild: bool,
}

impl Searcher {
    /// How many tools the index holds.
    pub(crate) fn tools(&self) -> usize {
        self.index.read().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl std::fmt::Debug for Searcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Searcher").field("tools", &self.tools()).finish_non_exhaustive()
    }
}

impl SqlStore {
    /// [`Store::search`] with words: ranked by the index, a page at a time.
    pub(crate) async fn word_search(
        &self,
        text: &str,
        query: &Query,
        limit: usize,
    ) -> Result<Page, StoreError> {
        let after = match &query.cursor {
            Some(cursor) => Some(After::parse(cursor).ok_or(StoreError::BadCursor)?),
            None => None,
        };
        self.catch_up().await?;
        let filter = Filter {
            tag: query.tag.as_deref(),
            variable_type: query.variable_type.as_deref(),
            output_type: query.output_type.as_deref(),
            model: query.model.as_deref(),
            visible: &query.visible,
        };
        let index = self.searcher.index.read().unwrap_or_else(PoisonError::into_inner);
        let mut found = index.search(text, &filter, after.as_ref(), limit + 1);
        let next = if found.len() > limit {
            found.truncate(limit);
            found.last().map(|(score, summary)| After { score: *score, slug: summary.slug.clone() })
        } else {
            None
        };
        let tools = found.into_iter().map(|(_, summary)| summary.clone()).collect();
        Ok(Page { tools, next: next.as_ref().map(After::cursor) })
    }

    /// Brings the index up to date with every change announced so far.
    pub(crate) async fn catch_up(&self) -> Result<(), StoreError> {
        let searcher = &self.searcher;
        if searcher.whole.load(Ordering::Acquire)
            && searcher.applied.load(Ordering::Acquire) == self.announcer.made()
        {
            return Ok(());
        }
        let mut follow = searcher.follow.lock().await;
        let Some(following) = follow.as_mut() else {
            // Subscribed first: whatever changes while the tools are read is heard after.
            let changes = self.changes().await?;
            let made = self.announcer.made();
            self.rebuild().await?;
            *follow = Some(Following { changes, pending: BTreeSet::new(), rebuild: false });
            searcher.applied.store(made, Ordering::Release);
            searcher.whole.store(true, Ordering::Release);
            return Ok(());
        };
        let mut applied = searcher.applied.load(Ordering::Acquire);
        let before_rebuild = self.announcer.made();
        while let Some((number, change)) = following.changes.try_next() {
            applied = applied.max(number);
            match change {
                Change::Tool(slug) => drop(following.pending.insert(slug)),
                Change::Unknown => following.rebuild = true,
                // The settings are applied at each search, from its reader's session.
                Change::Settings => {}
            }
        }
        searcher.whole.store(false, Ordering::Release);
        if following.rebuild {
            self.rebuild().await?;
            // Everything made before the build began is in it.
            applied = applied.max(before_rebuild);
        } else {
            self.refresh(&following.pending).await?;
        }
        following.pending.clear();
        following.rebuild = false;
        searcher.applied.store(applied, Ordering::Release);
        searcher.whole.store(true, Ordering::Release);
        Ok(())
    }

    /// Makes the next search build the index again from the store.
    async fn rebuild_soon(&self) {
        if let Some(following) = self.searcher.follow.lock().await.as_mut() {
            following.rebuild = true;
            self.searcher.whole.store(false, Ordering::Release);
        }
    }

    /// Takes in each change as it is announced, in a task of its own, so that a search after
    /// a burst of writes (an import of thousands of tools) finds the index nearly current
    /// rather than waiting for all of it. A search still takes in what is left first.
    ///
    /// On SQLite it also builds the index again every [`REBUILD_EVERY`]: another process may
    /// write to the same file (`llmtool team rename` while the server runs), and nothing
    /// announces that here. PostgreSQL's `NOTIFY` tells every server.
    ///
    /// The task ends when the last handle on the store is dropped: it holds a handle of its
    /// own, which the others' going does not keep alive.
    pub(crate) async fn follow_in_background(&self) -> Result<(), StoreError> {
        let mut changes = self.changes().await?;
        let (handles_held, mut handles_gone) = tokio::sync::oneshot::channel();
        if self.handles.set(handles_held).is_err() {
            // Followed already, by a task that ends with the handles.
            return Ok(());
        }
        let store = SqlStore { handles: Arc::default(), ..self.clone() };
        let periodic = matches!(self.db, Db::Sqlite(_));
        tokio::spawn(async move {
            let mut every = tokio::time::interval(REBUILD_EVERY);
            every.tick().await;
            loop {
                tokio::select! {
                    _ = &mut handles_gone => break,
                    change = changes.next() => if change.is_none() { break },
                    _ = every.tick() => if periodic { store.rebuild_soon().await } else { continue },
                }
                if let Err(error) = store.catch_up().await {
                    tracing::warn!("the search index could not take a change in yet: {error}");
                }
            }
        });
        Ok(())
    }

    /// Builds the index again from every tool in the store, read [`BUILD_BATCH`] at a time
    /// (what is held at once is a batch's text, not the library's).
    async fn rebuild(&self) -> Result<(), StoreError> {
        let mut index = SearchIndex::default();
        let mut after = i64::MIN;
        loop {
            let read = statement(format!("{} AND t.id > $1 ORDER BY t.id LIMIT $2", self.every()));
            let rows: Vec<EntryRow> =
                self.db.all(read.bind(after).bind(i64::from(BUILD_BATCH))).await?;
            let Some(last) = rows.last() else { break };
            after = last.0;
            let full = rows.len() == usize::from(BUILD_BATCH);
            index = match tokio::task::spawn_blocking(move || {
                rows.into_iter().map(entry).for_each(|entry| index.put(entry));
                index
            })
            .await
            {
                Ok(index) => index,
                // Indexing never panics on any tool: if it does, that is a bug to see.
                Err(failed) => std::panic::resume_unwind(failed.into_panic()),
            };
            if !full {
                break;
            }
        }
        *self.searcher.index.write().unwrap_or_else(PoisonError::into_inner) = index;
        self.searcher.builds.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Reads the tools `slugs` again into the index (a deleted one is taken out).
    async fn refresh(&self, slugs: &BTreeSet<String>) -> Result<(), StoreError> {
        let mut read = Vec::with_capacity(slugs.len());
        for slug in slugs {
            // One tool is found through the slug's index.
            let one = statement(format!("{} AND t.slug = $1", self.every())).bind(slug);
            let row: Option<EntryRow> = self.db.optional(one).await?;
            read.push((slug, row.map(entry)));
        }
        let mut index = self.searcher.index.write().unwrap_or_else(PoisonError::into_inner);
        for (slug, entry) in read {
            match entry {
                Some(entry) => index.put(entry),
                None => index.remove_slug(slug),
            }
        }
        Ok(())
    }

    /// The query of the tools not deleted, as the index takes them, in this dialect.
    fn every(&self) -> &'static str {
        match self.db {
            Db::Sqlite(_) => SQLITE_ENTRIES,
            Db::Postgres(_) => POSTGRES_ENTRIES,
        }
    }
}

fn entry(row: EntryRow) -> Entry {
    let (id, slug, latest, name, description, usage_notes, prompt) =
        (row.0, row.1, row.2, row.3, row.4, row.5, row.6);
    let (types, output, models, creator, has_avatar, smart, tags) =
        (row.7, row.8, row.9, row.10, row.11, row.12, row.13);
    let fields = [
        name.clone().unwrap_or_default(),
        description.clone().unwrap_or_default(),
        usage_notes.unwrap_or_default(),
        prompt,
    ];
    let summary = rows::summary((
        slug,
        latest,
        name,
        description,
        output,
        tags,
        creator,
        has_avatar,
        models,
        smart,
    ));
    let variable_types = types.split_whitespace().map(str::to_owned).collect();
    Entry { tool_id: id, summary, variable_types, fields }
}

/// Whether `query` asks for words (and so for the index) rather than a list by slug.
pub(crate) fn has_words(query: &Query) -> Option<&str> {
    let text = query.text.as_deref()?;
    crate::search_index::words(text).next().is_some().then_some(text)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use crate::{
        People, Publication, Query, SqlStore, Store, Visibility, Workspace, WorkspaceChange,
    };

    #[tokio::test]
    async fn a_change_of_the_settings_is_seen_at_once_and_builds_nothing_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap();
        let text = serde_json::json!({
            "model_prompt": "A poem about {{topic}}.",
            "metadata": {
                "prompt_name": "Poem",
                "description": "Writes a poem.",
                "model_version": ["gpt-4o-mini"],
                "timestamp": "2026-11-23T10:00:00Z",
                "variables": [{"name": "topic", "type": "text", "description": "What about."}],
                "expected_output": {"type": "text"}
            }
        });
        let tool = Publication::from_text(&text.to_string(), "tool.json").unwrap();
        Store::publish(&store, "poem", &tool, None, None).await.unwrap();
        let query = Query {
            text: Some("poem".into()),
            limit: 10,
            visible: Visibility::Everything,
            ..Query::default()
        };
        assert_eq!(Store::search(&store, &query).await.unwrap().tools.len(), 1);
        let builds = || store.searcher.builds.load(Ordering::Relaxed);
        assert_eq!(builds(), 1);
        let off = WorkspaceChange { built_ins: Some(false), ..WorkspaceChange::default() };
        let changed = People::change_workspace(&store, &off).await.unwrap();
        assert_eq!(changed, Workspace { built_ins: false, ..Workspace::default() });
        // The settings are the reader's, applied at each search: the index stays as it was.
        assert_eq!(Store::search(&store, &query).await.unwrap().tools.len(), 1);
        assert_eq!(builds(), 1, "a change of the settings built the word index again");
        // A tool's change is still taken in, without a build either.
        Store::publish(&store, "poem-two", &tool, None, None).await.unwrap();
        assert_eq!(Store::search(&store, &query).await.unwrap().tools.len(), 2);
        assert_eq!(builds(), 1);
    }

    /// The task that keeps the word index current ends with the last handle on its store.
    #[tokio::test]
    async fn the_index_follower_ends_with_the_stores_last_handle() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap();
        let tasks = || tokio::runtime::Handle::current().metrics().num_alive_tasks();
        let before = tasks();
        Store::warm_search(&store).await.unwrap();
        Store::warm_search(&store).await.unwrap();
        assert_eq!(tasks(), before + 1, "one follower, however often the search is warmed");
        let other = store.clone();
        drop(store);
        tokio::task::yield_now().await;
        assert_eq!(tasks(), before + 1, "a handle is left");
        let searcher = std::sync::Arc::downgrade(&other.searcher);
        drop(other);
        // The database's own tasks may go with the last handle too.
        for _ in 0..100 {
            if tasks() <= before {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(tasks() <= before, "the follower is gone");
        assert!(searcher.upgrade().is_none(), "and the index with it");
    }
}
