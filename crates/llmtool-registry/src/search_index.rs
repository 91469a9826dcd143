//! The library's word search: every tool's latest version held in memory as an inverted
//! index, ranked by BM25 over its fields (name, description, usage notes, prompt), each word
//! a prefix so that it answers as the user types.
//!
//! The databases' own full-text indexes answer "which tools have this word" but must score
//! every match to rank them, and in a library where most tools share a word that is every
//! tool, on every keystroke. Here a query adds up its terms' postings in one pass over flat
//! arrays and keeps the best page in a small heap (see docs/registry.md, "Search"). This
//! module is pure: [`crate::sql_search`] keeps it in step with the store.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use crate::Visibility;
use crate::model::Summary;

/// How much a word counts in each field, against once in the prompt: a tool is about what
/// its name says first.
const FIELD_WEIGHTS: [f32; 4] = [4.0, 2.0, 1.0, 1.0];
/// BM25's saturation and length normalisation, at their usual values.
const K1: f32 = 1.2;
const B: f32 = 0.75;
/// What a term found only as a longer word than the one typed counts, against the word itself
/// (`poem` ranks the tools saying "poem" above those saying only "poems").
const PREFIX_WEIGHT: f32 = 0.75;
/// The most words a query uses (the rest of a longer one is ignored) and the longest word
/// kept, in characters: what a query costs and what a tool adds to the index are bounded.
pub(crate) const MAX_QUERY_WORDS: usize = 8;
const MAX_WORD_CHARS: usize = 64;

/// A tool's latest version, as the index takes it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) tool_id: i64,
    /// What a result shows.
    pub(crate) summary: Summary,
    /// The types of its variables (for the `variable_type` filter).
    pub(crate) variable_types: Vec<String>,
    /// Name, description, usage notes and prompt, in [`FIELD_WEIGHTS`]' order.
    pub(crate) fields: [String; 4],
}

/// What a search keeps besides its words: the filters and who is asking.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Filter<'a> {
    pub(crate) tag: Option<&'a str>,
    pub(crate) variable_type: Option<&'a str>,
    pub(crate) output_type: Option<&'a str>,
    pub(crate) model: Option<&'a str>,
    pub(crate) visible: &'a Visibility,
}

/// Where a ranked page starts: after the result of this score and slug.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct After {
    pub(crate) score: f32,
    pub(crate) slug: String,
}

impl After {
    /// The cursor's text: the score's bits in hex, a dot, the slug (`3f800000.tide-poet`),
    /// which no slug can be.
    pub(crate) fn cursor(&self) -> String {
        format!("{:08x}.{}", self.score.to_bits(), self.slug)
    }

    /// The position a [`After::cursor`] names, if `text` is one.
    pub(crate) fn parse(text: &str) -> Option<After> {
        let (bits, slug) = text.split_once('.')?;
        let score = f32::from_bits(u32::from_str_radix(bits, 16).ok()?);
        let valid = bits.len() == 8 && score.is_finite() && crate::publication::is_slug(slug);
        valid.then(|| After { score, slug: slug.to_owned() })
    }
}

/// One tool in the index.
#[derive(Debug)]
struct Doc {
    tool_id: i64,
    summary: Summary,
    variable_types: Vec<String>,
    /// Its tags' set, by number (tools share a few sets: visibility is decided once a set).
    tag_set: u32,
    /// The terms it was indexed under (their numbers), to take it out again.
    terms: Vec<u32>,
}

/// A term's occurrence in a tool: the tool's slot and the term's weighted count there.
#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    count: f32,
}

/// The index.
#[derive(Debug, Default)]
pub(crate) struct SearchIndex {
    docs: Vec<Option<Doc>>,
    /// Each slot's weighted length (0 for a free slot), apart so a query reads it densely.
    lengths: Vec<f32>,
    free: Vec<u32>,
    by_tool: HashMap<i64, u32>,
    by_slug: HashMap<String, u32>,
    /// Each term's number, found by its text (to index a word) and in order (to find the
    /// terms a prefix starts); each number's text and postings.
    term_ids: HashMap<Box<str>, u32>,
    terms: BTreeMap<Box<str>, u32>,
    term_names: Vec<Box<str>>,
    postings: Vec<Vec<Posting>>,
    free_terms: Vec<u32>,
    /// Each distinct set of tags, with how many tools carry it: a set no tool carries any more
    /// is let go, and its number given to the next new set.
    tag_sets: Vec<(Vec<String>, u32)>,
    tag_set_ids: HashMap<Vec<String>, u32>,
    free_tag_sets: Vec<u32>,
    total_length: f64,
}

impl SearchIndex {
    /// An index of `entries`.
    #[cfg(test)]
    pub(crate) fn of(entries: impl IntoIterator<Item = Entry>) -> SearchIndex {
        let mut index = SearchIndex::default();
        for entry in entries {
            index.put(entry);
        }
        index
    }

    /// How many tools it holds.
    pub(crate) fn len(&self) -> usize {
        self.by_tool.len()
    }

    /// Puts `entry` in, in place of the tool's earlier version if it had one.
    pub(crate) fn put(&mut self, entry: Entry) {
        self.remove_tool(entry.tool_id);
        let mut counts: HashMap<u32, f32> = HashMap::new();
        let mut length = 0.0;
        let mut word = String::new();
        for (field, weight) in entry.fields.iter().zip(FIELD_WEIGHTS) {
            for piece in field.split(is_between_words) {
                fold_into(piece, &mut word);
                if !word.is_empty() {
                    *counts.entry(self.term_id(&word)).or_default() += weight;
                    length += weight;
                }
            }
        }
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.docs.push(None);
                self.lengths.push(0.0);
                u32::try_from(self.docs.len() - 1).unwrap_or(u32::MAX)
            }
        };
        let mut terms = Vec::with_capacity(counts.len());
        for (term, count) in counts {
            self.postings[term as usize].push(Posting { doc: slot, count });
            terms.push(term);
        }
        let tag_set = self.tag_set(&entry.summary.tags);
        self.lengths[slot as usize] = length;
        self.total_length += f64::from(length);
        self.by_tool.insert(entry.tool_id, slot);
        self.by_slug.insert(entry.summary.slug.clone(), slot);
        self.docs[slot as usize] = Some(Doc {
            tool_id: entry.tool_id,
            summary: entry.summary,
            variable_types: entry.variable_types,
            tag_set,
            terms,
        });
    }

    /// Takes the tool `slug` out, if it is in.
    pub(crate) fn remove_slug(&mut self, slug: &str) {
        if let Some(&slot) = self.by_slug.get(slug) {
            let tool_id = self.docs[slot as usize].as_ref().map(|doc| doc.tool_id);
            if let Some(tool_id) = tool_id {
                self.remove_tool(tool_id);
            }
        }
    }

    fn remove_tool(&mut self, tool_id: i64) {
        let Some(slot) = self.by_tool.remove(&tool_id) else { return };
        let Some(doc) = self.docs[slot as usize].take() else { return };
        self.by_slug.remove(&doc.summary.slug);
        for term in doc.terms {
            let postings = &mut self.postings[term as usize];
            postings.retain(|posting| posting.doc != slot);
            if postings.is_empty() {
                let name = std::mem::take(&mut self.term_names[term as usize]);
                self.term_ids.remove(&name);
                self.terms.remove(&name);
                self.free_terms.push(term);
            }
        }
        self.let_go_of_tag_set(doc.tag_set);
        self.total_length -= f64::from(self.lengths[slot as usize]);
        self.lengths[slot as usize] = 0.0;
        self.free.push(slot);
    }

    /// The number of the term `word`, given one if it is new.
    fn term_id(&mut self, word: &str) -> u32 {
        if let Some(&id) = self.term_ids.get(word) {
            return id;
        }
        let id = match self.free_terms.pop() {
            Some(id) => id,
            None => {
                self.term_names.push(Box::default());
                self.postings.push(Vec::new());
                u32::try_from(self.postings.len() - 1).unwrap_or(u32::MAX)
            }
        };
        let name: Box<str> = word.into();
        self.term_names[id as usize] = name.clone();
        self.term_ids.insert(name.clone(), id);
        self.terms.insert(name, id);
        id
    }

    /// The number of the set `tags`, for one more tool: given one if it is new.
    fn tag_set(&mut self, tags: &[String]) -> u32 {
        if let Some(&id) = self.tag_set_ids.get(tags) {
            self.tag_sets[id as usize].1 += 1;
            return id;
        }
        let id = match self.free_tag_sets.pop() {
            Some(id) => {
                self.tag_sets[id as usize] = (tags.to_vec(), 1);
                id
            }
            None => {
                self.tag_sets.push((tags.to_vec(), 1));
                u32::try_from(self.tag_sets.len() - 1).unwrap_or(u32::MAX)
            }
        };
        self.tag_set_ids.insert(tags.to_vec(), id);
        id
    }

    /// One tool fewer carries the set `id`; the last lets it go.
    fn let_go_of_tag_set(&mut self, id: u32) {
        let Some((tags, tools)) = self.tag_sets.get_mut(id as usize) else { return };
        *tools = tools.saturating_sub(1);
        if *tools == 0 {
            let tags = std::mem::take(tags);
            self.tag_set_ids.remove(&tags);
            self.free_tag_sets.push(id);
        }
    }

    /// How many distinct sets of tags the index holds (for tests of what it lets go).
    #[cfg(test)]
    pub(crate) fn tag_sets_held(&self) -> usize {
        self.tag_set_ids.len()
    }

    /// The best `limit` tools for the words of `text` that `filter` keeps, after `after`, best
    /// first with their scores. A tool is found when each word
    /// starts one of its words; its score adds up BM25 over the terms each word matches.
    pub(crate) fn search(
        &self,
        text: &str,
        filter: &Filter<'_>,
        after: Option<&After>,
        limit: usize,
    ) -> Vec<(f32, &Summary)> {
        let mut query: Vec<String> = Vec::new();
        for word in words(text) {
            if query.len() == MAX_QUERY_WORDS {
                break;
            }
            if !query.contains(&word) {
                query.push(word);
            }
        }
        let live = self.len();
        if query.is_empty() || live == 0 || limit == 0 {
            return Vec::new();
        }
        let slots = self.docs.len();
        let average = (self.total_length / live as f64).max(1.0) as f32;
        let mut scores = vec![0.0f32; slots];
        let mut matched = vec![0u16; slots];
        for (i, word) in query.iter().enumerate() {
            let bit = 1u16 << i;
            // How rare the word is: as rare as its commonest term (the tools it starts a word
            // of are at least those), so that a rare longer word does not outrank the word
            // itself.
            let terms: Vec<(&str, &[Posting])> = self.terms_starting(word).collect();
            let found = terms.iter().map(|(_, postings)| postings.len()).max();
            let found = found.unwrap_or_default() as f32;
            let idf = (1.0 + (live as f32 - found + 0.5) / (found + 0.5)).ln();
            for (term, postings) in terms {
                let weight = if term == word.as_str() { idf } else { idf * PREFIX_WEIGHT };
                for posting in postings {
                    let slot = posting.doc as usize;
                    let norm = K1 * (1.0 - B + B * self.lengths[slot] / average);
                    scores[slot] += weight * posting.count * (K1 + 1.0) / (posting.count + norm);
                    matched[slot] |= bit;
                }
            }
        }
        let every = u16::MAX >> (16 - query.len());
        let mut tag_sets_shown: Vec<Option<bool>> = vec![None; self.tag_sets.len()];
        let mut best: BinaryHeap<Ranked<'_>> = BinaryHeap::with_capacity(limit + 1);
        for (slot, doc) in self.docs.iter().enumerate() {
            if matched[slot] != every {
                continue;
            }
            let Some(doc) = doc else { continue };
            let ranked = Ranked { score: scores[slot], slug: &doc.summary.slug, doc };
            if let Some(after) = after
                && !ranked.comes_after(after)
            {
                continue;
            }
            if best.len() == limit && best.peek().is_some_and(|worst| ranked >= *worst) {
                continue;
            }
            let shown = *tag_sets_shown[doc.tag_set as usize]
                .get_or_insert_with(|| filter.visible.sees(&self.tag_sets[doc.tag_set as usize].0));
            if !shown || !filter.keeps(doc) {
                continue;
            }
            best.push(ranked);
            if best.len() > limit {
                best.pop();
            }
        }
        best.into_sorted_vec().into_iter().map(|r| (r.score, &r.doc.summary)).collect()
    }
}

impl SearchIndex {
    /// The terms that start with `word`, and their postings.
    fn terms_starting<'a>(
        &'a self,
        word: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a [Posting])> + 'a {
        use std::ops::Bound::{Included, Unbounded};
        let from = self.terms.range::<str, _>((Included(word), Unbounded));
        from.take_while(move |(term, _)| term.starts_with(word))
            .map(|(term, &id)| (&**term, self.postings[id as usize].as_slice()))
    }
}

impl Filter<'_> {
    fn keeps(&self, doc: &Doc) -> bool {
        let summary = &doc.summary;
        self.tag.is_none_or(|tag| summary.tags.iter().any(|t| t == tag))
            && self.variable_type.is_none_or(|kind| doc.variable_types.iter().any(|t| t == kind))
            && self.output_type.is_none_or(|kind| summary.output_type.as_deref() == Some(kind))
            && self.model.is_none_or(|model| summary.models.iter().any(|m| m == model))
    }
}

/// A found tool, ordered best first: the higher score, then the slug (byte order).
struct Ranked<'a> {
    score: f32,
    slug: &'a str,
    doc: &'a Doc,
}

impl Ranked<'_> {
    fn comes_after(&self, after: &After) -> bool {
        match self.score.total_cmp(&after.score) {
            Ordering::Less => true,
            Ordering::Equal => self.slug > after.slug.as_str(),
            Ordering::Greater => false,
        }
    }
}

impl PartialEq for Ranked<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Ranked<'_> {}
impl PartialOrd for Ranked<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked<'_> {
    /// Less is better, so that a max-heap's top is the worst kept.
    fn cmp(&self, other: &Self) -> Ordering {
        other.score.total_cmp(&self.score).then_with(|| self.slug.cmp(other.slug))
    }
}

/// The words of `text` as the index keeps them: runs of letters and digits, in lower case,
/// accents taken off (`Déjà-vu` is `deja` and `vu`), each at most [`MAX_WORD_CHARS`] long.
pub(crate) fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(is_between_words)
        .map(|piece| {
            let mut word = String::new();
            fold_into(piece, &mut word);
            word
        })
        .filter(|word| !word.is_empty())
}

/// Whether `c` separates words: anything but a letter, a digit or an accent written apart
/// (`e` and U+0301), which folding then takes off.
fn is_between_words(c: char) -> bool {
    !c.is_alphanumeric() && !unicode_normalization::char::is_combining_mark(c)
}

/// `word` folded as [`words`] does, into `folded` (emptied first): indexing a tool reuses one
/// buffer for all its words.
fn fold_into(word: &str, folded: &mut String) {
    folded.clear();
    for c in word.chars().take(MAX_WORD_CHARS) {
        if c.is_ascii() {
            folded.push(c.to_ascii_lowercase());
            continue;
        }
        for lower in c.to_lowercase() {
            unicode_normalization::char::decompose_canonical(lower, |part| {
                if !unicode_normalization::char::is_combining_mark(part) {
                    folded.push(part);
                }
            });
        }
    }
}

#[cfg(test)]
#[path = "search_index_tests.rs"]
mod tests;
