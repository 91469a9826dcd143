//! Members from a CSV file (`llmtool member import`): the columns `email`, `name`, `role` and
//! `teams` (team names separated by spaces, `;` or `,`), in any order, named by the header.
//! Every row is checked and every problem reported with its line, so that a file is imported
//! whole or not at all.

use serde::Serialize;
use utoipa::ToSchema;

use crate::model::Role;
use crate::people::{Member, NewMember, People, Team, check_member_name, check_team, email_key};
use crate::store::StoreError;

/// A problem with one line of the file (counted from 1, the header being line 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct RowProblem {
    pub line: u64,
    pub message: String,
}

/// The columns the file must name in its header.
const COLUMNS: [&str; 4] = ["email", "name", "role", "teams"];

/// The members of the CSV `text`, each with its line, and every problem found in the other
/// rows.
pub fn members_from_csv(text: &str) -> (Vec<(u64, NewMember)>, Vec<RowProblem>) {
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(text.as_bytes());
    let header: Vec<String> = match reader.headers() {
        Ok(header) => header.iter().map(|name| name.trim().to_lowercase()).collect(),
        Err(error) => {
            return (Vec::new(), vec![RowProblem { line: 1, message: error.to_string() }]);
        }
    };
    let at = |column: &str| header.iter().position(|name| name == column);
    let missing: Vec<&str> = COLUMNS.into_iter().filter(|column| at(column).is_none()).collect();
    if !missing.is_empty() {
        let message = format!(
            "the header names no column {}; it must name {}",
            quoted(&missing),
            quoted(&COLUMNS)
        );
        return (Vec::new(), vec![RowProblem { line: 1, message }]);
    }
    let mut members: Vec<(u64, NewMember)> = Vec::new();
    let mut problems = Vec::new();
    for record in reader.records() {
        let record = match record {
            Ok(record) => record,
            Err(error) => {
                let line = error.position().map_or(0, |at| line_at(text, at));
                problems.push(RowProblem { line, message: error.to_string() });
                continue;
            }
        };
        let line = record.position().map_or(0, |at| line_at(text, at));
        if record.iter().all(|value| value.trim().is_empty()) {
            continue;
        }
        let [email, name, role, teams] =
            COLUMNS.map(|column| at(column).and_then(|i| record.get(i)).unwrap_or("").trim());
        match member(email, name, role, teams) {
            Ok(member) => {
                let earlier = members.iter().find(|(_, other)| other.email == member.email);
                if let Some((first, _)) = earlier {
                    let message = format!("`{}` is on line {first} already", member.email);
                    problems.push(RowProblem { line, message });
                } else {
                    members.push((line, member));
                }
            }
            Err(message) => problems.push(RowProblem { line, message }),
        }
    }
    (members, problems)
}

/// One row's member, or what is wrong with it.
fn member(email: &str, name: &str, role: &str, teams: &str) -> Result<NewMember, String> {
    let email = email_key(email).map_err(|e| e.to_string())?;
    let name = check_member_name(name).map_err(|e| e.to_string())?;
    let role = Role::parse(&role.to_lowercase()).ok_or_else(|| {
        let roles: Vec<&str> = Role::ALL.iter().map(|role| role.as_str()).collect();
        format!("`{role}` is not a role: {}", quoted(&roles))
    })?;
    let teams: Vec<String> =
        teams.split([' ', ';', ',']).filter(|team| !team.is_empty()).map(str::to_owned).collect();
    for team in &teams {
        check_team(team).map_err(|e| e.to_string())?;
    }
    Ok(NewMember { email, name, role, teams })
}

/// The members of the CSV `text`, checked against the file and against the library `people`
/// (nothing is added): all of them, or every problem found, by line.
pub async fn check_import(
    people: &dyn People,
    text: &str,
) -> Result<Result<Vec<NewMember>, Vec<RowProblem>>, StoreError> {
    let (members, mut problems) = members_from_csv(text);
    let (existing, teams) = (people.members().await?, people.teams().await?);
    problems.extend(import_problems(&members, &existing, &teams));
    if problems.is_empty() {
        return Ok(Ok(members.into_iter().map(|(_, member)| member).collect()));
    }
    problems.sort_by_key(|problem| problem.line);
    Ok(Err(problems))
}

/// The problems of importing `members` (each with its line) into a library that has
/// `existing` members and `teams`: a member already there, a team that is not.
fn import_problems(
    members: &[(u64, NewMember)],
    existing: &[Member],
    teams: &[Team],
) -> Vec<RowProblem> {
    let mut problems = Vec::new();
    for (line, member) in members {
        let line = *line;
        if existing.iter().any(|other| other.email == member.email) {
            let message = format!("a member `{}` exists", member.email);
            problems.push(RowProblem { line, message });
        }
        for team in member.teams.iter().filter(|team| !teams.iter().any(|t| t.name == **team)) {
            let message = format!("no team `{team}` (make it with `llmtool team create {team}`)");
            problems.push(RowProblem { line, message });
        }
    }
    problems
}

/// The line of `text` (from 1) that the record at `at` starts on, counted from its byte
/// offset: the reader's own count leaves out blank lines, and its offset is where the blank
/// lines before the record begin.
fn line_at(text: &str, at: &csv::Position) -> u64 {
    let from = usize::try_from(at.byte()).unwrap_or(usize::MAX).min(text.len());
    let blank = text.as_bytes()[from..].iter().take_while(|b| matches!(b, b'\n' | b'\r')).count();
    let newlines = memchr::memchr_iter(b'\n', &text.as_bytes()[..from + blank]).count();
    u64::try_from(newlines).unwrap_or(u64::MAX).saturating_add(1)
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_good_file_gives_its_members() {
        let text = "Email,Name,Role,Teams\nana@example.org,Ana,editor,sales support\n\nbo@example.org,Bo,VIEWER,\n";
        let (members, problems) = members_from_csv(text);
        assert!(problems.is_empty(), "{problems:?}");
        let lines: Vec<u64> = members.iter().map(|(line, _)| *line).collect();
        assert_eq!(lines, [2, 4]);
        assert_eq!((members[0].1.role, members[0].1.teams.len()), (Role::Editor, 2));
        assert_eq!((members[1].1.role, members[1].1.teams.len()), (Role::Viewer, 0));
    }

    #[test]
    fn every_bad_row_is_named_with_its_line() {
        let text = "email,name,role,teams\nana@example.org,Ana,editor,sales\nnot-an-address,X,viewer,\nbo@example.org,Bo,boss,\nANA@example.org,Ana,viewer,\ncy@example.org,Cy,viewer,All\n";
        let (members, problems) = members_from_csv(text);
        assert_eq!(members.len(), 1);
        let lines: Vec<u64> = problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [3, 4, 5, 6], "{problems:?}");
        assert!(problems[1].message.contains("`boss` is not a role"), "{problems:?}");
        assert!(problems[2].message.contains("on line 2 already"), "{problems:?}");
        let (_, header) = members_from_csv("mail,name\n");
        assert!(header[0].message.contains("`email`, `role`, `teams`"), "{header:?}");
    }

    #[test]
    fn members_and_teams_of_the_library_are_checked_too() {
        let (members, _) =
            members_from_csv("email,name,role,teams\nana@example.org,Ana,viewer,ops\n");
        let existing = [Member {
            email: "ana@example.org".into(),
            name: "Ana".into(),
            role: Role::Viewer,
            teams: Vec::new(),
            created_at: String::new(),
        }];
        let problems = import_problems(&members, &existing, &[]);
        let said: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[1].contains("no team `ops`"), "{said:?}");
    }
}
