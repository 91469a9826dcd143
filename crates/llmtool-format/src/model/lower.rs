//! Lowering: from the JSON tree to the typed [`Tool`], reporting every value of the wrong JSON
//! type and every unknown key on the way. Nothing is dropped silently: a value that cannot be
//! read is reported, and the rest of the file is still read.

use crate::diagnostic::Diagnostic;
use crate::model::keys;
use crate::model::problems::{
    missing_model_prompt, number_as_string, unknown_key, unknown_parameter, unknown_variable_type,
    wrong_type,
};
use crate::model::types::{
    Avatar, Creator, DefaultValue, ExpectedOutput, FunctionEntry, Metadata, Parameter, Parameters,
    Spanned, SpannedList, Tool, Variable, VariableKind, Version,
};
use crate::output::IMAGE_PARAMETERS;
use crate::span::Span;
use crate::syntax::{Member, Node, NodeKind, is_json_number};

/// Where a value is in the file, as messages name it (`metadata.variables[2].default`). Built
/// without allocating, and written out only when a diagnostic needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FieldPath<'a> {
    Root(&'static str),
    Key(&'a FieldPath<'a>, &'a str),
    Index(&'a FieldPath<'a>, usize),
}

impl<'a> FieldPath<'a> {
    fn key(&'a self, key: &'a str) -> FieldPath<'a> {
        FieldPath::Key(self, key)
    }

    fn index(&'a self, index: usize) -> FieldPath<'a> {
        FieldPath::Index(self, index)
    }
}

impl std::fmt::Display for FieldPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldPath::Root(name) => f.write_str(name),
            FieldPath::Key(parent, key) => write!(f, "{parent}.{key}"),
            FieldPath::Index(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

/// Lowers a parsed tool file. `root` is the top-level value (any JSON type).
pub fn lower(root: &mut Node) -> (Tool, Vec<Diagnostic>) {
    let mut lowerer = Lowerer { diagnostics: Vec::new() };
    let tool = lowerer.tool(root);
    (tool, lowerer.diagnostics)
}

struct Lowerer {
    diagnostics: Vec<Diagnostic>,
}

impl Lowerer {
    fn tool(&mut self, root: &mut Node) -> Tool {
        let mut tool = Tool { span: root.span, ..Tool::default() };
        let missing_prompt = root.get("model_prompt").is_none();
        let flat = keys::is_flat_smart_tool(root);
        let span = root.span;
        let NodeKind::Object(members) = &mut root.kind else { return tool };
        if flat {
            // The smart tools' own layout: the metadata's keys at the top level.
            let mut meta = Metadata { span, flat: true, ..Metadata::default() };
            let mut flat_avatar = Avatar { span, ..Avatar::default() };
            for member in members.iter_mut() {
                let name = member.key.name.as_str();
                if name != "tool_code" && keys::METADATA.contains(&name) {
                    self.metadata_member(member, &mut meta, &mut flat_avatar);
                }
            }
            tool.metadata = Some(with_avatar(meta, flat_avatar));
        }
        for member in members {
            let value = &mut member.value;
            match member.key.name.as_str() {
                name if flat && name != "tool_code" && keys::METADATA.contains(&name) => {}
                "version" => tool.version = self.version(value),
                "model_prompt" => {
                    tool.model_prompt = self.string(value, FieldPath::Root("model_prompt"));
                }
                "metadata" => tool.metadata = self.metadata(value),
                "tool_code" => tool.tool_code = self.string(value, FieldPath::Root("tool_code")),
                "x-dlp" => tool.dlp = self.policy(value),
                "x-chat" => tool.chat = self.boolean(value, FieldPath::Root("x-chat")),
                _ => self.unknown_key(member, "", keys::TOP_LEVEL),
            }
        }
        if missing_prompt && tool.code().is_none() {
            self.diagnostics.push(missing_model_prompt::diagnostic(tool.span));
        }
        tool
    }

    fn version(&mut self, node: &mut Node) -> Option<Spanned<Version>> {
        let version = match &node.kind {
            NodeKind::String(s) => Version::Text(s.clone()),
            NodeKind::Number(raw) if raw.bytes().all(|b| b.is_ascii_digit() || b == b'-') => {
                if let Ok(n) = raw.parse() {
                    Version::Integer(n)
                } else {
                    self.diagnostics.push(wrong_type::quotable(
                        node,
                        "version",
                        "a string or an integer",
                        raw,
                    ));
                    return None;
                }
            }
            NodeKind::Number(raw) => {
                self.diagnostics.push(wrong_type::quotable(
                    node,
                    "version",
                    "a string or an integer",
                    raw,
                ));
                return None;
            }
            _ => {
                self.wrong_type(node, FieldPath::Root("version"), "a string or an integer");
                return None;
            }
        };
        Some(Spanned::new(node.span, version))
    }

    fn metadata(&mut self, node: &mut Node) -> Option<Metadata> {
        let span = node.span;
        let members = self.object(node, FieldPath::Root("metadata"))?;
        let mut meta = Metadata { span, ..Metadata::default() };
        let mut flat_avatar = Avatar { span, ..Avatar::default() };
        for member in members {
            self.metadata_member(member, &mut meta, &mut flat_avatar);
        }
        Some(with_avatar(meta, flat_avatar))
    }

    /// One key of `metadata` (or of the top level, in a smart tool's flat layout) into `meta`;
    /// the flat avatar's two keys into `flat_avatar`.
    fn metadata_member(
        &mut self,
        member: &mut Member,
        meta: &mut Metadata,
        flat_avatar: &mut Avatar,
    ) {
        {
            let value = &mut member.value;
            let path = FieldPath::Root("metadata").key(&member.key.name);
            match member.key.name.as_str() {
                "prompt_name" => meta.prompt_name = self.string(value, path),
                "tool_name" => meta.tool_name = self.string(value, path),
                "tool_code" => meta.tool_code = self.string(value, path),
                "requirements" => meta.requirements = self.requirements(value),
                "description" => meta.description = self.string(value, path),
                "usage_notes" => meta.usage_notes = self.string(value, path),
                "model_version" => meta.model_version = self.model_version(value),
                "creator" => meta.creator = self.creator(value),
                "parameters" => meta.parameters = self.parameters(value),
                "variables" => meta.variables = self.variables(value),
                "expected_output" => meta.expected_output = self.expected_output(value),
                "timestamp" => meta.timestamp = self.string(value, path),
                "functions" => meta.functions = self.functions(value),
                "avatar_type" => flat_avatar.kind = self.string(value, path),
                "avatar" if matches!(value.kind, NodeKind::Object(_)) => {
                    meta.avatar = self.nested_avatar(value);
                }
                "avatar" => flat_avatar.data = self.string(value, path),
                _ => self.unknown_key(member, FieldPath::Root("metadata"), keys::METADATA),
            }
        }
    }

    fn functions(&mut self, node: &mut Node) -> Option<Spanned<Vec<FunctionEntry>>> {
        let span = node.span;
        let root = FieldPath::Root("metadata.functions");
        let NodeKind::Array(items) = &mut node.kind else {
            self.wrong_type(node, root, "a list of objects");
            return None;
        };
        let mut entries = Vec::with_capacity(items.len());
        for (index, item) in items.iter_mut().enumerate() {
            let path = root.index(index);
            let span = item.span;
            let Some(members) = self.object(item, path) else { continue };
            let mut entry = FunctionEntry { span, ..FunctionEntry::default() };
            for member in members {
                let field = match member.key.name.as_str() {
                    "builtin" => &mut entry.builtin,
                    "database" => &mut entry.database,
                    "tool" => &mut entry.tool,
                    "mcp" => &mut entry.mcp,
                    "name" => &mut entry.name,
                    _ => {
                        self.unknown_key(member, path, keys::FUNCTION_ENTRY);
                        continue;
                    }
                };
                *field = self.string(&mut member.value, path.key(&member.key.name));
            }
            entries.push(entry);
        }
        Some(Spanned::new(span, entries))
    }

    fn nested_avatar(&mut self, node: &mut Node) -> Option<Avatar> {
        let span = node.span;
        let members = self.object(node, FieldPath::Root("metadata.avatar"))?;
        let mut avatar = Avatar { span, nested: true, ..Avatar::default() };
        for member in members {
            match member.key.name.as_str() {
                "avatar_type" => {
                    avatar.kind = self
                        .string(&mut member.value, FieldPath::Root("metadata.avatar.avatar_type"));
                }
                "avatar" => {
                    avatar.data =
                        self.string(&mut member.value, FieldPath::Root("metadata.avatar.avatar"));
                }
                _ => self.unknown_key(member, "metadata.avatar", keys::NESTED_AVATAR),
            }
        }
        Some(avatar)
    }

    fn model_version(&mut self, node: &mut Node) -> Option<SpannedList> {
        match &node.kind {
            NodeKind::String(s) => {
                Some(Spanned::new(node.span, vec![Spanned::new(node.span, s.clone())]))
            }
            NodeKind::Array(_) => self.string_list(node, FieldPath::Root("metadata.model_version")),
            _ => {
                self.wrong_type(
                    node,
                    FieldPath::Root("metadata.model_version"),
                    "a list of strings",
                );
                None
            }
        }
    }

    /// A list of requirements, or one string holding one a line (as a `requirements.txt`
    /// does; blank lines and `#` comments left out).
    fn requirements(&mut self, node: &mut Node) -> Option<SpannedList> {
        match &node.kind {
            NodeKind::String(s) => {
                let lines = s
                    .lines()
                    .map(|line| line.split('#').next().unwrap_or("").trim())
                    .filter(|line| !line.is_empty())
                    .map(|line| Spanned::new(node.span, line.to_owned()))
                    .collect();
                Some(Spanned::new(node.span, lines))
            }
            NodeKind::Array(_) => self.string_list(node, FieldPath::Root("metadata.requirements")),
            _ => {
                self.wrong_type(
                    node,
                    FieldPath::Root("metadata.requirements"),
                    "a list of strings",
                );
                None
            }
        }
    }

    fn creator(&mut self, node: &mut Node) -> Option<Creator> {
        let span = node.span;
        if matches!(node.kind, NodeKind::String(_)) {
            // The smart tools' format names its creator by a string.
            let name = self.string(node, FieldPath::Root("metadata.creator"));
            return Some(Creator { span, name, ..Creator::default() });
        }
        let members = self.object(node, FieldPath::Root("metadata.creator"))?;
        let mut creator = Creator { span, ..Creator::default() };
        for member in members {
            let path = FieldPath::Root("metadata.creator").key(&member.key.name);
            match member.key.name.as_str() {
                "name" => creator.name = self.string(&mut member.value, path),
                "email" => creator.email = self.string(&mut member.value, path),
                "organization" => creator.organization = self.string(&mut member.value, path),
                _ => self.unknown_key(member, FieldPath::Root("metadata.creator"), keys::CREATOR),
            }
        }
        Some(creator)
    }

    fn parameters(&mut self, node: &mut Node) -> Option<Parameters> {
        let span = node.span;
        let members = self.object(node, FieldPath::Root("metadata.parameters"))?;
        let mut params = Parameters { span, ..Parameters::default() };
        for member in members {
            let name = member.key.name.as_str();
            let slot = match name {
                "temperature" => &mut params.temperature,
                "max_tokens" => &mut params.max_tokens,
                "top_p" => &mut params.top_p,
                "frequency_penalty" => &mut params.frequency_penalty,
                "presence_penalty" => &mut params.presence_penalty,
                _ => {
                    // The image parameters are judged with the whole tool, by
                    // `rules::parameters::image`.
                    if !keys::is_extension(name) && !IMAGE_PARAMETERS.contains(&name) {
                        self.diagnostics.push(unknown_parameter::diagnostic(name, member.key.span));
                    }
                    params.other_keys.push(Spanned::new(member.key.span, name.to_owned()));
                    params.other.insert(name.to_owned(), member.value.to_json());
                    continue;
                }
            };
            *slot =
                self.parameter(&mut member.value, FieldPath::Root("metadata.parameters").key(name));
        }
        Some(params)
    }

    fn parameter(&mut self, node: &mut Node, path: FieldPath<'_>) -> Option<Parameter> {
        let (raw, written_as_string) = match &node.kind {
            NodeKind::Number(raw) => (raw.clone(), false),
            NodeKind::String(s) if is_json_number(s.trim()) => {
                self.diagnostics.push(number_as_string::diagnostic(node, path, s.trim()));
                (s.trim().to_owned(), true)
            }
            _ => {
                self.wrong_type(node, path, "a number");
                return None;
            }
        };
        let value = raw.parse::<f64>().ok().filter(|v| v.is_finite())?;
        Some(Parameter { span: node.span, raw, value, written_as_string })
    }

    fn variables(&mut self, node: &mut Node) -> Option<Spanned<Vec<Variable>>> {
        let span = node.span;
        let NodeKind::Array(items) = &mut node.kind else {
            self.wrong_type(
                node,
                FieldPath::Root("metadata.variables"),
                "a list of variable objects",
            );
            return None;
        };
        let variables = items
            .iter_mut()
            .enumerate()
            .filter_map(|(i, item)| {
                self.variable(item, FieldPath::Root("metadata.variables").index(i))
            })
            .collect();
        Some(Spanned::new(span, variables))
    }

    fn variable(&mut self, node: &mut Node, path: FieldPath<'_>) -> Option<Variable> {
        let span = node.span;
        let members = self.object(node, path)?;
        let unnamed = Spanned::new(Span::empty(span.start + 1), String::new());
        let mut variable = Variable {
            span,
            name: unnamed,
            kind: None,
            type_written: None,
            description: None,
            default: None,
            allowed_values: None,
        };
        for member in members {
            let value = &mut member.value;
            let field = path.key(&member.key.name);
            match member.key.name.as_str() {
                "name" => {
                    if let Some(name) = self.string(value, field) {
                        variable.name = name;
                    }
                }
                "type" => {
                    variable.type_written = self.string(value, field);
                    variable.kind = variable.type_written.as_ref().and_then(|written| {
                        let kind = VariableKind::from_name(&written.value).map(|(kind, _)| kind);
                        if kind.is_some() {
                            return kind.map(|kind| Spanned::new(written.span, kind));
                        }
                        self.diagnostics.push(unknown_variable_type::diagnostic(written));
                        // Checked as the type it most likely means: one mistake, one
                        // diagnostic.
                        unknown_variable_type::meant(&written.value)
                            .map(|(kind, _)| Spanned::new(written.span, kind))
                    });
                }
                "description" => variable.description = self.string(value, field),
                "default" => variable.default = self.default_value(value, field),
                "allowed_values" => variable.allowed_values = self.string_list(value, field),
                _ => self.unknown_key(member, path, keys::VARIABLE),
            }
        }
        Some(variable)
    }

    fn default_value(
        &mut self,
        node: &mut Node,
        path: FieldPath<'_>,
    ) -> Option<Spanned<DefaultValue>> {
        let value = match &mut node.kind {
            NodeKind::String(s) => DefaultValue::Text(std::mem::take(s)),
            NodeKind::Array(_) => DefaultValue::List(self.string_list(node, path)?.value),
            _ => {
                self.wrong_type(node, path, "a string (or, for a multi-select, a list of strings)");
                return None;
            }
        };
        Some(Spanned::new(node.span, value))
    }

    fn expected_output(&mut self, node: &mut Node) -> Option<ExpectedOutput> {
        let span = node.span;
        // The smart tools' format writes the type alone: `"expected_output": "text"`.
        if let NodeKind::String(kind) = &node.kind {
            let kind = Some(Spanned::new(span, kind.clone()));
            return Some(ExpectedOutput { span, kind, ..ExpectedOutput::default() });
        }
        let members = self.object(node, FieldPath::Root("metadata.expected_output"))?;
        let mut output = ExpectedOutput { span, ..ExpectedOutput::default() };
        for member in members {
            let path = FieldPath::Root("metadata.expected_output").key(&member.key.name);
            match member.key.name.as_str() {
                "type" => output.kind = self.string(&mut member.value, path),
                "format" => output.format = self.string(&mut member.value, path),
                "language" => output.language = self.string(&mut member.value, path),
                "allowed_values" => {
                    output.allowed_values = self.string_list(&mut member.value, path)
                }
                "size" => output.size = self.string(&mut member.value, path),
                _ => self.unknown_key(
                    member,
                    FieldPath::Root("metadata.expected_output"),
                    keys::EXPECTED_OUTPUT,
                ),
            }
        }
        Some(output)
    }

    /// The members of an object, or `None` (reported) when `node` is not an object.
    fn object<'n>(&mut self, node: &'n mut Node, path: FieldPath<'_>) -> Option<&'n mut [Member]> {
        if !matches!(node.kind, NodeKind::Object(_)) {
            self.wrong_type(node, path, "an object");
        }
        match &mut node.kind {
            NodeKind::Object(members) => Some(members),
            _ => None,
        }
    }

    fn string(&mut self, node: &mut Node, path: FieldPath<'_>) -> Option<Spanned<String>> {
        if let NodeKind::String(s) = &mut node.kind {
            // Taken, not copied: the tree is dropped after lowering, and a prompt or an
            // avatar can be most of a large file.
            return Some(Spanned::new(node.span, std::mem::take(s)));
        }
        match &node.kind {
            NodeKind::Number(raw) => {
                self.diagnostics.push(wrong_type::quotable(node, path, "a string", raw));
                None
            }
            _ => {
                self.wrong_type(node, path, "a string");
                None
            }
        }
    }

    /// `x-dlp`: a string, one of the policies. A number is never one, so it is not offered
    /// quotes as other strings' numbers are (`"5"` would only be an unknown policy).
    fn boolean(&mut self, node: &Node, path: FieldPath<'_>) -> Option<Spanned<bool>> {
        if let NodeKind::Bool(value) = node.kind {
            return Some(Spanned::new(node.span, value));
        }
        self.wrong_type(node, path, "`true` or `false`");
        None
    }

    fn policy(&mut self, node: &mut Node) -> Option<Spanned<String>> {
        let path = FieldPath::Root("x-dlp");
        if matches!(node.kind, NodeKind::String(_)) {
            return self.string(node, path);
        }
        let policies: Vec<String> =
            keys::DLP_POLICIES.iter().map(|p| format!("`\"{p}\"`")).collect();
        self.wrong_type(node, path, &format!("one of {}", policies.join(", ")));
        None
    }

    fn string_list(&mut self, node: &mut Node, path: FieldPath<'_>) -> Option<SpannedList> {
        let span = node.span;
        let NodeKind::Array(items) = &mut node.kind else {
            self.wrong_type(node, path, "a list of strings");
            return None;
        };
        let strings = items
            .iter_mut()
            .enumerate()
            .filter_map(|(i, item)| self.string(item, path.index(i)))
            .collect();
        Some(Spanned::new(span, strings))
    }

    fn wrong_type(&mut self, node: &Node, path: FieldPath<'_>, expected: &str) {
        if !matches!(node.kind, NodeKind::Error) {
            self.diagnostics.push(wrong_type::diagnostic(node, path, expected));
        }
    }

    fn unknown_key(&mut self, member: &Member, parent: impl std::fmt::Display, known: &[&str]) {
        if !keys::is_extension(&member.key.name) {
            self.diagnostics.push(unknown_key::diagnostic(member, &parent.to_string(), known));
        }
    }
}

/// `meta` with the avatar its flat keys give, when it has no nested one (or one without a
/// type, which the flat `avatar_type` gives).
fn with_avatar(mut meta: Metadata, flat_avatar: Avatar) -> Metadata {
    if flat_avatar.kind.is_some() || flat_avatar.data.is_some() {
        match &mut meta.avatar {
            Some(nested) if nested.kind.is_none() => nested.kind = flat_avatar.kind,
            Some(_) => {}
            None => meta.avatar = Some(flat_avatar),
        }
    }
    meta
}
