//! The protocol side: what the server says it can do, and each request answered from the open
//! files. The file store is locked only while an answer is computed, never across an `await`.

use std::sync::{Mutex, MutexGuard};

use globset::{Glob, GlobSetBuilder};
use llmtool_providers::pricing::PriceTable;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{
    CodeActionKind, CodeActionOptions, CodeActionOrCommand, CodeActionParams,
    CodeActionProviderCapability, CodeActionResponse, CodeLens, CodeLensOptions, CodeLensParams,
    CompletionOptions, CompletionParams, CompletionResponse, Diagnostic,
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DocumentFormattingParams, DocumentRangeFormattingParams, DocumentSymbolParams,
    DocumentSymbolResponse, ExecuteCommandOptions, ExecuteCommandParams, GotoDefinitionParams,
    GotoDefinitionResponse, Hover, HoverContents, HoverParams, HoverProviderCapability,
    InitializeParams, InitializeResult, LSPAny, Location, MarkupContent, MarkupKind, MessageType,
    OneOf, PositionEncodingKind, PrepareRenameResponse, ReferenceParams, RenameOptions,
    RenameParams, SemanticTokens, SemanticTokensFullOptions, SemanticTokensOptions,
    SemanticTokensParams, SemanticTokensResult, SemanticTokensServerCapabilities,
    ServerCapabilities, ServerInfo, TextDocumentPositionParams, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextEdit, Uri, WorkDoneProgressOptions, WorkspaceEdit,
};
use tower_lsp_server::{Client, LanguageServer};

use crate::files::{Files, OpenFile};
use crate::navigation::{self, Target};
use crate::positions::Encoding;
use crate::{actions, commands, completion, diagnostics, hover, lenses, outline};

#[derive(Debug)]
pub struct Server {
    client: Client,
    files: Mutex<Files>,
    /// The built-in prices with the config file's over them, for hover and completion.
    prices: PriceTable,
}

impl Server {
    pub fn new(client: Client, prices: PriceTable) -> Self {
        Self { client, files: Mutex::new(Files::default()), prices }
    }

    fn files(&self) -> MutexGuard<'_, Files> {
        // A panic while the lock was held leaves the store as it was before that request.
        self.files.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `answer` on the open tool file at `uri`; `None` when there is none. A panic is a
    /// bug: it fails this one request instead of ending the server (see [`guarded`]).
    fn with_tool<T>(
        &self,
        uri: &Uri,
        answer: impl FnOnce(&OpenFile) -> Option<T>,
    ) -> Result<Option<T>> {
        let files = self.files();
        guarded(|| files.tool(uri).and_then(answer))
    }

    /// Applies an open or a change to the store and checks the file; a panic there (a bug) is
    /// logged to the editor, and the file is then treated as closed.
    async fn update(
        &self,
        uri: &Uri,
        change: impl FnOnce(&mut Files) -> Option<(Vec<Diagnostic>, i32)>,
    ) {
        let outcome = {
            let mut files = self.files();
            guarded(|| change(&mut files))
        };
        match outcome {
            Ok(found) => self.publish(uri.clone(), found).await,
            Err(error) => self.client.log_message(MessageType::ERROR, error.message).await,
        }
    }

    async fn publish(&self, uri: Uri, found: Option<(Vec<Diagnostic>, i32)>) {
        if let Some((diagnostics, version)) = found {
            self.client.publish_diagnostics(uri, diagnostics, Some(version)).await;
        }
    }
}

/// Runs `work`, turning a panic into an internal error for the request, as rust-analyzer does:
/// `tower-lsp-server` does not catch panics, and one would end the whole server. The message
/// is on standard error (the editor's log) through the panic hook.
fn guarded<T>(work: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).map_err(|_| Error {
        code: tower_lsp_server::jsonrpc::ErrorCode::InternalError,
        message: "llmtool lsp failed on this request (a bug; its message is in the server's log)"
            .into(),
        data: None,
    })
}

/// The encoding to use: UTF-8 when the client offers it.
fn negotiate(params: &InitializeParams) -> Encoding {
    let offered = params.capabilities.general.as_ref().and_then(|g| g.position_encodings.as_ref());
    if offered.is_some_and(|kinds| kinds.contains(&PositionEncodingKind::UTF8)) {
        Encoding::Utf8
    } else {
        Encoding::Utf16
    }
}

/// The globs of `initializationOptions.globs` (bad ones are skipped).
fn globs(params: &InitializeParams) -> globset::GlobSet {
    let mut builder = GlobSetBuilder::new();
    let listed = params.initialization_options.as_ref().and_then(|o| o.get("globs"));
    for glob in listed.and_then(|g| g.as_array()).into_iter().flatten() {
        if let Some(glob) = glob.as_str().and_then(|g| Glob::new(g).ok()) {
            builder.add(glob);
        }
    }
    builder.build().unwrap_or_default()
}

fn capabilities(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(match encoding {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(TextDocumentSyncCapability::Kind(
            TextDocumentSyncKind::INCREMENTAL,
        )),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, actions::fix_all_kind()]),
            ..CodeActionOptions::default()
        })),
        document_formatting_provider: Some(OneOf::Left(true)),
        document_range_formatting_provider: Some(OneOf::Left(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: WorkDoneProgressOptions::default(),
        })),
        document_symbol_provider: Some(OneOf::Left(true)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: lenses::legend(),
                full: Some(SemanticTokensFullOptions::Bool(true)),
                ..SemanticTokensOptions::default()
            },
        )),
        code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: [lenses::RENDER, lenses::RUN, lenses::TEST].map(str::to_owned).to_vec(),
            ..ExecuteCommandOptions::default()
        }),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(completion::TRIGGERS.map(str::to_owned).to_vec()),
            ..CompletionOptions::default()
        }),
        ..ServerCapabilities::default()
    }
}

fn found(uri: &Uri, file: &OpenFile) -> (Vec<Diagnostic>, i32) {
    (diagnostics::of(uri, file), file.version)
}

impl LanguageServer for Server {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let encoding = negotiate(&params);
        self.files().configure(encoding, globs(&params));
        Ok(InitializeResult {
            capabilities: capabilities(encoding),
            server_info: Some(ServerInfo {
                name: "llmtool".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            offset_encoding: None,
        })
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        let uri = document.uri;
        self.update(&uri, |files| {
            Some(found(&uri, files.open(&uri, document.version, document.text)))
        })
        .await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        self.update(&uri, |files| {
            files.change(&uri, version, params.content_changes).map(|file| found(&uri, file))
        })
        .await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.files().close(&uri);
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let only = params.context.only;
        self.with_tool(&uri, |file| {
            let asked_about = &params.context.diagnostics;
            let mut offered = actions::code_actions(&uri, file, params.range, asked_about);
            if let Some(only) = &only {
                offered.retain(|action| match action {
                    CodeActionOrCommand::CodeAction(a) => a.kind.as_ref().is_some_and(|kind| {
                        only.iter().any(|o| kind.as_str().starts_with(o.as_str()))
                    }),
                    CodeActionOrCommand::Command(_) => false,
                });
            }
            Some(offered)
        })
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        self.with_tool(&params.text_document.uri, |file| actions::format(file, None))
    }

    async fn range_formatting(
        &self,
        params: DocumentRangeFormattingParams,
    ) -> Result<Option<Vec<TextEdit>>> {
        let range = params.range;
        self.with_tool(&params.text_document.uri, |file| actions::format(file, Some(range)))
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let at = params.text_document_position_params;
        let uri = at.text_document.uri;
        self.with_tool(&uri, |file| {
            let offset = file.lines.offset(file.text(), at.position);
            let name = navigation::target_at(file, offset)?.name().to_owned();
            let tool = file.document.tool.as_ref()?;
            let declared = navigation::variable(tool, &name)?;
            let range = file.lines.range(file.text(), declared.name.span);
            Some(GotoDefinitionResponse::Scalar(Location::new(uri.clone(), range)))
        })
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let at = params.text_document_position;
        let uri = at.text_document.uri;
        let with_declaration = params.context.include_declaration;
        self.with_tool(&uri, |file| {
            let offset = file.lines.offset(file.text(), at.position);
            let name = navigation::target_at(file, offset)?.name().to_owned();
            let spans = navigation::references(file, &name, with_declaration);
            Some(
                spans
                    .into_iter()
                    .map(|span| Location::new(uri.clone(), file.lines.range(file.text(), span)))
                    .collect(),
            )
        })
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        let uri = params.text_document.uri;
        self.with_tool(&uri, |file| {
            let offset = file.lines.offset(file.text(), params.position);
            let target = navigation::target_at(file, offset)?;
            let tool = file.document.tool.as_ref()?;
            navigation::variable(tool, target.name())?;
            let span = match &target {
                Target::Placeholder(u) => u.span,
                Target::Declaration(v) => v.name.span,
            };
            Some(PrepareRenameResponse::RangeWithPlaceholder {
                range: file.lines.range(file.text(), span),
                placeholder: target.name().to_owned(),
            })
        })
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let at = params.text_document_position;
        let uri = at.text_document.uri;
        let renamed = self.with_tool(&uri, |file| {
            let offset = file.lines.offset(file.text(), at.position);
            Some(navigation::rename(file, offset, &params.new_name).map(|edits| {
                let edits = edits
                    .into_iter()
                    .map(|(span, text)| TextEdit::new(file.lines.range(file.text(), span), text))
                    .collect();
                actions::workspace_edit(&uri, edits)
            }))
        })?;
        renamed.transpose().map_err(|problem| Error::invalid_params(problem.to_string()))
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        self.with_tool(&params.text_document.uri, |file| {
            Some(DocumentSymbolResponse::Nested(outline::symbols(file)))
        })
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let at = params.text_document_position_params;
        self.with_tool(&at.text_document.uri, |file| {
            let offset = file.lines.offset(file.text(), at.position);
            let (markdown, span) = hover::at(file, offset, &self.prices)?;
            Some(Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: markdown,
                }),
                range: Some(file.lines.range(file.text(), span)),
            })
        })
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let at = params.text_document_position;
        self.with_tool(&at.text_document.uri, |file| {
            let offset = file.lines.offset(file.text(), at.position);
            Some(CompletionResponse::Array(completion::at(file, offset, &self.prices)))
        })
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        self.with_tool(&params.text_document.uri, |file| {
            Some(SemanticTokensResult::Tokens(SemanticTokens {
                result_id: None,
                data: lenses::semantic_tokens(file),
            }))
        })
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let uri = params.text_document.uri;
        self.with_tool(&uri, |file| Some(lenses::code_lenses(&uri, file)))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let uri: Option<Uri> = params.arguments.first().and_then(|a| a.as_str()?.parse().ok());
        let Some(uri) = uri else {
            return Err(Error::invalid_params("the first argument is the tool file's URI"));
        };
        let answer = match params.command.as_str() {
            lenses::RENDER => {
                let rendered =
                    self.with_tool(&uri, |file| Some(navigation::rendered_with_defaults(file)))?;
                LSPAny::String(
                    rendered.ok_or_else(|| Error::invalid_params("the file is not open"))?,
                )
            }
            lenses::RUN | lenses::TEST => {
                let path = lenses::path_of(&uri)
                    .ok_or_else(|| Error::invalid_params("only a file on disk can be run"))?;
                let verb = if params.command == lenses::RUN { "run" } else { "test" };
                commands::llmtool(&lenses::command_line(verb, &path)).await
            }
            other => return Err(Error::invalid_params(format!("unknown command `{other}`"))),
        };
        let shown = match &answer {
            LSPAny::String(text) => text.clone(),
            other => other.get("output").and_then(LSPAny::as_str).unwrap_or_default().to_owned(),
        };
        self.client.show_message(MessageType::INFO, shown).await;
        Ok(Some(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_fails_only_its_request() {
        let failed = guarded(|| -> u8 { panic!("a bug") });
        let error = failed.expect_err("the panic is an error");
        assert_eq!(error.code, tower_lsp_server::jsonrpc::ErrorCode::InternalError);
        assert!(error.message.contains("a bug; its message is in the server's log"));
        assert_eq!(guarded(|| 7).ok(), Some(7));
    }
}
