//! Who sees which tools: the one rule, decided here, that every path of the library asks.
//!
//! Owners and admins see every tool. Anyone else sees the tools that carry the tag `all`, or
//! the name of one of their teams, unless the tool is a built-in one (tagged `built-in`) and
//! the workspace has switched the built-in tools off. A caller who is no member (a library
//! open to anonymous reading) sees what a member of no team sees.

use std::collections::BTreeSet;

use crate::model::Role;
use crate::people::{ALL, BUILT_IN_TAG, Workspace};

/// What one caller may see of the library.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Visibility {
    /// Every tool.
    Everything,
    /// The tools that carry at least one of the tags `seen` and none of the tags `hidden`.
    Tagged { seen: BTreeSet<String>, hidden: BTreeSet<String> },
}

impl Visibility {
    /// What a member with `role` in `teams` sees in `workspace`.
    pub fn of(role: Role, teams: &[String], workspace: &Workspace) -> Visibility {
        if role >= Role::Admin {
            return Visibility::Everything;
        }
        let mut seen: BTreeSet<String> = teams.iter().cloned().collect();
        seen.insert(ALL.to_owned());
        let mut hidden = BTreeSet::new();
        if !workspace.built_ins {
            hidden.insert(BUILT_IN_TAG.to_owned());
        }
        Visibility::Tagged { seen, hidden }
    }

    /// What a caller who is no member sees in `workspace`.
    pub fn anonymous(workspace: &Workspace) -> Visibility {
        Visibility::of(Role::Viewer, &[], workspace)
    }

    /// Whether a tool carrying `tags` is seen.
    pub fn sees(&self, tags: &[String]) -> bool {
        match self {
            Visibility::Everything => true,
            Visibility::Tagged { seen, hidden } => {
                tags.iter().any(|tag| seen.contains(tag))
                    && !tags.iter().any(|tag| hidden.contains(tag))
            }
        }
    }

    /// The tags that make a tool seen, or `None` when every tool is (for a store's queries).
    pub fn tags(&self) -> Option<&BTreeSet<String>> {
        match self {
            Visibility::Everything => None,
            Visibility::Tagged { seen, .. } => Some(seen),
        }
    }

    /// The visibility as a store's queries take it: each tag seen between spaces, each tag
    /// hidden after a `!` (` all sales !built-in `), where a tag (which has neither a space
    /// nor a `!`) is found as ` TAG ` or ` !TAG `; `None` when every tool is seen.
    pub(crate) fn as_words(&self) -> Option<String> {
        let Visibility::Tagged { seen, hidden } = self else { return None };
        let seen = seen.iter().map(|tag| format!("{tag} "));
        let hidden = hidden.iter().map(|tag| format!("!{tag} "));
        Some(seen.chain(hidden).fold(" ".to_owned(), |words, tag| words + &tag))
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
        prop::collection::vec(
            prop::sample::select(vec!["all", "sales", "support", "ops", "built-in"]),
            0..4,
        )
        .prop_map(|names| names.into_iter().map(str::to_owned).collect())
    }

    proptest! {
        /// The rule, said another way: a member sees a tool when they are an admin or an
        /// owner, or the tool is for everyone or one of its tags is one of their teams, and
        /// it is no built-in tool switched off.
        #[test]
        fn a_member_sees_what_the_rule_says(
            role in role(),
            teams in names(),
            tags in names(),
            built_ins in any::<bool>(),
        ) {
            let built_in = tags.iter().any(|tag| tag == "built-in");
            let expected = role >= Role::Admin
                || (tags.iter().any(|tag| tag == "all" || teams.contains(tag))
                    && (built_ins || !built_in));
            let workspace = Workspace { built_ins, ..Workspace::default() };
            prop_assert_eq!(Visibility::of(role, &teams, &workspace).sees(&tags), expected);
            // Seeing more than a member of no team, never less.
            if Visibility::of(role, &[], &workspace).sees(&tags) {
                prop_assert!(Visibility::of(role, &teams, &workspace).sees(&tags));
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
        let on = Workspace { built_ins: true, ..Workspace::default() };
        let anyone = Visibility::anonymous(&on);
        assert!(anyone.sees(&["all".to_owned(), "sales".to_owned()]));
        assert!(!anyone.sees(&["sales".to_owned()]));
        assert!(!anyone.sees(&[]));
        assert_eq!(Visibility::of(Role::Owner, &[], &on).tags(), None);
        let sales = Visibility::of(Role::Viewer, &["sales".to_owned()], &on);
        assert_eq!(sales.as_words().as_deref(), Some(" all sales "));
        let off = Workspace { built_ins: false, ..Workspace::default() };
        let sales = Visibility::of(Role::Viewer, &["sales".to_owned()], &off);
        assert_eq!(sales.as_words().as_deref(), Some(" all sales !built-in "));
        assert!(!sales.sees(&["all".to_owned(), "built-in".to_owned()]));
        assert!(Visibility::of(Role::Admin, &[], &off).sees(&["built-in".to_owned()]));
    }
}
