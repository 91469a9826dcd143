//! Which of the served tools one request may see. The MCP server serves one library to every
//! client; whoever puts the endpoint behind an HTTP layer that knows the caller (the team
//! library's server) puts an [`Audience`] in the request's extensions, and every list, prompt,
//! completion and call is answered as if the tools it leaves out were not served.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use crate::library::Entry;

/// The entries one request may see, and who is asking.
#[derive(Clone)]
pub struct Audience {
    sees: Arc<dyn Fn(&Entry) -> bool + Send + Sync>,
    by: Option<String>,
}

impl Audience {
    /// An audience that sees an entry when `sees` says so.
    pub fn new(sees: impl Fn(&Entry) -> bool + Send + Sync + 'static) -> Audience {
        Audience { sees: Arc::new(sees), by: None }
    }

    /// The same audience, known as `name` (a token's): the runs it calls are its runs.
    #[must_use]
    pub fn known_as(self, name: Option<String>) -> Audience {
        Audience { by: name, ..self }
    }

    /// Whether this audience sees `entry`.
    pub fn sees(&self, entry: &Entry) -> bool {
        (self.sees)(entry)
    }

    /// Who is asking, when the layer in front knows.
    pub fn by(&self) -> Option<&str> {
        self.by.as_deref()
    }

    /// The audience of the request of `context`: the one its HTTP request carries, else
    /// everyone (standard input and output, or an endpoint with no such layer).
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Audience {
        match context.extensions.get::<axum::http::request::Parts>() {
            Some(parts) => Audience::of_http(&parts.extensions),
            None => Audience::everyone(),
        }
    }

    /// The audience an HTTP request's `extensions` carry, else everyone.
    pub(crate) fn of_http(extensions: &axum::http::Extensions) -> Audience {
        extensions.get::<Audience>().cloned().unwrap_or_else(Audience::everyone)
    }

    fn everyone() -> Audience {
        Audience::new(|_| true)
    }
}

impl std::fmt::Debug for Audience {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Audience")
    }
}
