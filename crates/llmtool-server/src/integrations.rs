//! What the server's runs may use, from the Control Center: the providers of the enabled
//! integrations (their keys opened from the keyring), admins' prices over the table, and the
//! gate that lets a run through only to an enabled integration's models, and to the models its
//! caller's teams may use. A library with no integration yet runs on the server's own
//! configuration (its environment's keys), as before integrations existed.

use std::collections::BTreeMap;

use llmtool_config::{ApiName, Env, Price, ProviderConfig};
use llmtool_providers::resolve::Providers;
use llmtool_registry::{Integration, PriceOverride, Role};

use crate::keyring::Keyring;

/// The APIs an integration of the admin's own name may speak.
pub(crate) const APIS: [&str; 3] = ["openai", "anthropic", "gemini"];

/// The kinds of database and search integrations (a tool's functions use them; runs on a
/// model never do).
pub(crate) const DATA_APIS: [&str; 5] = ["postgres", "sqlite", "searxng", "brave", "tavily"];

/// Whether `integration` is a database or search integration, not a model provider's.
pub(crate) fn is_data(integration: &Integration) -> bool {
    integration.api.as_deref().is_some_and(|api| DATA_APIS.contains(&api))
}

/// The model providers' integrations of `integrations`.
pub(crate) fn of_models(integrations: Vec<Integration>) -> Vec<Integration> {
    integrations.into_iter().filter(|integration| !is_data(integration)).collect()
}

/// What a sealed key is bound to: the integration's name, API and address. A key sealed for
/// one server does not open for another, so pointing an integration elsewhere takes its key
/// again (nobody can send a key to a host of their choosing without knowing it).
pub(crate) fn key_context(integration: &Integration) -> String {
    format!(
        "{}\n{}\n{}",
        integration.name,
        integration.api.as_deref().unwrap_or_default(),
        integration.base_url.as_deref().unwrap_or_default()
    )
}

/// The providers of the server's runs: `base` (the server's configuration), with the enabled
/// `integrations` in place of its providers when there are any integrations, and `prices` over
/// its prices. An integration whose key does not open is left out, with why.
pub(crate) fn providers(
    base: &Providers,
    integrations: &[Integration],
    prices: &[PriceOverride],
    keyring: Option<&Keyring>,
) -> (Providers, Vec<String>) {
    let mut config = base.config.clone();
    let mut env = base.env.clone();
    let mut problems = Vec::new();
    if !integrations.is_empty() {
        // Only what the admins set up: no key of the server's environment is used.
        config.providers = BTreeMap::new();
        let mut keys: Vec<(String, String)> = Vec::new();
        for (number, integration) in integrations.iter().filter(|i| i.enabled).enumerate() {
            let variable = format!("LLMTOOL_INTEGRATION_KEY_{number}");
            let key = match (&integration.sealed_key, keyring) {
                (None, _) => None,
                (Some(sealed), Some(keyring)) => match keyring
                    .open(sealed, &key_context(integration))
                {
                    Ok(key) => Some(key),
                    Err(error) => {
                        problems.push(format!("the integration `{}`: {error}", integration.name));
                        continue;
                    }
                },
                (Some(_), None) => {
                    problems.push(format!(
                        "the integration `{}` has a key, and the server no integration keys to open it",
                        integration.name
                    ));
                    continue;
                }
            };
            let provider = ProviderConfig {
                api: integration.api.as_deref().and_then(api_name),
                base_url: integration.base_url.clone(),
                api_key_env: key.as_ref().map(|_| variable.clone()),
                default_model: integration.models.first().cloned(),
                models: integration.models.clone(),
                ..ProviderConfig::default()
            };
            config.providers.insert(integration.name.clone(), provider);
            if let Some(key) = key {
                keys.push((variable, key.as_str().to_owned()));
            }
        }
        env = Env::from_pairs(keys.iter().map(|(name, value)| (name.as_str(), value.as_str())));
        for variable in ["LLMTOOL_TOKEN", "LLMTOOL_MCP_TOKEN"] {
            if let Some(value) = base.env.get(variable) {
                env = env.with(variable, value);
            }
        }
    }
    let table = base.price_table();
    for price in prices {
        if price.model == "*" {
            config.markup_percent = price.markup_percent;
            continue;
        }
        let Some((provider, model)) = price.model.split_once('/') else { continue };
        let shipped = table.lookup(provider, model).map(|entry| entry.price).unwrap_or_default();
        let million = |per_token: f64| per_token * 1_000_000.0;
        let per_million = |given: Option<f64>, shipped: Option<f64>| given.or(shipped.map(million));
        config.prices.insert(
            price.model.clone(),
            Price {
                input: price.input.unwrap_or(million(shipped.input)),
                output: price.output.unwrap_or(million(shipped.output)),
                cached_input: per_million(price.cached_input, shipped.cached_input),
                cache_write: shipped.cache_write.map(million),
                reasoning: shipped.reasoning.map(million),
                batch_input: per_million(price.batch_input, shipped.batch_input),
                batch_output: per_million(price.batch_output, shipped.batch_output),
                max_input: shipped.max_input,
                markup_percent: price.markup_percent,
                image_output: per_million(price.image_output, shipped.image_output),
                per_image: price.per_image.or(shipped.per_image),
            },
        );
    }
    (Providers::new(config, env), problems)
}

fn api_name(api: &str) -> Option<ApiName> {
    match api {
        "openai" => Some(ApiName::Openai),
        "anthropic" => Some(ApiName::Anthropic),
        "gemini" => Some(ApiName::Gemini),
        _ => None,
    }
}

/// Whether a run on `provider`'s `model` may go, for a caller of `role` in `teams`, under
/// `integrations` (none: the server's own configuration decides, as before).
pub(crate) fn gate(
    integrations: &[Integration],
    provider: &str,
    model: &str,
    role: Role,
    teams: &[String],
) -> Result<(), String> {
    if integrations.is_empty() {
        return Ok(());
    }
    let Some(integration) = integrations.iter().find(|i| i.name == provider && i.enabled) else {
        return Err(format!(
            "`{provider}` is not an enabled integration of this library: an admin adds it in the Control Center (or `llmtool integration add`)"
        ));
    };
    let listed = |models: &[String]| models.is_empty() || models.iter().any(|m| m == model);
    if !listed(&integration.models) {
        return Err(format!(
            "the integration `{provider}` does not offer `{model}`: it offers {}",
            integration.models.join(", ")
        ));
    }
    if integration.teams.is_empty() || role >= Role::Admin {
        return Ok(());
    }
    let allowed =
        teams.iter().filter_map(|team| integration.teams.get(team)).any(|models| listed(models));
    if allowed {
        Ok(())
    } else {
        Err(format!("none of your teams may use `{model}` of the integration `{provider}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn integration(name: &str, models: &[&str], teams: &[(&str, &[&str])]) -> Integration {
        Integration {
            name: name.into(),
            api: None,
            base_url: None,
            sealed_key: None,
            key_hint: None,
            models: models.iter().map(|m| (*m).to_owned()).collect(),
            enabled: true,
            teams: teams
                .iter()
                .map(|(t, ms)| ((*t).to_owned(), ms.iter().map(|m| (*m).to_owned()).collect()))
                .collect(),
            created_at: String::new(),
            updated_at: String::new(),
            last_test: None,
            tools: Vec::new(),
        }
    }

    #[test]
    fn the_gate_lets_through_enabled_models_for_the_teams_that_may_use_them() {
        let sales = vec!["sales".to_owned()];
        assert!(gate(&[], "anthropic", "claude", Role::Viewer, &[]).is_ok(), "no integrations");
        let open = [integration("openai", &["gpt-4o-mini"], &[])];
        assert!(gate(&open, "openai", "gpt-4o-mini", Role::Viewer, &[]).is_ok());
        assert!(gate(&open, "openai", "gpt-4o", Role::Viewer, &[]).is_err());
        assert!(gate(&open, "anthropic", "claude", Role::Owner, &[]).is_err());
        let curated = [integration("openai", &[], &[("sales", &["gpt-4o"]), ("ops", &[])])];
        assert!(gate(&curated, "openai", "gpt-4o", Role::Viewer, &sales).is_ok());
        assert!(gate(&curated, "openai", "o3", Role::Viewer, &sales).is_err());
        assert!(gate(&curated, "openai", "o3", Role::Viewer, &["ops".to_owned()]).is_ok());
        assert!(gate(&curated, "openai", "o3", Role::Viewer, &[]).is_err());
        assert!(gate(&curated, "openai", "o3", Role::Admin, &[]).is_ok());
        let mut off = integration("openai", &[], &[]);
        off.enabled = false;
        assert!(gate(&[off], "openai", "gpt-4o", Role::Owner, &[]).is_err());
    }

    #[test]
    fn integrations_replace_the_servers_providers_and_their_keys_open() {
        let base = Providers::new(
            llmtool_config::Config::default(),
            Env::from_pairs([("ANTHROPIC_API_KEY", "server-key")]),
        );
        let keyring = Keyring::parse(&Keyring::new_key()).unwrap();
        let mut mock = integration("mock", &["m1"], &[]);
        mock.api = Some("openai".into());
        mock.base_url = Some("http://127.0.0.1:9/v1".into());
        mock.sealed_key = Some(keyring.seal("sk-mock-0123456789", &key_context(&mock)));
        let mut moved = integration("elsewhere", &[], &[]);
        moved.api = Some("openai".into());
        moved.base_url = Some("http://127.0.0.1:9/v1".into());
        moved.sealed_key = mock.sealed_key.clone();
        let mut elsewhere = mock.clone();
        elsewhere.base_url = Some("http://203.0.113.9/v1".into());
        let (providers, problems) =
            providers(&base, &[mock, moved, elsewhere], &[], Some(&keyring));
        assert_eq!(
            problems.len(),
            2,
            "a sealed key opens for its own integration and address only"
        );
        let endpoint = providers.endpoint("mock").unwrap();
        assert_eq!(endpoint.api_key.as_deref(), Some("sk-mock-0123456789"));
        assert!(providers.endpoint("anthropic").is_err(), "the server's own key is not used");
        assert!(providers.endpoint("elsewhere").is_err());
    }

    #[test]
    fn admins_prices_go_over_the_table_with_their_markup() {
        let base = Providers::default();
        let table = base.price_table();
        let shipped = table.lookup("openai", "gpt-4o-mini").unwrap().price;
        let prices = [
            PriceOverride {
                model: "openai/gpt-4o-mini".into(),
                input: Some(0.1),
                cached_input: None,
                output: None,
                batch_input: None,
                batch_output: None,
                image_output: None,
                per_image: None,
                markup_percent: None,
                note: None,
                updated_at: String::new(),
            },
            PriceOverride {
                model: "*".into(),
                input: None,
                cached_input: None,
                output: None,
                batch_input: None,
                batch_output: None,
                image_output: None,
                per_image: None,
                markup_percent: Some(20.0),
                note: None,
                updated_at: String::new(),
            },
        ];
        let (providers, _) = providers(&base, &[], &prices, None);
        let table = providers.price_table();
        let negotiated = table.lookup("openai", "gpt-4o-mini").unwrap().price;
        assert!((negotiated.input - 0.1e-6 * 1.2).abs() < 1e-15, "{negotiated:?}");
        assert!((negotiated.output - shipped.output * 1.2).abs() < 1e-15);
        let other = table.lookup("openai", "gpt-4o").unwrap();
        assert!(other.source.ends_with("+ 20% markup"), "{}", other.source);
        // An image model priced by the picture, where the table has no price for it.
        let pictures = [PriceOverride {
            model: "openai/dall-e-3".into(),
            per_image: Some(0.04),
            ..prices[0].clone()
        }];
        let (by_picture, _) = super::providers(&base, &[], &pictures, None);
        let dall_e = by_picture.price_table().lookup("openai", "dall-e-3").unwrap().price;
        assert_eq!(dall_e.per_image, Some(0.04));
    }
}
