//! Anthropic Message Batches: the requests posted as one JSON body, the batch polled until
//! its processing has ended, then its results read from the URL it gives.

use serde_json::{Value, json};

use super::wire::{Body, Call};
use super::{Answer, BatchClient, BatchStatus, ItemResult, RESULTS_LIMIT, Results, count};
use crate::error::ProviderError;

pub(super) fn encode(custom_id: &str, body: &Value) -> String {
    json!({ "custom_id": custom_id, "params": body }).to_string()
}

pub(super) async fn submit(
    client: &BatchClient<'_>,
    encoded: &[String],
) -> Result<String, ProviderError> {
    let body = format!("{{\"requests\":[{}]}}", encoded.join(","));
    let url = client.endpoint.url("v1/messages/batches");
    let created =
        client.send_json(&Call::post(url, &client.headers(), Body::Encoded(body), false)).await?;
    created["id"].as_str().map(str::to_owned).ok_or_else(|| {
        ProviderError::MalformedStream(format!(
            "{} answered without an id",
            client.endpoint.display
        ))
    })
}

pub(super) async fn status(
    client: &BatchClient<'_>,
    id: &str,
) -> Result<BatchStatus, ProviderError> {
    let url = client.endpoint.url(&format!("v1/messages/batches/{id}"));
    let batch =
        client.send_json(&Call::get(url, &client.headers(), super::wire::STATUS_LIMIT)).await?;
    Ok(parse_status(id, &batch))
}

/// A `MessageBatch` object as a [`BatchStatus`].
pub(super) fn parse_status(id: &str, batch: &Value) -> BatchStatus {
    let status = batch["processing_status"].as_str().unwrap_or("unknown").to_owned();
    let counts = &batch["request_counts"];
    let of = |name: &str| count(&counts[name]);
    let names = ["processing", "succeeded", "errored", "canceled", "expired"];
    let total = names.iter().map(|name| of(name)).sum::<Option<u64>>();
    let failed =
        ["errored", "canceled", "expired"].iter().map(|name| of(name)).sum::<Option<u64>>();
    let results = match batch["results_url"].as_str() {
        Some(url) => Results::Url(url.to_owned()),
        None => Results::None,
    };
    BatchStatus {
        id: id.to_owned(),
        ended: status == "ended",
        total,
        succeeded: of("succeeded"),
        failed,
        error: None,
        results,
        status,
    }
}

/// The results file; its URL is the provider's own, so it is only followed when it is on
/// the provider's host (the key goes with it).
pub(super) async fn download(client: &BatchClient<'_>, url: &str) -> Result<String, ProviderError> {
    let base = reqwest::Url::parse(&client.endpoint.base_url).ok().map(|u| u.origin());
    let there = reqwest::Url::parse(url).ok().map(|u| u.origin());
    if base.is_none() || base != there {
        return Err(ProviderError::MalformedStream(format!(
            "{} gave results on another host ({}); not fetched, so that the key is not sent there",
            client.endpoint.display,
            there.map_or_else(|| "an unreadable URL".to_owned(), |o| o.ascii_serialization())
        )));
    }
    client.send(&Call::get(url.to_owned(), &client.headers(), RESULTS_LIMIT)).await
}

/// The lines of a results file.
pub(super) fn results(
    text: &str,
    decode: &dyn Fn(&Value) -> Result<Answer, String>,
) -> Vec<ItemResult> {
    let mut results = Vec::new();
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let Ok(item) = serde_json::from_str::<Value>(line) else { continue };
        let Some(custom_id) = item["custom_id"].as_str() else { continue };
        let result = &item["result"];
        let answer = match result["type"].as_str() {
            Some("succeeded") => decode(&result["message"]),
            Some("errored") => {
                let error = &result["error"]["error"];
                Err(format!(
                    "{}: {}",
                    error["type"].as_str().unwrap_or("error"),
                    error["message"].as_str().unwrap_or("no answer")
                ))
            }
            Some("canceled") => Err("the batch was cancelled before this request ran".to_owned()),
            Some("expired") => Err("the batch expired before this request ran".to_owned()),
            other => Err(format!("an unknown result ({})", other.unwrap_or("none"))),
        };
        results.push(ItemResult { custom_id: custom_id.to_owned(), answer });
    }
    results
}

pub(super) async fn cancel(client: &BatchClient<'_>, id: &str) -> Result<(), ProviderError> {
    let url = client.endpoint.url(&format!("v1/messages/batches/{id}/cancel"));
    client.send(&Call::post(url, &client.headers(), Body::Empty, true)).await.map(|_| ())
}
