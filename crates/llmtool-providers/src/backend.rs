//! Where the run loop sends a request: an HTTP API through the transport, or a model that runs in
//! this process (the embedded local model).

use std::sync::Arc;

use crate::error::ProviderError;
use crate::request::ChatRequest;
use crate::transport::{Completion, Delivery, Transport};

/// A model answering in-process. `generate` is blocking (CPU work); the run loop calls it on a
/// blocking thread and streams its text back. `on_text` returns false once nobody listens any
/// more (the request was dropped): the engine should then stop and give the model to others.
pub trait Engine: Send + Sync {
    fn generate(
        &self,
        request: &ChatRequest,
        on_text: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Completion, ProviderError>;
}

/// Where the run loop sends requests.
#[derive(Clone)]
pub enum Backend<'a> {
    /// An HTTP API, through the transport (retries, timeouts).
    Http(&'a Transport),
    /// An in-process model.
    Local(Arc<dyn Engine>),
}

impl std::fmt::Debug for Backend<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Http(_) => "Backend::Http",
            Backend::Local(_) => "Backend::Local",
        })
    }
}

/// Runs `engine` on a blocking thread, passing its text to `on_text` as it comes (or whole, for
/// [`Delivery::Whole`]).
pub(crate) async fn generate_local(
    engine: &Arc<dyn Engine>,
    request: &ChatRequest,
    delivery: Delivery,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<Completion, ProviderError> {
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<String>();
    let engine = Arc::clone(engine);
    let request = request.clone();
    let worker = tokio::task::spawn_blocking(move || {
        engine.generate(&request, &mut |text| sender.send(text.to_owned()).is_ok())
    });
    let mut whole = String::new();
    while let Some(piece) = receiver.recv().await {
        match delivery {
            Delivery::Live => on_text(&piece),
            Delivery::Whole => whole.push_str(&piece),
        }
    }
    let completion = worker
        .await
        .map_err(|e| ProviderError::MalformedStream(format!("the local model stopped: {e}")))??;
    if !whole.is_empty() {
        on_text(&whole);
    }
    Ok(completion)
}
