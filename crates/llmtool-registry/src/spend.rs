//! What the library's runs spent, and the budgets that bound it. Every kept run is charged to
//! a member and a team ([`Charge`]) and totalled by day, team, member, tool and model in the
//! run's own transaction, so that the spend pages and the budget checks read totals, never the
//! runs. A run about to be sent first reserves its worst-case cost ([`Spending::reserve`]):
//! the reservation counts against its budgets until the run is kept, which releases it.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::control::Budget;
use crate::store::StoreError;

/// Whom a run is charged to: a member (their e-mail) and one of their teams; `""` for none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Charge {
    pub member: String,
    pub team: String,
}

/// Which runs to total: the days from `from` up to but not including `to` (`YYYY-MM-DD`, UTC),
/// of one member or one team if given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpendQuery {
    pub from: String,
    pub to: String,
    pub member: Option<String>,
    pub team: Option<String>,
}

/// Runs, tokens and cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SpendTotals {
    pub runs: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
}

/// The totals of one team, member, tool or model (`""`: runs charged to none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SpendLine {
    pub key: String,
    #[serde(flatten)]
    pub totals: SpendTotals,
}

/// The totals of one team on one day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DaySpend {
    pub day: String,
    pub team: String,
    #[serde(flatten)]
    pub totals: SpendTotals,
}

/// What the runs of a period spent, whole and by day and team, team, member, tool and model
/// (largest cost first; by day, in date order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SpendReport {
    pub from: String,
    pub to: String,
    pub totals: SpendTotals,
    pub by_day: Vec<DaySpend>,
    pub by_team: Vec<SpendLine>,
    pub by_member: Vec<SpendLine>,
    pub by_tool: Vec<SpendLine>,
    pub by_model: Vec<SpendLine>,
}

/// One line of the spend's CSV: a day's runs of one tool on one model by one member for one
/// team.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpendRow {
    pub day: String,
    pub team: String,
    pub member: String,
    pub tool: String,
    pub model: String,
    #[serde(flatten)]
    pub totals: SpendTotals,
}

/// A budget and where its period stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BudgetStatus {
    pub budget: Budget,
    /// The first day of the current period (`YYYY-MM-DD`).
    pub period_start: String,
    /// What the period's kept runs cost.
    pub spent_usd: f64,
    /// What the runs in flight hold.
    pub reserved_usd: f64,
}

impl BudgetStatus {
    /// The share of the limit spent and held (1 and over: reached).
    pub fn share(&self) -> f64 {
        if self.budget.limit_usd > 0.0 {
            (self.spent_usd + self.reserved_usd) / self.budget.limit_usd
        } else if self.spent_usd + self.reserved_usd > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    }
}

/// A run's reservation, and the budgets it passed the warning share of.
#[derive(Debug, Clone, PartialEq)]
pub struct Reserved {
    pub id: i64,
    pub warnings: Vec<BudgetStatus>,
}

/// A run refused by a hard budget: the budget, where it stands, and what the run would add.
#[derive(Debug, Clone, PartialEq)]
pub struct OverBudget {
    pub status: BudgetStatus,
    pub cost_usd: f64,
}

/// What the storage does with the runs' spend.
#[async_trait]
pub trait Spending: Send + Sync {
    /// The totals `query` asks for.
    async fn spend(&self, query: &SpendQuery) -> Result<SpendReport, StoreError>;
    /// The day-by-day lines of `query`'s runs, by day, team, member, tool and model.
    async fn spend_rows(&self, query: &SpendQuery) -> Result<Vec<SpendRow>, StoreError>;
    /// Every budget and where its current period stands, on `today` (`YYYY-MM-DD`).
    async fn budget_statuses(&self, today: &str) -> Result<Vec<BudgetStatus>, StoreError>;
    /// Holds `cost_usd` for a run charged to `charge` for `lifetime`, unless it would pass a
    /// hard budget of the member's or the team's ([`StoreError::OverBudget`]); checks and holds
    /// take turns, so that two runs cannot both take the last of a budget.
    async fn reserve(
        &self,
        charge: &Charge,
        cost_usd: f64,
        lifetime: std::time::Duration,
    ) -> Result<Reserved, StoreError>;
    /// Lets a reservation go (a run that was never sent).
    async fn release(&self, reservation: i64) -> Result<(), StoreError>;
}

/// US dollars in a message: cents, or six decimals below a dollar.
pub(crate) fn usd(amount: f64) -> String {
    if amount.abs() >= 1.0 || amount == 0.0 {
        format!("${amount:.2}")
    } else {
        format!("${amount:.6}")
    }
}
