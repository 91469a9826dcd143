//! Names kept in the order they were first met, each with a value (where it was first written):
//! scanned while there are few of them, hashed once there are many.
//!
//! A tool has a handful of variables, placeholders and allowed values, and building a hash
//! table for each handful cost more than scanning it. A crafted tool can have a million, and
//! scanning those for each would be quadratic; past [`SCANNED`] names the table is built.

use foldhash::HashMap;

/// How many names are looked up by scanning before a hash index is built.
const SCANNED: usize = 16;

#[derive(Debug, Clone)]
pub struct NameMap<'a, V> {
    entries: Vec<(&'a str, V)>,
    /// Each name's place in `entries`, once there are more than [`SCANNED`].
    index: Option<HashMap<&'a str, usize>>,
}

/// Names alone.
pub type Names<'a> = NameMap<'a, ()>;

impl<V> Default for NameMap<'_, V> {
    fn default() -> Self {
        Self { entries: Vec::new(), index: None }
    }
}

impl<V> NameMap<'_, V> {
    /// An empty map with room for `names` names without growing (up to [`SCANNED`]).
    pub fn with_capacity(names: usize) -> Self {
        Self { entries: Vec::with_capacity(names.min(SCANNED)), index: None }
    }
}

impl<'a, V> NameMap<'a, V> {
    /// The value `name` was first given, if it was.
    pub fn get(&self, name: &str) -> Option<&V> {
        let at = match &self.index {
            Some(index) => index.get(name).copied(),
            None => self.entries.iter().position(|(known, _)| *known == name),
        };
        at.map(|at| &self.entries[at].1)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Adds `name` with `value` when it is new (and says so); a name met before keeps its
    /// first value.
    pub fn insert(&mut self, name: &'a str, value: V) -> bool {
        if self.contains(name) {
            return false;
        }
        if let Some(index) = &mut self.index {
            index.insert(name, self.entries.len());
        } else if self.entries.len() == SCANNED {
            let mut index: HashMap<&'a str, usize> =
                self.entries.iter().enumerate().map(|(at, (known, _))| (*known, at)).collect();
            index.insert(name, self.entries.len());
            self.index = Some(index);
        }
        self.entries.push((name, value));
        true
    }

    /// The names, in the order they were first met.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &'a str> + '_ {
        self.entries.iter().map(|(name, _)| *name)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<'a> FromIterator<&'a str> for Names<'a> {
    fn from_iter<I: IntoIterator<Item = &'a str>>(names: I) -> Self {
        let names = names.into_iter();
        let mut set = Names::with_capacity(names.size_hint().0);
        for name in names {
            set.insert(name, ());
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_values_and_order_are_kept_below_and_past_the_scanned_size() {
        let words: Vec<String> = (0..100).map(|i| format!("n{}", i % 40)).collect();
        let mut map = NameMap::default();
        for (at, word) in words.iter().enumerate() {
            assert_eq!(map.insert(word, at), at < 40, "{word}");
        }
        assert_eq!(map.names().count(), 40);
        assert_eq!(map.names().nth(39), Some("n39"));
        for i in 0..40 {
            assert_eq!(map.get(&format!("n{i}")), Some(&i));
        }
        assert!(!map.contains("n40"));
        let few: Names<'_> = ["b", "a", "b"].into_iter().collect();
        assert_eq!(few.names().collect::<Vec<_>>(), ["b", "a"]);
        assert!(few.contains("a") && !few.contains("c"));
    }
}
