//! [`Control`] for [`SqlStore`]: integrations, prices and budgets, written once over `Db`.
//! Each change is recorded in the audit log in its own transaction; an integration's sealed
//! key never is (what is recorded is its hint, and whether the key changed).

use std::collections::BTreeMap;

use async_trait::async_trait;

use crate::audit;
use crate::control::{
    Budget, Control, Integration, IntegrationTest, Period, PriceOverride, Scope, check_budget,
    check_integration_name, check_price,
};
use crate::db::{Tx, statement};
use crate::people::{check_team, email_key};
use crate::sql_store::SqlStore;
use crate::store::{StoreError, now};

/// An integration's columns: name, api, base URL, sealed key, key hint, models, enabled,
/// created at, updated at, last test.
type IntegrationRow = (
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
    bool,
    String,
    String,
    Option<String>,
    String,
);

const INTEGRATION_COLUMNS: &str = "name, api, base_url, sealed_key, key_hint, models, enabled, \
     created_at, updated_at, last_test, tools";

/// A price's columns ([`PRICE_COLUMNS`]): model, input, cached input, output, batch input,
/// batch output, picture tokens, per picture, markup, note, updated at.
type PriceRow = (
    String,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    Option<String>,
    String,
);

const PRICE_COLUMNS: &str = "model, input, cached_input, output, batch_input, batch_output, \
     image_output, per_image, markup_percent, note, updated_at";

/// A budget's columns: scope, name, period, limit, warning share, hard, updated at.
pub(crate) type BudgetRow = (String, String, String, f64, f64, bool, String);

pub(crate) const BUDGET_COLUMNS: &str = "scope, name, period, limit_usd, warn_at, hard, updated_at";

#[async_trait]
impl Control for SqlStore {
    async fn integrations(&self) -> Result<Vec<Integration>, StoreError> {
        let sql =
            format!("SELECT {INTEGRATION_COLUMNS} FROM integrations ORDER BY name COLLATE \"C\"");
        let rows: Vec<IntegrationRow> = self.db.all(statement(sql)).await?;
        let sql =
            "SELECT integration, team, models FROM integration_teams ORDER BY team COLLATE \"C\"";
        let places: Vec<(String, String, String)> = self.db.all(statement(sql)).await?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let teams = places
                    .iter()
                    .filter(|(integration, ..)| *integration == row.0)
                    .map(|(_, team, models)| (team.clone(), list(models)))
                    .collect();
                integration(row, teams)
            })
            .collect())
    }

    async fn put_integration(
        &self,
        integration: &Integration,
        creating: bool,
    ) -> Result<bool, StoreError> {
        check_integration_name(&integration.name)?;
        let now = now();
        let mut tx = self.db.begin_write().await?;
        tx.lock_people().await?;
        let before = integration_in(&mut tx, &integration.name).await?;
        if creating && before.is_some() {
            return Err(StoreError::IntegrationExists(integration.name.clone()));
        }
        let created_at = before.as_ref().map_or_else(|| now.clone(), |b| b.created_at.clone());
        let put = statement(
            "INSERT INTO integrations (name, api, base_url, sealed_key, key_hint, models, enabled,
                created_at, updated_at, tools)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (name) DO UPDATE SET api = excluded.api, base_url = excluded.base_url,
                sealed_key = excluded.sealed_key, key_hint = excluded.key_hint,
                models = excluded.models, enabled = excluded.enabled,
                updated_at = excluded.updated_at, tools = excluded.tools",
        )
        .bind(&integration.name)
        .bind(integration.api.as_deref())
        .bind(integration.base_url.as_deref())
        .bind(integration.sealed_key.as_deref())
        .bind(integration.key_hint.as_deref())
        .bind(json_list(&integration.models))
        .bind(integration.enabled)
        .bind(&created_at)
        .bind(&now)
        .bind(json_list(&integration.tools));
        tx.execute(put).await?;
        let forget = statement("DELETE FROM integration_teams WHERE integration = $1");
        tx.execute(forget.bind(&integration.name)).await?;
        for (team, models) in &integration.teams {
            check_team(team)?;
            let place = statement(
                "INSERT INTO integration_teams (integration, team, models)
                 SELECT $1, name, $3 FROM teams WHERE name = $2",
            );
            let place = place.bind(&integration.name).bind(team).bind(json_list(models));
            if tx.execute(place).await? == 0 {
                return Err(StoreError::NoSuchTeam(team.clone()));
            }
        }
        let after = integration_in(&mut tx, &integration.name).await?;
        let created = before.is_none();
        let key_changed = before.as_ref().map(|b| &b.sealed_key) != Some(&integration.sealed_key);
        let shown = |integration: &Integration| {
            let mut shown = serde_json::to_value(integration).unwrap_or_default();
            if let Some(shown) = shown.as_object_mut() {
                for moving in ["updated_at", "created_at", "last_test"] {
                    shown.remove(moving);
                }
            }
            shown
        };
        let shown_before = before.as_ref().map(shown);
        let mut shown_after = after.as_ref().map(shown).unwrap_or_default();
        // Saving what was there changes nothing: no record.
        if created || key_changed || shown_before.as_ref() != Some(&shown_after) {
            if let Some(after) = shown_after.as_object_mut() {
                after.insert("key_changed".into(), key_changed.into());
            }
            let action = if created { "integration.add" } else { "integration.edit" };
            let change = audit::Change::new(action, &integration.name).after(shown_after);
            self.record(&mut tx, audit::Change { before: shown_before, ..change }).await?;
        }
        tx.commit().await?;
        Ok(created)
    }

    async fn remove_integration(&self, name: &str) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        let Some(before) = integration_in(&mut tx, name).await? else {
            return Err(StoreError::NoSuchIntegration(name.to_owned()));
        };
        tx.execute(statement("DELETE FROM integration_teams WHERE integration = $1").bind(name))
            .await?;
        tx.execute(statement("DELETE FROM integrations WHERE name = $1").bind(name)).await?;
        let mut shown = serde_json::to_value(&before).unwrap_or_default();
        if let Some(shown) = shown.as_object_mut() {
            shown.remove("last_test");
        }
        self.record(&mut tx, audit::Change::new("integration.remove", name).before(shown)).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn record_integration_test(
        &self,
        name: &str,
        test: &IntegrationTest,
    ) -> Result<(), StoreError> {
        let keep = statement("UPDATE integrations SET last_test = $1 WHERE name = $2");
        let found = serde_json::to_string(test).unwrap_or_default();
        if self.db.execute(keep.bind(found).bind(name)).await? == 0 {
            return Err(StoreError::NoSuchIntegration(name.to_owned()));
        }
        Ok(())
    }

    async fn reseal_integrations(
        &self,
        sealed: &[(String, String, String)],
    ) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        for (name, old, new) in sealed {
            let reseal = statement(
                "UPDATE integrations SET sealed_key = $1 WHERE name = $2 AND sealed_key = $3",
            );
            if tx.execute(reseal.bind(new).bind(name).bind(old)).await? == 0 {
                return Err(StoreError::KeyChanged(name.clone()));
            }
        }
        let names: Vec<&String> = sealed.iter().map(|(name, ..)| name).collect();
        let change = audit::Change::new("integration.rotate", "*")
            .after(serde_json::json!({"resealed": names}));
        self.record(&mut tx, change).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn price_overrides(&self) -> Result<Vec<PriceOverride>, StoreError> {
        let sql = format!("SELECT {PRICE_COLUMNS} FROM prices ORDER BY model COLLATE \"C\"");
        let rows: Vec<PriceRow> = self.db.all(statement(sql)).await?;
        Ok(rows.into_iter().map(price).collect())
    }

    async fn set_price_override(&self, price_override: &PriceOverride) -> Result<(), StoreError> {
        check_price(price_override)?;
        let mut tx = self.db.begin_write().await?;
        let before = price_in(&mut tx, &price_override.model).await?;
        let set = statement(
            "INSERT INTO prices (model, input, cached_input, output, batch_input, batch_output,
                image_output, per_image, markup_percent, note, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
             ON CONFLICT (model) DO UPDATE SET input = excluded.input,
                cached_input = excluded.cached_input, output = excluded.output,
                batch_input = excluded.batch_input, batch_output = excluded.batch_output,
                image_output = excluded.image_output, per_image = excluded.per_image,
                markup_percent = excluded.markup_percent, note = excluded.note,
                updated_at = excluded.updated_at",
        )
        .bind(&price_override.model)
        .bind(price_override.input)
        .bind(price_override.cached_input)
        .bind(price_override.output)
        .bind(price_override.batch_input)
        .bind(price_override.batch_output)
        .bind(price_override.image_output)
        .bind(price_override.per_image)
        .bind(price_override.markup_percent)
        .bind(price_override.note.as_deref())
        .bind(now());
        tx.execute(set).await?;
        let after = price_in(&mut tx, &price_override.model).await?;
        let shown = |price: Option<PriceOverride>| {
            price.map(|price| {
                let mut shown = serde_json::to_value(price).unwrap_or_default();
                if let Some(shown) = shown.as_object_mut() {
                    shown.remove("updated_at");
                }
                shown
            })
        };
        let (before, after) = (shown(before), shown(after));
        if before != after {
            let change = audit::Change::new("price.set", &price_override.model);
            self.record(&mut tx, audit::Change { before, after, ..change }).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn remove_price_override(&self, model: &str) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        let Some(before) = price_in(&mut tx, model).await? else {
            return Err(StoreError::NoSuchPrice(model.to_owned()));
        };
        tx.execute(statement("DELETE FROM prices WHERE model = $1").bind(model)).await?;
        let before = serde_json::to_value(before).unwrap_or_default();
        self.record(&mut tx, audit::Change::new("price.remove", model).before(before)).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn budgets(&self) -> Result<Vec<Budget>, StoreError> {
        let sql =
            format!("SELECT {BUDGET_COLUMNS} FROM budgets ORDER BY scope DESC, name COLLATE \"C\"");
        let rows: Vec<BudgetRow> = self.db.all(statement(sql)).await?;
        Ok(rows.into_iter().filter_map(budget).collect())
    }

    async fn set_budget(&self, new: &Budget) -> Result<(), StoreError> {
        check_budget(new)?;
        let name = match new.scope {
            Scope::Team => new.name.clone(),
            Scope::Member => email_key(&new.name)?,
        };
        let mut tx = self.db.begin_write().await?;
        let exists = match new.scope {
            Scope::Team => statement("SELECT COUNT(*) FROM teams WHERE name = $1"),
            Scope::Member => statement("SELECT COUNT(*) FROM members WHERE email = $1"),
        };
        let (exists,): (i64,) = tx.optional(exists.bind(&name)).await?.unwrap_or((0,));
        if exists == 0 {
            return Err(match new.scope {
                Scope::Team => StoreError::NoSuchTeam(name),
                Scope::Member => StoreError::NoSuchMember(name),
            });
        }
        let before = budget_in(&mut tx, new.scope, &name).await?;
        let set = statement(
            "INSERT INTO budgets (scope, name, period, limit_usd, warn_at, hard, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (scope, name) DO UPDATE SET period = excluded.period,
                limit_usd = excluded.limit_usd, warn_at = excluded.warn_at, hard = excluded.hard,
                updated_at = excluded.updated_at",
        )
        .bind(new.scope.as_str())
        .bind(&name)
        .bind(new.period.as_str())
        .bind(new.limit_usd)
        .bind(new.warn_at)
        .bind(new.hard)
        .bind(now());
        tx.execute(set).await?;
        let after = budget_in(&mut tx, new.scope, &name).await?;
        let target = format!("{}:{name}", new.scope.as_str());
        let (before, after) = (before.as_ref().map(shown_budget), after.as_ref().map(shown_budget));
        if before != after {
            let change = audit::Change::new("budget.set", target);
            self.record(&mut tx, audit::Change { before, after, ..change }).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn remove_budget(&self, scope: Scope, name: &str) -> Result<(), StoreError> {
        let name = match scope {
            Scope::Team => name.to_owned(),
            Scope::Member => email_key(name)?,
        };
        let mut tx = self.db.begin_write().await?;
        let Some(before) = budget_in(&mut tx, scope, &name).await? else {
            return Err(StoreError::NoSuchBudget(format!("{}:{name}", scope.as_str())));
        };
        let remove = statement("DELETE FROM budgets WHERE scope = $1 AND name = $2");
        tx.execute(remove.bind(scope.as_str()).bind(&name)).await?;
        let target = format!("{}:{name}", scope.as_str());
        let change = audit::Change::new("budget.remove", target).before(shown_budget(&before));
        self.record(&mut tx, change).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// The integration `name` as `tx` sees it, if there is one.
async fn integration_in(tx: &mut Tx, name: &str) -> Result<Option<Integration>, StoreError> {
    let sql = format!("SELECT {INTEGRATION_COLUMNS} FROM integrations WHERE name = $1");
    let Some(row) = tx.optional::<IntegrationRow>(statement(sql).bind(name)).await? else {
        return Ok(None);
    };
    let sql = "SELECT team, models FROM integration_teams WHERE integration = $1";
    let places: Vec<(String, String)> = tx.all(statement(sql).bind(name)).await?;
    let teams = places.into_iter().map(|(team, models)| (team, list(&models))).collect();
    Ok(Some(integration(row, teams)))
}

async fn price_in(tx: &mut Tx, model: &str) -> Result<Option<PriceOverride>, StoreError> {
    let sql = format!("SELECT {PRICE_COLUMNS} FROM prices WHERE model = $1");
    Ok(tx.optional::<PriceRow>(statement(sql).bind(model)).await?.map(price))
}

pub(crate) async fn budget_in(
    tx: &mut Tx,
    scope: Scope,
    name: &str,
) -> Result<Option<Budget>, StoreError> {
    let sql = format!("SELECT {BUDGET_COLUMNS} FROM budgets WHERE scope = $1 AND name = $2");
    let found: Option<BudgetRow> =
        tx.optional(statement(sql).bind(scope.as_str()).bind(name)).await?;
    Ok(found.and_then(budget))
}

fn integration(row: IntegrationRow, teams: BTreeMap<String, Vec<String>>) -> Integration {
    let (
        name,
        api,
        base_url,
        sealed_key,
        key_hint,
        models,
        enabled,
        created_at,
        updated_at,
        test,
        tools,
    ) = row;
    Integration {
        name,
        api,
        base_url,
        sealed_key,
        key_hint,
        models: list(&models),
        enabled,
        teams,
        created_at,
        updated_at,
        last_test: test.and_then(|test| serde_json::from_str(&test).ok()),
        tools: list(&tools),
    }
}

fn price(row: PriceRow) -> PriceOverride {
    let (model, input, cached_input, output, batch_input, batch_output, image_output, per_image) =
        (row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7);
    let (markup, note, updated_at) = (row.8, row.9, row.10);
    PriceOverride {
        model,
        input,
        cached_input,
        output,
        batch_input,
        batch_output,
        image_output,
        per_image,
        markup_percent: markup,
        note,
        updated_at,
    }
}

pub(crate) fn budget(row: BudgetRow) -> Option<Budget> {
    let (scope, name, period, limit_usd, warn_at, hard, updated_at) = row;
    Some(Budget {
        scope: Scope::parse(&scope)?,
        name,
        period: Period::parse(&period)?,
        limit_usd,
        warn_at,
        hard,
        updated_at,
    })
}

pub(crate) fn shown_budget(budget: &Budget) -> serde_json::Value {
    serde_json::json!({
        "period": budget.period, "limit_usd": budget.limit_usd, "warn_at": budget.warn_at,
        "hard": budget.hard,
    })
}

/// A JSON array of text, kept in a text column.
fn json_list(items: &[String]) -> String {
    serde_json::Value::from(items.to_vec()).to_string()
}

fn list(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}
