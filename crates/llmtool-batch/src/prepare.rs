//! A row made ready to run: its values filled into the prompt, the request to send, its key
//! (the work and its occurrence), and the record it starts with. Done in the rows' order, on
//! one thread, since a row's key depends on the identical rows before it.

use llmtool_format::model::{Tool, ToolKind};
use llmtool_format::template::{Inputs, ToolTemplate};
use llmtool_providers::run::RunRequest;
use llmtool_runtime::log::values_json;
use llmtool_runtime::smart::{SANDBOX_MODEL, SANDBOX_PROVIDER};
use llmtool_runtime::{ParamOverrides, RunError, Runtime, Subject};

use crate::input::{Mapping, Row};
use crate::journal::Entry;
use crate::keys::{Occurrences, work_hash};
use crate::output::{OutputFormat, OutputRecord};

/// A row ready to run (or to be written at once, when `request` is `None`: `invalid`, or
/// `failed` when data-loss prevention blocked its prompt).
#[derive(Debug)]
pub(crate) struct Shaped {
    pub entry: Entry,
    pub record: OutputRecord,
    pub request: Option<RunRequest>,
    /// A smart tool's row: the variables its `execute` gets (and no request).
    pub smart: Option<serde_json::Map<String, serde_json::Value>>,
    /// What the run log keeps the row's run as: the tool and the row's values.
    pub subject: Option<Subject>,
}

/// Makes rows into [`Shaped`] ones, in order.
pub(crate) struct Shaper<'a> {
    pub tool: &'a Tool,
    /// The tool file's name as the user gave it, for the run log.
    pub tool_path: Option<&'a str>,
    pub template: ToolTemplate,
    pub tool_hash: String,
    pub mapping: &'a Mapping,
    pub runtime: &'a Runtime,
    pub format: OutputFormat,
    pub occurrences: Occurrences,
}

impl Shaper<'_> {
    /// What every row runs with: the tool and the model and parameters it resolves to. A
    /// change of it between runs means every row is new work.
    pub(crate) fn setup(&self) -> String {
        match self.runtime.request(self.tool, String::new(), ParamOverrides::default()) {
            Ok(request) => format!("{} {}", self.tool_hash, target_of(&request)),
            Err(_) => format!("{} (no model)", self.tool_hash),
        }
    }

    pub(crate) fn shape(&mut self, row: Row) -> Shaped {
        let Work { hash: work, request, smart, error, blocked, values } = self.work_of(&row);
        let key = self.occurrences.key(&work);
        // A row that runs starts as `failed` until its answer comes; a blocked one stays so,
        // for `--retry-failed` under another policy to send it.
        let runs = request.is_some() || smart.is_some();
        let outcome = if runs || blocked { "failed" } else { "invalid" };
        let record = OutputRecord {
            id: row.id.clone(),
            row: row.index,
            outcome: outcome.to_owned(),
            output: None,
            error,
            provider: match (&request, &smart) {
                (Some(request), _) => Some(request.target.endpoint.provider.clone()),
                (None, Some(_)) => Some(SANDBOX_PROVIDER.to_owned()),
                (None, None) => None,
            },
            model: match (&request, &smart) {
                (Some(request), _) => Some(request.target.model.clone()),
                (None, Some(_)) => Some(SANDBOX_MODEL.to_owned()),
                (None, None) => None,
            },
            input_tokens: None,
            output_tokens: None,
            cost_usd: None,
            latency_ms: None,
            key: key.clone(),
        };
        let entry = Entry {
            key,
            row_index: row.index,
            row_id: row.id,
            outcome: outcome.to_owned(),
            cost_usd: None,
            record: record.line(self.format),
            replaces: false,
        };
        let subject = runs.then(|| self.subject(values));
        Shaped { entry, record, request, smart, subject }
    }

    /// A run of the tool with `values`, as the run log keeps it.
    pub(crate) fn subject(&self, values: serde_json::Value) -> Subject {
        Subject {
            origin: "batch",
            tool_path: self.tool_path.map(str::to_owned),
            tool_name: self.tool.name().map(str::to_owned),
            tool_hash: self.tool_hash.clone(),
            values,
            by: None,
            account: None,
            turn: None,
        }
    }

    /// The row's work, its request, and why there is none.
    fn work_of(&self, row: &Row) -> Work {
        let tool_hash = self.tool_hash.as_str();
        let without = |hash, error: String| Work {
            hash,
            request: None,
            smart: None,
            error: Some(error),
            blocked: false,
            values: serde_json::Value::Null,
        };
        if let Some(malformed) = &row.malformed {
            return without(
                work_hash(tool_hash, &malformed.text, "malformed"),
                malformed.reason.clone(),
            );
        }
        let values = match self.mapping.values(row, self.template.variables()) {
            Ok(values) => values,
            Err(problem) => {
                let cells = serde_json::Value::Object(row.columns.clone()).to_string();
                return without(work_hash(tool_hash, &cells, "invalid"), problem);
            }
        };
        if self.tool.kind() == ToolKind::Smart {
            return self.smart_work(&values);
        }
        let rendered = Inputs::from_json(&values, self.template.variables())
            .map_err(|error| error.to_string())
            .and_then(|inputs| {
                let prompt = self.template.render(&inputs).map_err(|problems| {
                    problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; ")
                })?;
                Ok((prompt, values_json(&inputs)))
            });
        let (prompt, values) = match rendered {
            Ok(rendered) => rendered,
            // Nothing to send: keyed by the row's values instead of a prompt.
            Err(problem) => {
                return without(work_hash(tool_hash, &values.to_string(), "invalid"), problem);
            }
        };
        match self.runtime.request(self.tool, prompt.clone(), ParamOverrides::default()) {
            Ok(request) => Work {
                hash: work_hash(tool_hash, &prompt, &target_of(&request)),
                request: Some(request),
                smart: None,
                error: None,
                blocked: false,
                values,
            },
            // Keyed as the request it would have been, so that a rerun under another policy
            // finds it (the target does not depend on the prompt).
            Err(RunError::Blocked(report)) => {
                let target = self
                    .runtime
                    .request(self.tool, String::new(), ParamOverrides::default())
                    .map(|request| target_of(&request))
                    .unwrap_or_default();
                Work {
                    hash: work_hash(tool_hash, &prompt, &target),
                    request: None,
                    smart: None,
                    error: Some(report),
                    blocked: true,
                    values: serde_json::Value::Null,
                }
            }
            Err(error) => without(
                work_hash(tool_hash, &prompt, ""),
                self.runtime.redact(&error.to_string()).into_owned(),
            ),
        }
    }
}

impl Shaper<'_> {
    /// A smart tool's row: its values checked and made the dict `execute` gets, keyed by
    /// them (the code is in the tool's hash).
    fn smart_work(&self, values: &serde_json::Value) -> Work {
        let tool_hash = self.tool_hash.as_str();
        let checked = Inputs::from_json(values, self.template.variables())
            .map_err(|error| error.to_string())
            .and_then(|inputs| {
                let resolved = self.template.resolve(&inputs).map_err(|problems| {
                    problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; ")
                })?;
                Ok((self.template.values_object(&resolved), values_json(&inputs)))
            });
        match checked {
            Ok((variables, logged)) => Work {
                hash: work_hash(
                    tool_hash,
                    &serde_json::Value::Object(variables.clone()).to_string(),
                    SANDBOX_PROVIDER,
                ),
                request: None,
                smart: Some(variables),
                error: None,
                blocked: false,
                values: logged,
            },
            Err(problem) => Work {
                hash: work_hash(tool_hash, &values.to_string(), "invalid"),
                request: None,
                smart: None,
                error: Some(problem),
                blocked: false,
                values: serde_json::Value::Null,
            },
        }
    }
}

/// What a row asks for: its work hash, its request (`None` when it cannot be sent) and why not.
struct Work {
    hash: [u8; 32],
    request: Option<RunRequest>,
    /// A smart tool's row: the dict its `execute` gets.
    smart: Option<serde_json::Map<String, serde_json::Value>>,
    error: Option<String>,
    /// Data-loss prevention blocked the prompt.
    blocked: bool,
    /// The row's values, as the run log keeps them (`null` when nothing is sent).
    values: serde_json::Value,
}

/// Where a request goes and with what parameters, as one line.
fn target_of(request: &RunRequest) -> String {
    let parameters = serde_json::to_string(&request.params).unwrap_or_default();
    format!("{}/{} {parameters}", request.target.endpoint.provider, request.target.model)
}
