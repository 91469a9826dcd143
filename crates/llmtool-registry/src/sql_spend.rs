//! [`Spending`] for [`SqlStore`]: the spend's totals by day (`spend_daily`, kept with each run
//! by [`add_to_totals`]), the budgets' standing, and the reservations of the runs in flight,
//! written once over `Db`.

use async_trait::async_trait;
use llmtool_log::Record;

use crate::control::{Budget, Scope};
use crate::db::{Statement, Tx, statement};
use crate::spend::{
    BudgetStatus, Charge, DaySpend, OverBudget, Reserved, SpendLine, SpendQuery, SpendReport,
    SpendRow, SpendTotals, Spending,
};
use crate::sql_control::{BUDGET_COLUMNS, BudgetRow, budget};
use crate::sql_store::SqlStore;
use crate::store::{StoreError, expiry, now};

/// The sums every total is made of: runs, input tokens, output tokens, cost.
const SUMS: &str =
    "SUM(runs)::bigint, SUM(input_tokens)::bigint, SUM(output_tokens)::bigint, SUM(cost_usd)";

/// A total's columns: runs, input tokens, output tokens, cost (`NULL` for no rows).
type Sums = (Option<i64>, Option<i64>, Option<i64>, Option<f64>);

/// A total with what it is of (a team, a model...).
type KeyedSums = (String, Option<i64>, Option<i64>, Option<i64>, Option<f64>);

/// A line of the CSV: day, team, member, tool, model, runs, input and output tokens, cost.
type SpendRowColumns = (String, String, String, String, String, i64, i64, i64, f64);

/// A total of a day and a team.
type DaySums = (String, String, Option<i64>, Option<i64>, Option<i64>, Option<f64>);

/// The most lines a report gives by member and by tool (the largest first).
const MOST_LINES: i64 = 100;

/// The tables of totals by day, each with its key columns: the finest, which every filtered
/// total and the CSV read, and three coarser ones, which the totals over everyone's runs read
/// (a month of a million runs is a few thousand of their lines).
const TOTALS: [(&str, &[&str]); 4] = [
    ("spend_daily", &["day", "team", "member", "slug", "model"]),
    ("spend_team_daily", &["day", "team", "model"]),
    ("spend_tool_daily", &["day", "slug"]),
    ("spend_member_daily", &["day", "member"]),
];

/// Adds `run` of `slug`, charged to `charge`, to the day's totals, in `tx` (the transaction
/// that keeps the run).
pub(crate) async fn add_to_totals(
    tx: &mut Tx,
    slug: &str,
    run: &Record,
    charge: &Charge,
) -> Result<(), sqlx::Error> {
    let day: String = run.started_at.chars().take(10).collect();
    let model = format!("{}/{}", run.provider, run.model);
    for (table, keys) in TOTALS {
        let mut add = statement(format!(
            "INSERT INTO {table} ({keys}, runs, input_tokens, output_tokens, cost_usd)
             VALUES ({places}, 1, ${a}, ${b}, ${c})
             ON CONFLICT ({keys}) DO UPDATE SET runs = {table}.runs + 1,
                input_tokens = {table}.input_tokens + excluded.input_tokens,
                output_tokens = {table}.output_tokens + excluded.output_tokens,
                cost_usd = {table}.cost_usd + excluded.cost_usd",
            keys = keys.join(", "),
            places = (1..=keys.len()).map(|n| format!("${n}")).collect::<Vec<_>>().join(", "),
            a = keys.len() + 1,
            b = keys.len() + 2,
            c = keys.len() + 3,
        ));
        for key in keys {
            add = add.bind(match *key {
                "day" => day.as_str(),
                "team" => charge.team.as_str(),
                "member" => charge.member.as_str(),
                "slug" => slug,
                _ => model.as_str(),
            });
        }
        let add = add
            .bind(crate::rows::tokens(run.input_tokens).unwrap_or(0))
            .bind(crate::rows::tokens(run.output_tokens).unwrap_or(0))
            .bind(run.cost_usd.unwrap_or(0.0));
        tx.execute(add).await?;
    }
    Ok(())
}

/// Moves the team `from`'s totals to `to` (a renamed team keeps its spend), in `tx`.
pub(crate) async fn move_team(tx: &mut Tx, from: &str, to: &str) -> Result<(), sqlx::Error> {
    for (table, keys) in TOTALS.iter().filter(|(_, keys)| keys.contains(&"team")) {
        let columns = keys.join(", ");
        let moved = keys.iter().map(|k| if *k == "team" { "$1" } else { k }).collect::<Vec<_>>();
        let merge = statement(format!(
            "INSERT INTO {table} ({columns}, runs, input_tokens, output_tokens, cost_usd)
             SELECT {moved}, runs, input_tokens, output_tokens, cost_usd FROM {table}
             WHERE team = $2
             ON CONFLICT ({columns}) DO UPDATE SET runs = {table}.runs + excluded.runs,
                input_tokens = {table}.input_tokens + excluded.input_tokens,
                output_tokens = {table}.output_tokens + excluded.output_tokens,
                cost_usd = {table}.cost_usd + excluded.cost_usd",
            moved = moved.join(", ")
        ));
        tx.execute(merge.bind(to).bind(from)).await?;
        let old = statement(format!("DELETE FROM {table} WHERE team = $2 AND $1 <> $2"));
        tx.execute(old.bind(to).bind(from)).await?;
    }
    Ok(())
}

/// The table of totals that has `column` and serves `query` with the fewest lines: a coarse
/// one over everyone's runs (or a team's, for what the team table has), else the finest.
fn source(query: &SpendQuery, column: &str) -> &'static str {
    match (query.member.is_some(), query.team.is_some(), column) {
        (false, _, "team" | "model" | "day") => "spend_team_daily",
        (false, false, "slug") => "spend_tool_daily",
        (false, false, "member") => "spend_member_daily",
        _ => "spend_daily",
    }
}

/// `select` (a `SELECT ... FROM table WHERE`) narrowed to `query`'s days, and to its member or
/// team where `table` has them (the caller chose a table without them only when they are not
/// asked for), then `rest` (a `GROUP BY` and `ORDER BY`, say).
fn within_table(table: &str, select: &str, query: &SpendQuery, rest: &str) -> Statement {
    let has = |column: &str| TOTALS.iter().any(|(t, keys)| *t == table && keys.contains(&column));
    let member =
        if has("member") { "($3::text IS NULL OR member = $3)" } else { "$3::text IS NULL" };
    let team = if has("team") { "($4::text IS NULL OR team = $4)" } else { "$4::text IS NULL" };
    statement(format!("{select} day >= $1 AND day < $2 AND {member} AND {team} {rest}"))
        .bind(&query.from)
        .bind(&query.to)
        .bind(query.member.as_deref())
        .bind(query.team.as_deref())
}

fn totals((runs, input, output, cost): Sums) -> SpendTotals {
    let count = |n: Option<i64>| u64::try_from(n.unwrap_or(0)).unwrap_or(0);
    SpendTotals {
        runs: count(runs),
        input_tokens: count(input),
        output_tokens: count(output),
        cost_usd: cost.unwrap_or(0.0),
    }
}

impl SqlStore {
    /// The totals of `query` by `column`, largest cost first, at most `limit`.
    async fn lines(
        &self,
        query: &SpendQuery,
        column: &str,
        limit: i64,
    ) -> Result<Vec<SpendLine>, StoreError> {
        let table = source(query, column);
        let select = format!("SELECT {column}, {SUMS} FROM {table} WHERE");
        let rest = format!(
            "GROUP BY {column} ORDER BY SUM(cost_usd) DESC, {column} COLLATE \"C\" LIMIT $5"
        );
        let statement = within_table(table, &select, query, &rest).bind(limit);
        let rows: Vec<KeyedSums> = self.db.all(statement).await?;
        Ok(rows
            .into_iter()
            .map(|(key, runs, input, output, cost)| SpendLine {
                key,
                totals: totals((runs, input, output, cost)),
            })
            .collect())
    }
}

#[async_trait]
impl Spending for SqlStore {
    async fn spend(&self, query: &SpendQuery) -> Result<SpendReport, StoreError> {
        let table = source(query, "team");
        let sql = format!("SELECT {SUMS} FROM {table} WHERE");
        let whole: Option<Sums> = self.db.optional(within_table(table, &sql, query, "")).await?;
        let sql = format!("SELECT day, team, {SUMS} FROM {table} WHERE");
        let rest = "GROUP BY day, team ORDER BY day, team COLLATE \"C\"";
        let days: Vec<DaySums> = self.db.all(within_table(table, &sql, query, rest)).await?;
        let by_day = days
            .into_iter()
            .map(|(day, team, runs, input, output, cost)| DaySpend {
                day,
                team,
                totals: totals((runs, input, output, cost)),
            })
            .collect();
        Ok(SpendReport {
            from: query.from.clone(),
            to: query.to.clone(),
            totals: whole.map(totals).unwrap_or_default(),
            by_day,
            by_team: self.lines(query, "team", i64::MAX).await?,
            by_member: self.lines(query, "member", MOST_LINES).await?,
            by_tool: self.lines(query, "slug", MOST_LINES).await?,
            by_model: self.lines(query, "model", i64::MAX).await?,
        })
    }

    async fn spend_rows(&self, query: &SpendQuery) -> Result<Vec<SpendRow>, StoreError> {
        let sql = "SELECT day, team, member, slug, model, runs, input_tokens, output_tokens, \
                   cost_usd FROM spend_daily WHERE";
        let rest = "ORDER BY day, team COLLATE \"C\", member COLLATE \"C\", slug COLLATE \"C\", \
                    model COLLATE \"C\"";
        let rows: Vec<SpendRowColumns> =
            self.db.all(within_table("spend_daily", sql, query, rest)).await?;
        Ok(rows
            .into_iter()
            .map(|(day, team, member, tool, model, runs, input, output, cost)| SpendRow {
                day,
                team,
                member,
                tool,
                model,
                totals: totals((Some(runs), Some(input), Some(output), Some(cost))),
            })
            .collect())
    }

    async fn budget_statuses(&self, today: &str) -> Result<Vec<BudgetStatus>, StoreError> {
        let today = parse_day(today)?;
        let mut tx = self.db.begin_read().await?;
        let sql =
            format!("SELECT {BUDGET_COLUMNS} FROM budgets ORDER BY scope DESC, name COLLATE \"C\"");
        let rows: Vec<BudgetRow> = tx.all(statement(sql)).await?;
        let mut statuses = Vec::with_capacity(rows.len());
        for budget in rows.into_iter().filter_map(budget) {
            statuses.push(standing(&mut tx, budget, today).await?);
        }
        tx.commit().await?;
        Ok(statuses)
    }

    async fn reserve(
        &self,
        charge: &Charge,
        cost_usd: f64,
        lifetime: std::time::Duration,
    ) -> Result<Reserved, StoreError> {
        let cost_usd = if cost_usd.is_finite() { cost_usd.max(0.0) } else { f64::MAX };
        let now = now();
        let today = parse_day(&now[..10])?;
        let mut tx = self.db.begin_write().await?;
        // Reservations take turns (SQLite's write lock covers it): two runs cannot both see
        // the last of a budget free.
        tx.lock_budgets().await?;
        tx.execute(statement("DELETE FROM reservations WHERE expires_at <= $1").bind(&now)).await?;
        let sql = format!(
            "SELECT {BUDGET_COLUMNS} FROM budgets
             WHERE (scope = 'team' AND name = $1) OR (scope = 'member' AND name = $2)"
        );
        let rows: Vec<BudgetRow> =
            tx.all(statement(sql).bind(&charge.team).bind(&charge.member)).await?;
        let mut warnings = Vec::new();
        for budget in rows.into_iter().filter_map(budget) {
            let blank = match budget.scope {
                Scope::Team => charge.team.is_empty(),
                Scope::Member => charge.member.is_empty(),
            };
            if blank {
                continue;
            }
            let status = standing(&mut tx, budget, today).await?;
            let after = status.spent_usd + status.reserved_usd + cost_usd;
            if status.budget.hard && after > status.budget.limit_usd {
                return Err(StoreError::OverBudget(Box::new(OverBudget { status, cost_usd })));
            }
            if after >= status.budget.warn_at * status.budget.limit_usd {
                warnings.push(status);
            }
        }
        let hold = statement(
            "INSERT INTO reservations (member, team, amount, expires_at) VALUES ($1, $2, $3, $4)
             RETURNING id",
        )
        .bind(&charge.member)
        .bind(&charge.team)
        .bind(cost_usd)
        .bind(expiry(lifetime));
        let (id,): (i64,) = tx.optional(hold).await?.ok_or(sqlx::Error::RowNotFound)?;
        tx.commit().await?;
        Ok(Reserved { id, warnings })
    }

    async fn release(&self, reservation: i64) -> Result<(), StoreError> {
        let release = statement("DELETE FROM reservations WHERE id = $1").bind(reservation);
        self.db.execute(release).await?;
        Ok(())
    }
}

/// Where `budget`'s current period stands on `today`, as `tx` sees it.
async fn standing(
    tx: &mut Tx,
    budget: Budget,
    today: jiff::civil::Date,
) -> Result<BudgetStatus, StoreError> {
    let start = budget.period.start(today).to_string();
    let column = match budget.scope {
        Scope::Team => "team",
        Scope::Member => "member",
    };
    let spent = format!("SELECT SUM(cost_usd) FROM spend_daily WHERE {column} = $1 AND day >= $2");
    let (spent,): (Option<f64>,) =
        tx.optional(statement(spent).bind(&budget.name).bind(&start)).await?.unwrap_or((None,));
    let held =
        format!("SELECT SUM(amount) FROM reservations WHERE {column} = $1 AND expires_at > $2");
    let (held,): (Option<f64>,) =
        tx.optional(statement(held).bind(&budget.name).bind(now())).await?.unwrap_or((None,));
    Ok(BudgetStatus {
        budget,
        period_start: start,
        spent_usd: spent.unwrap_or(0.0),
        reserved_usd: held.unwrap_or(0.0),
    })
}

fn parse_day(day: &str) -> Result<jiff::civil::Date, StoreError> {
    day.parse().map_err(|_| StoreError::BadDay(day.to_owned()))
}
