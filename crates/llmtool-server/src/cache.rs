//! The read routes' answers, kept ready to send: a version's JSON body is made once and
//! served from memory until the library changes.
//!
//! Every write (here, or on another server of the same PostgreSQL database, heard through
//! [`llmtool_registry::Store::changes`]) starts a new generation, and an answer is only ever
//! found under the generation it was read in. So a body read before a change and stored after
//! it is never served: it sits under an old generation until it is evicted.

use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Bytes;
use llmtool_registry::Selector;

/// The most bytes of answers kept (the least used go first).
const CAPACITY_BYTES: u64 = 64 << 20;

/// About how many answers fit, for the cache's first sizing.
const ESTIMATED_ITEMS: usize = 16_384;

/// A cached answer's key: the generation, the slug and the version asked for.
type Key = (u64, String, Selector);

/// Weighs an answer by its length.
#[derive(Debug, Clone, Copy)]
struct ByLength;

impl quick_cache::Weighter<Key, Bytes> for ByLength {
    fn weight(&self, key: &Key, body: &Bytes) -> u64 {
        (key.1.len() + body.len()) as u64
    }
}

/// The cached version bodies.
pub(crate) struct ReadCache {
    generation: AtomicU64,
    bodies: quick_cache::sync::Cache<Key, Bytes, ByLength>,
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
        }
    }

    /// The generation to read in: take it before reading the database.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The answer for `slug` and `selector` in the current generation.
    pub(crate) fn get(&self, slug: &str, selector: &Selector) -> Option<Bytes> {
        self.bodies.get(&(self.generation(), slug.to_owned(), selector.clone()))
    }

    /// Keeps `body`, read in `generation`.
    pub(crate) fn put(&self, generation: u64, slug: String, selector: Selector, body: Bytes) {
        self.bodies.insert((generation, slug, selector), body);
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
        let before = cache.generation();
        cache.put(before, "echo".into(), Selector::Latest, Bytes::from_static(b"v1"));
        assert_eq!(cache.get("echo", &Selector::Latest).as_deref(), Some(&b"v1"[..]));
        // A reader took the generation, then a publish happened, then it stored what it read.
        let reader = cache.generation();
        cache.invalidate();
        cache.put(reader, "echo".into(), Selector::Latest, Bytes::from_static(b"v1 again"));
        assert_eq!(cache.get("echo", &Selector::Latest), None);
        cache.put(cache.generation(), "echo".into(), Selector::Latest, Bytes::from_static(b"v2"));
        assert_eq!(cache.get("echo", &Selector::Latest).as_deref(), Some(&b"v2"[..]));
        assert_eq!(cache.get("echo", &Selector::Version(2)), None, "each version its own");
    }
}
