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

/// Adds `run` of `slug`, charged to `charge`, to the day's totals, in `tx` (the transaction
/// that keeps the run).
pub(crate) async fn add_to_totals(
    tx: &mut Tx,
    slug: &str,
    run: &Record,
    charge: &Charge,
) -> Result<(), sqlx::Error> {
    let day: String = run.started_at.chars().take(10).collect();
    let add = statement(
        "INSERT INTO spend_daily (day, team, member, slug, model, runs, input_tokens,
            output_tokens, cost_usd) VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8)
         ON CONFLICT (day, team, member, slug, model) DO UPDATE SET runs = spend_daily.runs + 1,
            input_tokens = spend_daily.input_tokens + excluded.input_tokens,
            output_tokens = spend_daily.output_tokens + excluded.output_tokens,
            cost_usd = spend_daily.cost_usd + excluded.cost_usd",
    )
    .bind(day)
    .bind(&charge.team)
    .bind(&charge.member)
    .bind(slug)
    .bind(format!("{}/{}", run.provider, run.model))
    .bind(crate::rows::tokens(run.input_tokens).unwrap_or(0))
    .bind(crate::rows::tokens(run.output_tokens).unwrap_or(0))
    .bind(run.cost_usd.unwrap_or(0.0));
    tx.execute(add).await?;
    Ok(())
}

/// `select` (which ends in a `WHERE` that filters nothing yet) narrowed to `query`'s days and
/// member or team, then `rest` (a `GROUP BY` and `ORDER BY`, say).
fn within(select: &str, query: &SpendQuery, rest: &str) -> Statement {
    statement(format!(
        "{select} day >= $1 AND day < $2 AND ($3::text IS NULL OR member = $3)
           AND ($4::text IS NULL OR team = $4) {rest}"
    ))
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
        let select = format!("SELECT {column}, {SUMS} FROM spend_daily WHERE");
        let rest = format!(
            "GROUP BY {column} ORDER BY SUM(cost_usd) DESC, {column} COLLATE \"C\" LIMIT $5"
        );
        let rows: Vec<KeyedSums> = self.db.all(within(&select, query, &rest).bind(limit)).await?;
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
        let sql = format!("SELECT {SUMS} FROM spend_daily WHERE");
        let whole: Option<Sums> = self.db.optional(within(&sql, query, "")).await?;
        let sql = format!("SELECT day, team, {SUMS} FROM spend_daily WHERE");
        let rest = "GROUP BY day, team ORDER BY day, team COLLATE \"C\"";
        let days: Vec<DaySums> = self.db.all(within(&sql, query, rest)).await?;
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
        let rows: Vec<SpendRowColumns> = self.db.all(within(sql, query, rest)).await?;
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
