//! The batch engines' clients against the testkit's mocks of the three APIs: requests
//! submitted, followed to their end and answered by id (errors and all), calls that fail
//! now and then retried (but a batch never created twice), a batch past its window, and
//! cancelling.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::collections::HashMap;
use std::time::Duration;

use llmtool_providers::batch_api::{BatchClient, BatchStatus};
use llmtool_providers::transport::{RetryPolicy, Timeouts, Transport};
use llmtool_providers::{
    ApiKind, ChatRequest, Constraint, Endpoint, Features, Message, Params, ProviderError,
};
use llmtool_testkit::batches::BatchMock;

const KEY: &str = "sk-batch-secret-77aa";

fn endpoint(mock: &BatchMock, api: ApiKind) -> Endpoint {
    let base_url = match api {
        ApiKind::OpenAi => format!("{}/v1", mock.url),
        _ => mock.url.clone(),
    };
    Endpoint {
        provider: "mock".into(),
        display: "Mock".into(),
        api,
        base_url,
        api_key: Some(KEY.into()),
        key_variable: None,
        features: Features::OPENAI,
        vertex_path: None,
    }
}

fn transport() -> Transport {
    let retry = RetryPolicy {
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
        ..RetryPolicy::default()
    };
    Transport::new(Timeouts::default(), retry).unwrap()
}

fn request(prompt: &str, constraint: Constraint) -> ChatRequest {
    ChatRequest {
        model: "m-1".into(),
        messages: vec![Message::user(prompt)],
        params: Params { max_tokens: Some(64), ..Params::default() },
        constraint,
        stream: true,
        cache: false,
        cache_key: None,
        functions: Vec::new(),
    }
}

async fn until_ended(client: &BatchClient<'_>, id: &str) -> BatchStatus {
    for _ in 0..20 {
        let status = client.status(id).await.unwrap();
        if status.ended {
            return status;
        }
    }
    panic!("batch {id} never ended");
}

const APIS: [ApiKind; 3] = [ApiKind::OpenAi, ApiKind::Anthropic, ApiKind::Gemini];

#[tokio::test]
async fn each_api_answers_every_request_by_its_id() {
    for api in APIS {
        let mock = BatchMock::start(1).await;
        let (endpoint, transport) = (endpoint(&mock, api), transport());
        let client = BatchClient::new(&transport, &endpoint).unwrap();
        let prompts = [("row-1", "Say <<yes>>"), ("row-2", "please FAIL"), ("row-3", "plain")];
        let encoded: Vec<String> = prompts
            .iter()
            .map(|(id, prompt)| client.encode(id, &request(prompt, Constraint::None)))
            .collect();
        let id = client.submit(&encoded, "m-1", "llmtool-test").await.unwrap();
        let status = until_ended(&client, &id).await;
        assert_eq!(status.total, Some(3), "{api:?}: {status:?}");
        assert_eq!(status.error, None);
        let sample = request("", Constraint::None);
        let results: HashMap<String, _> = client
            .results(&status, &sample)
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.custom_id, r.answer))
            .collect();
        assert_eq!(results.len(), 3, "{api:?}");
        let yes = results["row-1"].as_ref().unwrap();
        assert_eq!(yes.text, "yes", "{api:?}");
        assert_eq!((yes.usage.input_tokens, yes.usage.output_tokens), (Some(1000), Some(500)));
        assert_eq!(results["row-3"].as_ref().unwrap().text, "A line.");
        let failed = results["row-2"].as_ref().unwrap_err();
        assert!(failed.contains("the prompt asked to fail"), "{api:?}: {failed}");
        // Every call carried the key, never in a URL.
        assert!(mock.seen().iter().all(|call| !call.contains(KEY)));
    }
}

#[tokio::test]
async fn an_answer_of_one_of_a_set_is_unwrapped_as_a_request_s_own() {
    for api in APIS {
        let mock = BatchMock::start(0).await;
        let (endpoint, transport) = (endpoint(&mock, api), transport());
        let client = BatchClient::new(&transport, &endpoint).unwrap();
        let limited = Constraint::OneOf(vec!["positive".into(), "negative".into()]);
        let encoded = [client.encode("a", &request("Is it <<positive>>?", limited.clone()))];
        let id = client.submit(&encoded, "m-1", "label").await.unwrap();
        let status = until_ended(&client, &id).await;
        let results = client.results(&status, &request("", limited)).await.unwrap();
        assert_eq!(results[0].answer.as_ref().unwrap().text, "positive", "{api:?}");
    }
}

#[tokio::test]
async fn failing_polls_are_retried_but_a_batch_is_never_created_twice() {
    for api in APIS {
        let mock = BatchMock::start(0).await;
        let (endpoint, transport) = (endpoint(&mock, api), transport());
        let client = BatchClient::new(&transport, &endpoint).unwrap();
        let encoded = [client.encode("a", &request("hello", Constraint::None))];
        // The creating call fails once: it may have been taken, so it is not sent again.
        let creates = |mock: &BatchMock| {
            mock.seen().iter().filter(|c| c.starts_with("POST") && !c.contains("files")).count()
        };
        if api == ApiKind::OpenAi {
            // The upload before it is sent again; the creation is not.
            mock.fail_next(1);
            let id = client.submit(&encoded, "m-1", "label").await.unwrap();
            assert!(id.starts_with("batch_"));
            assert_eq!(mock.seen().iter().filter(|c| *c == "POST /v1/files").count(), 2);
        }
        let before = creates(&mock);
        mock.fail_next_to("batch", 1);
        let refused = client.submit(&encoded, "m-1", "label").await.unwrap_err();
        assert!(matches!(refused, ProviderError::Server { status: 500, .. }), "{api:?}: {refused}");
        assert_eq!(creates(&mock), before + 1, "{api:?}: {:?}", mock.seen());
        // Polls and downloads are sent again.
        let id = client.submit(&encoded, "m-1", "label").await.unwrap();
        mock.fail_next(2);
        let status = until_ended(&client, &id).await;
        mock.fail_next(2);
        let results = client.results(&status, &request("", Constraint::None)).await.unwrap();
        assert_eq!(results.len(), 1, "{api:?}");
    }
}

#[tokio::test]
async fn an_expired_or_cancelled_batch_ends_without_answers() {
    for api in APIS {
        let mock = BatchMock::start(1).await;
        let (endpoint, transport) = (endpoint(&mock, api), transport());
        let client = BatchClient::new(&transport, &endpoint).unwrap();
        let encoded = [client.encode("a", &request("hello", Constraint::None))];
        let sample = request("", Constraint::None);

        mock.expire();
        let id = client.submit(&encoded, "m-1", "label").await.unwrap();
        let status = until_ended(&client, &id).await;
        let answered: Vec<_> = client
            .results(&status, &sample)
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.answer.is_ok())
            .collect();
        assert!(answered.is_empty(), "{api:?}: {status:?}");

        let id = client.submit(&encoded, "m-1", "label").await.unwrap();
        client.cancel(&id).await.unwrap();
        let status = until_ended(&client, &id).await;
        assert!(
            status.status.to_lowercase().contains("cancel") || status.status == "ended",
            "{api:?}: {status:?}"
        );
        let results = client.results(&status, &sample).await.unwrap();
        assert!(results.iter().all(|r| r.answer.is_err()), "{api:?}: {results:?}");
    }
}

#[tokio::test]
async fn the_local_model_and_vertex_have_no_batch_engine() {
    let mock = BatchMock::start(0).await;
    let transport = transport();
    for api in [ApiKind::Local, ApiKind::Vertex] {
        let endpoint = endpoint(&mock, api);
        let refused = BatchClient::new(&transport, &endpoint).unwrap_err();
        assert!(refused.to_string().contains("no batch engine"), "{refused}");
    }
}
