//! The word index against the rule it implements, said plainly: a tool is found when each
//! word of the query starts one of its words, it is seen by the caller and the filters keep
//! it; pages follow each other without a gap or a repeat.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;
use crate::model::Role;
use crate::people::Workspace;

fn entry(tool_id: i64, slug: &str, tags: &[&str], fields: [&str; 4]) -> Entry {
    Entry {
        tool_id,
        summary: Summary {
            slug: slug.to_owned(),
            version: 1,
            name: Some(fields[0].to_owned()),
            description: Some(fields[1].to_owned()),
            tags: tags.iter().map(|tag| (*tag).to_owned()).collect(),
            output_type: None,
            models: vec!["gpt-4o".to_owned()],
            creator: None,
            has_avatar: false,
            kind: "prompt".to_owned(),
        },
        variable_types: vec!["text".to_owned()],
        fields: fields.map(str::to_owned),
    }
}

fn everything() -> Visibility {
    Visibility::Everything
}

fn slugs(found: &[(f32, &Summary)]) -> Vec<String> {
    found.iter().map(|(_, summary)| summary.slug.clone()).collect()
}

fn filter(visible: &Visibility) -> Filter<'_> {
    Filter { tag: None, variable_type: None, output_type: None, model: None, visible }
}

#[test]
fn words_are_folded_to_lower_case_without_accents() {
    let found: Vec<String> = words("Déjà-vu, ÑANDÚ sql_assistant 日本語のテキスト").collect();
    assert_eq!(found, ["deja", "vu", "nandu", "sql", "assistant", "日本語のテキスト"]);
    // Accents written apart (e and U+0301) are part of their word, and taken off too.
    assert_eq!(words("De\u{301}ja\u{300} vu").collect::<Vec<_>>(), ["deja", "vu"]);
    let long = "a".repeat(100);
    assert_eq!(words(&long).next().map(|word| word.len()), Some(MAX_WORD_CHARS));
}

#[test]
fn each_word_is_a_prefix_and_every_word_is_needed() {
    let index = SearchIndex::of([
        entry(1, "tide-poet", &["all"], ["Tide poet", "Poems about tides", "", "Write a poem"]),
        entry(2, "code-review", &["all"], ["Code review", "Reviews code", "", "Review this code"]),
        entry(3, "poem-review", &["all"], ["Poem critic", "", "", "Review a poem"]),
    ]);
    let visible = everything();
    let found = |text| slugs(&index.search(text, &filter(&visible), None, 10));
    assert_eq!(found("revi"), ["code-review", "poem-review"]);
    assert_eq!(found("po rev"), ["poem-review"]);
    assert_eq!(found("TIDES"), ["tide-poet"]);
    assert!(found("nothing").is_empty());
    assert!(found("  --  ").is_empty());
}

#[test]
fn a_query_uses_its_first_eight_different_words() {
    let index = SearchIndex::of([entry(1, "tide-poet", &["all"], ["a b c d e f g h", "", "", ""])]);
    let visible = everything();
    let found = |text| slugs(&index.search(text, &filter(&visible), None, 10));
    assert_eq!(found("a a b c d e f g h zzz"), ["tide-poet"], "a ninth word is not asked for");
    assert!(found("zzz a b c d e f g h").is_empty(), "the first eight are");
}

#[test]
fn the_name_and_the_whole_word_rank_first() {
    let index = SearchIndex::of([
        entry(1, "a-prompt-only", &["all"], ["Helper", "", "", "A poem here"]),
        entry(2, "b-named", &["all"], ["Poem", "", "", "Something else entirely"]),
        entry(3, "c-poems", &["all"], ["Poems", "", "", "Something else entirely"]),
    ]);
    let visible = everything();
    assert_eq!(
        slugs(&index.search("poem", &filter(&visible), None, 10)),
        ["b-named", "c-poems", "a-prompt-only"]
    );
}

#[test]
fn a_tool_put_again_is_found_by_its_new_words_only_and_a_removed_one_not_at_all() {
    let mut index =
        SearchIndex::of([entry(1, "tide-poet", &["all"], ["Tide poet", "", "", "poem"])]);
    index.put(entry(1, "tide-poet", &["all"], ["Moon poet", "", "", "verse"]));
    let visible = everything();
    assert!(index.search("tide", &filter(&visible), None, 10).is_empty());
    assert_eq!(slugs(&index.search("moon", &filter(&visible), None, 10)), ["tide-poet"]);
    assert_eq!(index.len(), 1);
    index.remove_slug("tide-poet");
    assert!(index.search("moon", &filter(&visible), None, 10).is_empty());
    assert_eq!(index.len(), 0);
    index.put(entry(2, "moon-poet", &["all"], ["Moon", "", "", ""]));
    assert_eq!(slugs(&index.search("moon", &filter(&visible), None, 10)), ["moon-poet"]);
}

/// Tagging a tool again and again holds only the sets some tool still carries, and the tools
/// are still seen by their teams.
#[test]
fn tag_sets_no_tool_carries_are_let_go() {
    let mut index = SearchIndex::of([
        entry(1, "tide-poet", &["all"], ["Tide poet", "", "", ""]),
        entry(2, "moon-poet", &["all"], ["Moon poet", "", "", ""]),
    ]);
    for round in 0..1000 {
        let team = format!("team-{round}");
        index.put(entry(1, "tide-poet", &[team.as_str()], ["Tide poet", "", "", ""]));
    }
    assert_eq!(index.tag_sets_held(), 2, "`all`, and the last team's");
    index.remove_slug("moon-poet");
    assert_eq!(index.tag_sets_held(), 1);
    index.put(entry(3, "sea-poet", &["sales"], ["Sea poet", "", "", ""]));
    let visible = everything();
    assert_eq!(slugs(&index.search("poet", &filter(&visible), None, 10)).len(), 2);
    let sales = Visibility::Tagged { seen: ["sales".to_owned()].into(), hidden: [].into() };
    assert_eq!(slugs(&index.search("poet", &filter(&sales), None, 10)), ["sea-poet"]);
}

#[test]
fn a_cursor_is_never_a_slug() {
    let after = After { score: 1.5, slug: "tide-poet".to_owned() };
    assert_eq!(After::parse(&after.cursor()), Some(after));
    assert_eq!(After::parse("tide-poet"), None);
    assert_eq!(After::parse("7fc00000.tide-poet"), None, "NaN");
    assert_eq!(After::parse("3f800000.Tide"), None);
    assert_eq!(After::parse("3f80.tide"), None);
}

const VOCABULARY: [&str; 8] = ["review", "rewrite", "poem", "poet", "tide", "code", "déjà", "plan"];
const TAGS: [&str; 4] = ["all", "sales", "support", "built-in"];

fn tool() -> impl Strategy<Value = (Vec<&'static str>, Vec<Vec<&'static str>>, bool)> {
    (
        prop::sample::subsequence(TAGS.to_vec(), 0..3),
        prop::collection::vec(
            prop::collection::vec(prop::sample::select(VOCABULARY.to_vec()), 0..6),
            4,
        ),
        any::<bool>(),
    )
}

proptest! {
    /// Against the rule said plainly, for any library, query, caller and tag filter: the same
    /// tools, best first, and the pages of any size join into the whole list.
    #[test]
    fn the_index_finds_what_the_rule_says(
        tools in prop::collection::vec(tool(), 0..24),
        query in prop::collection::vec(prop::sample::select(vec!["re", "rev", "review", "po", "poem", "t", "deja", "DÉJÀ", "x"]), 1..3),
        role in prop::sample::select(Role::ALL.to_vec()),
        teams in prop::sample::subsequence(vec!["sales".to_owned(), "support".to_owned()], 0..2),
        built_ins in any::<bool>(),
        tag in prop::option::of(prop::sample::select(TAGS.to_vec())),
        page in 1usize..5,
    ) {
        let entries: Vec<Entry> = tools.iter().enumerate().map(|(i, (tags, fields, _))| {
            let text: Vec<String> = fields.iter().map(|words| words.join(" ")).collect();
            entry(i64::try_from(i).unwrap_or_default(), &format!("tool-{i}"), tags, [&text[0], &text[1], &text[2], &text[3]])
        }).collect();
        // Some tools are put twice and some removed: the index must forget what they were.
        let mut index = SearchIndex::of(entries.iter().cloned().map(|mut e| { e.fields[3] = "tide".to_owned(); e }));
        for (entry, (_, _, removed)) in entries.iter().zip(&tools) {
            index.put(entry.clone());
            if *removed { index.remove_slug(&entry.summary.slug); }
        }
        let workspace = Workspace { built_ins, ..Workspace::default() };
        let visible = Visibility::of(role, &teams, &workspace);
        let filter = Filter { tag, ..filter(&visible) };
        let text = query.join(" ");
        let wanted: Vec<String> = words(&text).collect();
        let expected: BTreeSet<String> = entries.iter().zip(&tools)
            .filter(|(_, (_, _, removed))| !removed)
            .filter(|(e, _)| visible.sees(&e.summary.tags))
            .filter(|(e, _)| tag.is_none_or(|tag| e.summary.tags.iter().any(|t| t == tag)))
            .filter(|(e, _)| wanted.iter().all(|w| e.fields.iter().any(|f| words(f).any(|x| x.starts_with(w.as_str())))))
            .map(|(e, _)| e.summary.slug.clone())
            .collect();
        let all = index.search(&text, &filter, None, 100);
        prop_assert_eq!(slugs(&all).into_iter().collect::<BTreeSet<_>>(), expected);
        prop_assert!(all.windows(2).all(|pair| pair[0].0 >= pair[1].0), "best first");
        let mut paged = Vec::new();
        let mut after: Option<After> = None;
        loop {
            let found = index.search(&text, &filter, after.as_ref(), page);
            paged.extend(slugs(&found));
            match found.last() {
                Some((score, summary)) if found.len() == page => {
                    after = Some(After { score: *score, slug: summary.slug.clone() });
                }
                _ => break,
            }
        }
        prop_assert_eq!(paged, slugs(&all));
    }
}
