//! The read routes' answers, kept ready to send: a version's JSON body and a search's page
//! are made once and served from memory until the library changes.
//!
//! Every write (here, or on another server of the same PostgreSQL database, heard through
//! [`llmtool_registry::Store::changes`]) starts a new generation, and an answer is only ever
//! found under the generation it was read in. So a body read before a change and stored after
//! it is never served: it sits under an old generation until it is evicted.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Bytes;
use llmtool_registry::{Query, Selector, Workspace};

/// The most bytes of answers kept (the least used go first).
const CAPACITY_BYTES: u64 = 64 << 20;

/// The most bytes of search pages kept.
const PAGES_CAPACITY_BYTES: u64 = 16 << 20;

/// About how many search pages fit, for the cache's first sizing.
const ESTIMATED_PAGES: usize = 4096;

/// About how many answers fit, for the cache's first sizing.
const ESTIMATED_ITEMS: usize = 16_384;

/// A cached answer's key: the generation, the slug and the version asked for.
type Key = (u64, String, Selector);

/// A version's JSON body, with the tool's tags, which say who may be sent it.
#[derive(Debug, Clone)]
pub(crate) struct Cached {
    pub(crate) tags: Arc<[String]>,
    pub(crate) body: Bytes,
}

/// Weighs an answer by its length.
#[derive(Debug, Clone, Copy)]
struct ByLength;

impl quick_cache::Weighter<Key, Cached> for ByLength {
    fn weight(&self, key: &Key, cached: &Cached) -> u64 {
        let tags: usize = cached.tags.iter().map(String::len).sum();
        (key.1.len() + tags + cached.body.len()) as u64
    }
}

/// A cached search page's key: the generation and the search, the caller's visibility in it.
type PageKey = (u64, Query);

/// Weighs a search page by its length and its query's.
#[derive(Debug, Clone, Copy)]
struct PageLength;

impl quick_cache::Weighter<PageKey, Bytes> for PageLength {
    fn weight(&self, (_, query): &PageKey, page: &Bytes) -> u64 {
        let words = [&query.text, &query.tag, &query.variable_type, &query.output_type];
        let words: usize = words
            .into_iter()
            .chain([&query.model, &query.cursor])
            .map(|word| word.as_ref().map_or(0, String::len))
            .sum();
        let visible = match &query.visible {
            llmtool_registry::Visibility::Everything => 0,
            llmtool_registry::Visibility::Tagged { seen, hidden } => {
                seen.iter().chain(hidden).map(String::len).sum()
            }
        };
        (words + visible + page.len()) as u64
    }
}

/// The cached version bodies and search pages.
pub(crate) struct ReadCache {
    generation: AtomicU64,
    bodies: quick_cache::sync::Cache<Key, Cached, ByLength>,
    pages: quick_cache::sync::Cache<PageKey, Bytes, PageLength>,
    /// The workspace's settings, with the generation they were read in: what a caller with
    /// no token sees depends on them, and every request of one would read them.
    workspace: std::sync::Mutex<Option<(u64, Workspace)>>,
}

impl std::fmt::Debug for ReadCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadCache").field("generation", &self.generation()).finish()
    }
}

impl ReadCache {
    pub(crate) fn new() -> ReadCache {
        ReadCache {
            generation: AtomicU64::new(0),
            bodies: quick_cache::sync::Cache::with_weighter(
                ESTIMATED_ITEMS,
                CAPACITY_BYTES,
                ByLength,
            ),
            pages: quick_cache::sync::Cache::with_weighter(
                ESTIMATED_PAGES,
                PAGES_CAPACITY_BYTES,
                PageLength,
            ),
            workspace: std::sync::Mutex::new(None),
        }
    }

    /// The workspace's settings, if read in the current generation.
    pub(crate) fn workspace(&self) -> Option<Workspace> {
        let kept = *self.workspace.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.filter(|(generation, _)| *generation == self.generation())
            .map(|(_, settings)| settings)
    }

    /// Keeps the workspace's settings, read in `generation`.
    pub(crate) fn keep_workspace(&self, generation: u64, settings: Workspace) {
        let mut kept = self.workspace.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *kept = Some((generation, settings));
    }

    /// The generation to read in: take it before reading the database.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The answer for `slug` and `selector` in the current generation.
    pub(crate) fn get(&self, slug: &str, selector: &Selector) -> Option<Cached> {
        self.bodies.get(&(self.generation(), slug.to_owned(), selector.clone()))
    }

    /// Keeps `cached`, read in `generation`.
    pub(crate) fn put(&self, generation: u64, slug: String, selector: Selector, cached: Cached) {
        self.bodies.insert((generation, slug, selector), cached);
    }

    /// The page (JSON) that `query` finds in the current generation: kept from before, or
    /// made by `read` and kept. Searches that miss at once wait for the first one's `read`
    /// rather than each asking the database; says whether the page was kept already.
    pub(crate) async fn page<E>(
        &self,
        query: Query,
        read: impl Future<Output = Result<Bytes, E>>,
    ) -> Result<(Bytes, bool), E> {
        let key = (self.generation(), query);
        match self.pages.get_value_or_guard_async(&key).await {
            Ok(page) => Ok((page, true)),
            Err(guard) => {
                let page = read.await?;
                let _ = guard.insert(page.clone());
                Ok((page, false))
            }
        }
    }

    /// Something changed: every answer kept so far is stale.
    pub(crate) fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_read_before_a_change_is_never_served_after_it() {
        let cache = ReadCache::new();
        let answer =
            |body: &'static [u8]| Cached { tags: Arc::from([]), body: Bytes::from_static(body) };
        let body = |found: Option<Cached>| found.map(|cached| cached.body);
        let before = cache.generation();
        cache.put(before, "echo".into(), Selector::Latest, answer(b"v1"));
        assert_eq!(body(cache.get("echo", &Selector::Latest)).as_deref(), Some(&b"v1"[..]));
        // A reader took the generation, then a publish happened, then it stored what it read.
        let reader = cache.generation();
        cache.invalidate();
        cache.put(reader, "echo".into(), Selector::Latest, answer(b"v1 again"));
        assert!(cache.get("echo", &Selector::Latest).is_none());
        cache.put(cache.generation(), "echo".into(), Selector::Latest, answer(b"v2"));
        assert_eq!(body(cache.get("echo", &Selector::Latest)).as_deref(), Some(&b"v2"[..]));
        assert!(cache.get("echo", &Selector::Version(2)).is_none(), "each version its own");
    }

    #[tokio::test]
    async fn search_pages_never_weigh_more_than_their_bound() {
        let cache = ReadCache::new();
        let megabyte = Bytes::from(vec![b' '; 1 << 20]);
        for page in 0..40 {
            let query = Query { text: Some(format!("word{page}")), limit: 20, ..Query::default() };
            let read = async { Ok::<_, ()>(megabyte.clone()) };
            cache.page(query, read).await.unwrap();
        }
        assert!(cache.pages.weight() <= PAGES_CAPACITY_BYTES, "{} bytes", cache.pages.weight());
        assert!(cache.pages.len() < 40, "the least used pages were dropped");
    }

    #[tokio::test]
    async fn a_search_page_is_kept_per_caller_and_never_served_after_a_change() {
        let cache = ReadCache::new();
        let everyone = Query { text: Some("poem".into()), limit: 20, ..Query::default() };
        let sales = Query {
            visible: llmtool_registry::Visibility::Tagged {
                seen: ["all".to_owned(), "sales".to_owned()].into(),
                hidden: std::collections::BTreeSet::new(),
            },
            ..everyone.clone()
        };
        let cache = &cache;
        let page = |query: &Query, body: &'static [u8]| {
            let query = query.clone();
            async move {
                let read = async { Ok::<_, ()>(Bytes::from_static(body)) };
                cache.page(query, read).await.unwrap()
            }
        };
        assert_eq!(
            page(&everyone, b"[every tool]").await,
            (Bytes::from_static(b"[every tool]"), false)
        );
        assert_eq!(page(&everyone, b"[again]").await, (Bytes::from_static(b"[every tool]"), true));
        assert!(!page(&sales, b"[theirs]").await.1, "another caller's page is not theirs");
        assert!(!page(&Query { limit: 21, ..everyone.clone() }, b"[21]").await.1);
        cache.invalidate();
        assert_eq!(page(&everyone, b"[after]").await, (Bytes::from_static(b"[after]"), false));
        // The library changes while a page is read: that page is not served afterwards.
        let racing = async {
            cache.invalidate();
            Ok::<_, ()>(Bytes::from_static(b"[stale]"))
        };
        cache.page(sales.clone(), racing).await.unwrap();
        assert_eq!(page(&sales, b"[fresh]").await, (Bytes::from_static(b"[fresh]"), false));
    }
}
