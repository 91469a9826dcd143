//! Who sees which tools: the one rule, decided here, that every path of the library asks.
//!
//! Owners and admins see every tool. Anyone else sees the tools that carry the tag `all`, or
//! the name of one of their teams. A caller who is no member (a library open to anonymous
//! reading) sees the tools tagged `all`.

use std::collections::BTreeSet;

use crate::model::Role;
use crate::people::ALL;

/// What one caller may see of the library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Visibility {
    /// Every tool.
    Everything,
    /// The tools that carry at least one of these tags.
    Tagged(BTreeSet<String>),
}

impl Visibility {
    /// What a member with `role` in `teams` sees.
    pub fn of(role: Role, teams: &[String]) -> Visibility {
        if role >= Role::Admin {
            return Visibility::Everything;
        }
        let mut tags: BTreeSet<String> = teams.iter().cloned().collect();
        tags.insert(ALL.to_owned());
        Visibility::Tagged(tags)
    }

    /// What a caller who is no member sees.
    pub fn anonymous() -> Visibility {
        Visibility::Tagged(BTreeSet::from([ALL.to_owned()]))
    }

    /// Whether a tool carrying `tags` is seen.
    pub fn sees(&self, tags: &[String]) -> bool {
        match self {
            Visibility::Everything => true,
            Visibility::Tagged(seen) => tags.iter().any(|tag| seen.contains(tag)),
        }
    }

    /// The tags that make a tool seen, or `None` when every tool is (for a store's queries).
    pub fn tags(&self) -> Option<&BTreeSet<String>> {
        match self {
            Visibility::Everything => None,
            Visibility::Tagged(tags) => Some(tags),
        }
    }

    /// [`Visibility::tags`] as a store's queries take them: each between spaces (` all sales `),
    /// where a tag (which has no space) is found as ` TAG `.
    pub(crate) fn as_words(&self) -> Option<String> {
        let tags = self.tags()?;
        Some(tags.iter().fold(" ".to_owned(), |words, tag| words + tag + " "))
    }
}

/// Whether a member with `role` in `teams` may put the tag `tag` on a tool, or take it off:
/// owners and admins any tag; anyone else a team's tag (`is_team`) only for a team of theirs,
/// so that an editor curates for their own teams and for nobody else's. Other tags (`all`
/// among them) are anyone's who may tag at all.
pub fn may_tag(role: Role, teams: &[String], tag: &str, is_team: bool) -> bool {
    role >= Role::Admin || !is_team || teams.iter().any(|team| team == tag)
}

impl Default for Visibility {
    /// Every tool: what the library's own operator (its database) sees.
    fn default() -> Self {
        Visibility::Everything
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn role() -> impl Strategy<Value = Role> {
        prop::sample::select(Role::ALL.to_vec())
    }

    fn names() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(prop::sample::select(vec!["all", "sales", "support", "ops"]), 0..4)
            .prop_map(|names| names.into_iter().map(str::to_owned).collect())
    }

    proptest! {
        /// The rule, said another way: a member sees a tool when they are an admin or an
        /// owner, or the tool is for everyone, or one of its tags is one of their teams.
        #[test]
        fn a_member_sees_what_the_rule_says(role in role(), teams in names(), tags in names()) {
            let expected = role >= Role::Admin
                || tags.iter().any(|tag| tag == "all" || teams.contains(tag));
            prop_assert_eq!(Visibility::of(role, &teams).sees(&tags), expected);
            // Seeing more than a member of no team, never less.
            if Visibility::of(role, &[]).sees(&tags) {
                prop_assert!(Visibility::of(role, &teams).sees(&tags));
            }
        }
    }

    #[test]
    fn an_editor_tags_for_their_own_teams_only() {
        let sales = ["sales".to_owned()];
        assert!(may_tag(Role::Editor, &sales, "sales", true));
        assert!(!may_tag(Role::Editor, &sales, "support", true));
        assert!(may_tag(Role::Editor, &sales, "poetry", false));
        assert!(may_tag(Role::Admin, &[], "support", true));
    }

    #[test]
    fn a_caller_who_is_no_member_sees_the_tools_for_everyone() {
        let anyone = Visibility::anonymous();
        assert!(anyone.sees(&["all".to_owned(), "sales".to_owned()]));
        assert!(!anyone.sees(&["sales".to_owned()]));
        assert!(!anyone.sees(&[]));
        assert_eq!(Visibility::of(Role::Owner, &[]).tags(), None);
        let sales = Visibility::of(Role::Viewer, &["sales".to_owned()]);
        assert_eq!(sales.as_words().as_deref(), Some(" all sales "));
    }
}
