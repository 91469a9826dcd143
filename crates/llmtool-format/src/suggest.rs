//! "Did you mean": the closest known name to a misspelled one.

/// How many candidates a "did you mean" compares, and how many names a message lists: a
/// suggestion must not make checking a huge list quadratic.
pub const MAX_SUGGESTION_CANDIDATES: usize = 1000;
const MAX_LISTED: usize = 20;

/// The candidate closest to `name` by edit distance, if it is close enough to be a likely typo
/// (at most a third of the name's length, and at least one edit allowed). Two letters
/// swapped count as one edit (`stlye` is one from `style`), as they are one slip of the
/// fingers. Only the first [`MAX_SUGGESTION_CANDIDATES`] candidates are compared.
pub fn closest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let lowered = name.to_lowercase();
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .take(MAX_SUGGESTION_CANDIDATES)
        .filter(|candidate| !candidate.trim().is_empty())
        .map(|candidate| (strsim::osa_distance(&lowered, &candidate.to_lowercase()), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// `` `a`, `b` or `c` `` for messages; past 20 names, the first 20 and how many more.
pub fn one_of<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut names = names.into_iter();
    let listed: Vec<String> = names.by_ref().take(MAX_LISTED).map(|n| format!("`{n}`")).collect();
    let more = names.count();
    if more > 0 {
        return format!("{} or {more} more", listed.join(", "));
    }
    let names = listed;
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
        let many: Vec<String> = (0..25).map(|i| i.to_string()).collect();
        assert!(one_of(many.iter().map(String::as_str)).ends_with("`19` or 5 more"));
    }
}
