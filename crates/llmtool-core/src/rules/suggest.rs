//! "Did you mean": the closest known name to a misspelled one.

/// The candidate closest to `name` by edit distance, if it is close enough to be a likely typo
/// (at most a third of the name's length, and at least one edit allowed).
pub fn closest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let lowered = name.to_lowercase();
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|candidate| !candidate.trim().is_empty())
        .map(|candidate| (strsim::levenshtein(&lowered, &candidate.to_lowercase()), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// `` `a`, `b` or `c` `` for messages.
pub fn one_of<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<String> = names.into_iter().map(|n| format!("`{n}`")).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_typos_only() {
        assert_eq!(closest("temprature", ["temperature", "top_p"]), Some("temperature"));
        assert_eq!(closest("Prompt_Name", ["prompt_name"]), Some("prompt_name"));
        assert_eq!(closest("zzz", ["temperature"]), None);
        assert_eq!(one_of(["a", "b", "c"]), "`a`, `b` or `c`");
    }
}
