//! The Control Center's storage: the providers' integrations (their keys sealed by the server,
//! never held here in the clear), admins' prices over the shipped table, and budgets. What the
//! runs spent is in [`crate::spend`]. [`Control`] is what the storage does with them; each
//! change is recorded in the audit log (without the sealed key).

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::store::StoreError;

/// A connection to a provider, as the library keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Integration {
    /// The provider's name as runs use it (`openai`, or a name of the admin's).
    pub name: String,
    /// For a name llmtool has no preset of: the API it speaks (`openai`, `anthropic`,
    /// `gemini`).
    pub api: Option<String>,
    /// Over the preset's address (an OpenAI-compatible server, a proxy).
    pub base_url: Option<String>,
    /// The key, sealed by the server (`v1.KEY-ID.BASE64`): never sent to a client.
    #[serde(skip)]
    pub sealed_key: Option<String>,
    /// The key's last four characters.
    pub key_hint: Option<String>,
    /// The models runs may use; empty: every model of the provider.
    pub models: Vec<String>,
    pub enabled: bool,
    /// Which models each team may use (empty: all of the integration's); with no team
    /// named, every team may use the integration.
    pub teams: BTreeMap<String, Vec<String>>,
    pub created_at: String,
    pub updated_at: String,
    pub last_test: Option<IntegrationTest>,
    /// For a database or search integration (`api` `postgres`, `sqlite`, `searxng`, `brave`
    /// or `tavily`): the tools it is assigned to, by slug. It serves those tools' runs only
    /// (and, when `teams` names any, only for those teams' members); assigned to none, it
    /// serves none.
    #[serde(default)]
    pub tools: Vec<String>,
}

/// What the last test of an integration found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct IntegrationTest {
    /// RFC 3339, in UTC.
    pub at: String,
    pub ok: bool,
    /// The model's answer, or what went wrong (with no secret in it).
    pub detail: String,
    pub model: String,
    pub latency_ms: u64,
}

/// An admin's price for a model (or, for `*`, a markup on every model), in US dollars per
/// million tokens; what is left out is the shipped table's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PriceOverride {
    /// `provider/model`, or `*` for every model.
    pub model: String,
    pub input: Option<f64>,
    pub cached_input: Option<f64>,
    pub output: Option<f64>,
    pub batch_input: Option<f64>,
    pub batch_output: Option<f64>,
    /// An image model's picture tokens, per million.
    #[serde(default)]
    pub image_output: Option<f64>,
    /// US dollars per picture (not per million), for an image tool's run whose answer counts
    /// no output tokens.
    #[serde(default)]
    pub per_image: Option<f64>,
    /// Added on top of the price, in percent (`15` for 15%).
    pub markup_percent: Option<f64>,
    /// Why: a contract's reference, say.
    pub note: Option<String>,
    #[serde(default)]
    pub updated_at: String,
}

/// Whose spend a budget limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Team,
    Member,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Team => "team",
            Scope::Member => "member",
        }
    }

    pub fn parse(text: &str) -> Option<Scope> {
        match text {
            "team" => Some(Scope::Team),
            "member" => Some(Scope::Member),
            _ => None,
        }
    }
}

/// The span a budget's spend is counted over, in UTC: a day, a week from Monday, a calendar
/// month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Period {
    Day,
    Week,
    Month,
}

impl Period {
    pub fn as_str(self) -> &'static str {
        match self {
            Period::Day => "day",
            Period::Week => "week",
            Period::Month => "month",
        }
    }

    pub fn parse(text: &str) -> Option<Period> {
        match text {
            "day" => Some(Period::Day),
            "week" => Some(Period::Week),
            "month" => Some(Period::Month),
            _ => None,
        }
    }

    /// The first day (`YYYY-MM-DD`) of the period `today` is in.
    pub fn start(self, today: jiff::civil::Date) -> jiff::civil::Date {
        match self {
            Period::Day => today,
            Period::Week => {
                let back = i64::from(today.weekday().to_monday_zero_offset());
                today.checked_sub(jiff::Span::new().days(back)).unwrap_or(today)
            }
            Period::Month => today.first_of_month(),
        }
    }
}

/// A spend limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Budget {
    pub scope: Scope,
    /// The team's name, or the member's e-mail.
    pub name: String,
    pub period: Period,
    pub limit_usd: f64,
    /// The share of the limit past which runs come with a warning (0.8 by default).
    #[serde(default = "default_warning")]
    pub warn_at: f64,
    /// Whether a run that would pass the limit is refused (else it is only warned of).
    #[serde(default = "default_hard")]
    pub hard: bool,
    #[serde(default)]
    pub updated_at: String,
}

fn default_warning() -> f64 {
    0.8
}

fn default_hard() -> bool {
    true
}

/// What the storage does with the Control Center's settings.
#[async_trait]
pub trait Control: Send + Sync {
    /// Every integration, by name.
    async fn integrations(&self) -> Result<Vec<Integration>, StoreError>;
    /// Adds `integration` (`creating`: refused when one of its name exists), or replaces the
    /// one of its name (keeping when it was made); whether it is new.
    async fn put_integration(
        &self,
        integration: &Integration,
        creating: bool,
    ) -> Result<bool, StoreError>;
    async fn remove_integration(&self, name: &str) -> Result<(), StoreError>;
    /// Keeps what the last test of `name` found (not a change: not in the audit log).
    async fn record_integration_test(
        &self,
        name: &str,
        test: &IntegrationTest,
    ) -> Result<(), StoreError>;
    /// Replaces the sealed keys of the integrations named, all or none (a rotation to a new
    /// integration key): `(name, the sealed key it has, the new one)`; refused when a key
    /// changed meanwhile.
    async fn reseal_integrations(
        &self,
        sealed: &[(String, String, String)],
    ) -> Result<(), StoreError>;

    /// Every admin's price, by model (`*` first).
    async fn price_overrides(&self) -> Result<Vec<PriceOverride>, StoreError>;
    async fn set_price_override(&self, price: &PriceOverride) -> Result<(), StoreError>;
    async fn remove_price_override(&self, model: &str) -> Result<(), StoreError>;

    /// Every budget, teams' first, by name.
    async fn budgets(&self) -> Result<Vec<Budget>, StoreError>;
    /// Sets the budget of `budget.scope` and `budget.name` (the team or member must exist).
    async fn set_budget(&self, budget: &Budget) -> Result<(), StoreError>;
    async fn remove_budget(&self, scope: Scope, name: &str) -> Result<(), StoreError>;
}

/// Whether `name` may name an integration: a provider's name as `--provider` takes it
/// (lowercase letters, digits and `-`, a letter first, at most 64 characters).
pub(crate) fn check_integration_name(name: &str) -> Result<(), StoreError> {
    let good = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if good { Ok(()) } else { Err(StoreError::BadIntegration(name.to_owned())) }
}

/// Whether `price` is one: every price a finite amount of at least 0, the markup between -100%
/// and 1000%, and `model` is `provider/model` or `*`.
pub(crate) fn check_price(price: &PriceOverride) -> Result<(), StoreError> {
    let amounts = [
        price.input,
        price.cached_input,
        price.output,
        price.batch_input,
        price.batch_output,
        price.image_output,
        price.per_image,
    ];
    let amounts_ok = amounts.iter().flatten().all(|a| a.is_finite() && *a >= 0.0);
    let markup_ok =
        price.markup_percent.is_none_or(|m| m.is_finite() && (-100.0..=1000.0).contains(&m));
    let model_ok = price.model == "*"
        || price.model.split_once('/').is_some_and(|(p, m)| !p.is_empty() && !m.is_empty())
            && price.model.len() <= 200
            && !price.model.contains(char::is_whitespace);
    let something = amounts.iter().any(Option::is_some) || price.markup_percent.is_some();
    if amounts_ok
        && markup_ok
        && model_ok
        && something
        && (price.model != "*" || amounts.iter().all(Option::is_none))
    {
        Ok(())
    } else {
        Err(StoreError::BadPrice(price.model.clone()))
    }
}

/// Whether `budget` is one: a limit of at least 0, a warning share between 0 and 1.
pub(crate) fn check_budget(budget: &Budget) -> Result<(), StoreError> {
    let good = budget.limit_usd.is_finite()
        && budget.limit_usd >= 0.0
        && budget.warn_at.is_finite()
        && (0.0..=1.0).contains(&budget.warn_at);
    if good { Ok(()) } else { Err(StoreError::BadBudget(budget.name.clone())) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_start_on_the_first_day_monday_and_the_first_of_the_month() {
        let day = jiff::civil::date(2026, 11, 26); // a Thursday
        assert_eq!(Period::Day.start(day), day);
        assert_eq!(Period::Week.start(day), jiff::civil::date(2026, 11, 23));
        assert_eq!(Period::Month.start(day), jiff::civil::date(2026, 11, 1));
        let monday = jiff::civil::date(2026, 11, 23);
        assert_eq!(Period::Week.start(monday), monday);
    }

    #[test]
    fn prices_and_names_are_checked() {
        let price = |model: &str, input: Option<f64>, markup: Option<f64>| PriceOverride {
            model: model.into(),
            input,
            cached_input: None,
            output: None,
            batch_input: None,
            batch_output: None,
            image_output: None,
            per_image: None,
            markup_percent: markup,
            note: None,
            updated_at: String::new(),
        };
        assert!(check_price(&price("openai/gpt-4o", Some(2.0), None)).is_ok());
        assert!(check_price(&price("*", None, Some(10.0))).is_ok());
        assert!(check_price(&price("*", Some(1.0), None)).is_err(), "`*` holds a markup only");
        assert!(check_price(&price("gpt-4o", Some(2.0), None)).is_err());
        assert!(check_price(&price("openai/gpt-4o", Some(-1.0), None)).is_err());
        assert!(check_price(&price("openai/gpt-4o", Some(f64::NAN), None)).is_err());
        assert!(check_price(&price("openai/gpt-4o", None, None)).is_err());
        assert!(check_integration_name("acme-vllm").is_ok());
        for bad in ["", "Acme", "9lives", "a/b", &"x".repeat(65)] {
            assert!(check_integration_name(bad).is_err(), "{bad:?}");
        }
    }
}
