//! The built-in tools: the examples of the repository, built into the binary, published into
//! an empty library with the tag `built-in`.

use llmtool_registry::{Publication, Store, StoreError};

/// The built-in tools, by file name (the examples folder; a test keeps the two equal).
pub const BUILT_IN: &[(&str, &str)] = &[
    ("email-reply-ko.json", include_str!("../../../examples/email-reply-ko.json")),
    ("image-generator.json", include_str!("../../../examples/image-generator.json")),
    ("image-prompt-writer.json", include_str!("../../../examples/image-prompt-writer.json")),
    ("legal-agreement-review.json", include_str!("../../../examples/legal-agreement-review.json")),
    ("pair-programmer.json", include_str!("../../../examples/pair-programmer.json")),
    ("research-brief.json", include_str!("../../../examples/research-brief.json")),
    ("resumen-de-texto.json", include_str!("../../../examples/resumen-de-texto.json")),
    ("sql-assistant-db.json", include_str!("../../../examples/sql-assistant-db.json")),
    ("sql-assistant.json", include_str!("../../../examples/sql-assistant.json")),
    ("strategy-consultant.json", include_str!("../../../examples/strategy-consultant.json")),
    ("teach-me-anything.json", include_str!("../../../examples/teach-me-anything.json")),
];

/// Publishes the built-in tools when the library has no tool yet; how many were published.
pub async fn seed_built_ins(store: &dyn Store) -> Result<usize, StoreError> {
    let any = llmtool_registry::Query { limit: 1, ..llmtool_registry::Query::default() };
    if !store.search(&any).await?.tools.is_empty() {
        return Ok(0);
    }
    for (file, text) in BUILT_IN {
        let publication = Publication::from_text(text, file)?;
        let slug = publication.default_slug();
        store.publish(&slug, &publication, Some("built-in example"), Some("llmtool")).await?;
        store.add_tag(&slug, "built-in").await?;
    }
    Ok(BUILT_IN.len())
}
