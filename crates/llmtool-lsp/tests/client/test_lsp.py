"""`llmtool lsp` driven by a real LSP client (pytest-lsp over pygls), with the capabilities of
VS Code (UTF-16 positions) and of Neovim (which offers UTF-8), through every feature."""

import json
import os
import pathlib
import subprocess

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

ROOT = pathlib.Path(__file__).resolve().parents[4]
LLMTOOL = os.environ.get("LLMTOOL", str(ROOT / "target" / "debug" / "llmtool"))
EXAMPLE = ROOT / "examples" / "teach-me-anything.json"

# A tool file with a misspelt placeholder (a suggestion), a translated type name (a safe fix),
# a trailing comma (a safe fix) and non-ASCII text before them, so UTF-16 and UTF-8 differ.
BROKEN = """{
  "model_prompt": "Résumé 😀: summarise {{topc}} for a {{level}} reader.",
  "metadata": {
    "prompt_name": "Summary",
    "variables": [
      {"name": "topic", "type": "texto"},
      {"name": "level", "type": "single-select", "allowed_values": ["child", "expert",], "default": "child"}
    ]
  }
}
"""


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[LLMTOOL, "lsp"]),
    params=["visual-studio-code", "neovim@v0.10.0"],
)
async def client(request, lsp_client: LanguageClient):
    capabilities = client_capabilities(request.param)
    result = await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities))
    lsp_client.encoding = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


# --- positions, in the encoding the server chose ---------------------------------------------


def units(text: str, encoding: str) -> int:
    return len(text.encode("utf-16-le")) // 2 if encoding == "utf-16" else len(text.encode())


def position(text: str, char_index: int, encoding: str) -> types.Position:
    before = text[:char_index]
    line = before.count("\n")
    column = before[before.rfind("\n") + 1 :]
    return types.Position(line=line, character=units(column, encoding))


def position_of_byte(text: str, byte: int, encoding: str) -> types.Position:
    return position(text, len(text.encode()[:byte].decode()), encoding)


def char_index(text: str, pos: types.Position, encoding: str) -> int:
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: pos.line])
    line, counted = lines[pos.line], 0
    for i, c in enumerate(line):
        if counted >= pos.character:
            return start + i
        counted += units(c, encoding)
    return start + len(line)


def apply(text: str, edits, encoding: str) -> str:
    spans = [(char_index(text, e.range.start, encoding), char_index(text, e.range.end, encoding), e.new_text) for e in edits]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def at(client, text: str, needle: str, offset: int = 0) -> types.Position:
    return position(text, text.index(needle) + offset, client.encoding)


# --- opening and editing -----------------------------------------------------------------------


async def open_file(client, text: str, name: str = "broken.llmtool.json", version: int = 1):
    uri = (ROOT / "target" / name).as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="json", version=version, text=text)
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return uri


async def change(client, uri: str, version: int, changes):
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=changes,
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)


def check_json(text: str) -> list:
    path = ROOT / "target" / "lsp-check.llmtool.json"
    path.write_text(text)
    out = subprocess.run([LLMTOOL, "check", str(path), "--format", "json"], capture_output=True, text=True)
    return json.loads(out.stdout)


async def test_diagnostics_are_checks_own(client: LanguageClient):
    uri = await open_file(client, BROKEN)
    got = client.diagnostics[uri]
    expected = check_json(BROKEN)
    assert [d.code for d in got] == [e["code"] for e in expected]
    for diagnostic, wanted in zip(got, expected):
        assert diagnostic.message.startswith(wanted["message"])
        assert diagnostic.source == "llmtool"
        assert diagnostic.range.start == position_of_byte(BROKEN, wanted["span"]["start"], client.encoding)
        assert diagnostic.range.end == position_of_byte(BROKEN, wanted["span"]["end"], client.encoding)
    assert "LT212" in {d.code for d in got}


async def test_an_incremental_change_is_checked_again(client: LanguageClient):
    uri = await open_file(client, BROKEN)
    assert any(d.code == "LT212" for d in client.diagnostics[uri])
    # Type the missing `i` of `{{topc}}`, as an editor sends a keystroke.
    start = at(client, BROKEN, "{{topc}}", len("{{top"))
    await change(client, uri, 2, [types.TextDocumentContentChangePartial(range=types.Range(start=start, end=start), text="i")])
    assert not any(d.code == "LT212" for d in client.diagnostics[uri])


async def test_quick_fixes_and_fix_all_are_what_fmt_fix_applies(client: LanguageClient):
    uri = await open_file(client, BROKEN)
    everything = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=99, character=0))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=everything,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    titles = {a.title for a in actions}
    assert "write `{{topic}}`" in titles
    fix_all = next(a for a in actions if a.kind == "source.fixAll.llmtool")
    fixed = apply(BROKEN, fix_all.edit.changes[uri], client.encoding)
    path = ROOT / "target" / "lsp-fix.llmtool.json"
    path.write_text(BROKEN)
    subprocess.run([LLMTOOL, "fmt", "--fix", str(path)], capture_output=True)
    fmt_fixed = path.read_text()
    # `fmt --fix` also formats; the fixes themselves are the same.
    assert json.loads(fixed) == json.loads(fmt_fixed)
    assert '"texto"' not in fixed
    # The suggestion for the placeholder is a quick fix of its own.
    suggestion = next(a for a in actions if a.title == "write `{{topic}}`")
    assert "{{topic}}" in apply(BROKEN, suggestion.edit.changes[uri], client.encoding)
    assert suggestion.is_preferred is False


async def test_quick_fixes_of_the_diagnostics_the_client_names(client: LanguageClient):
    # As Neovim asks: the cursor at the line's start as the range, the line's diagnostics
    # in the context.
    uri = await open_file(client, BROKEN, "context.llmtool.json")
    on_prompt = [d for d in client.diagnostics[uri] if d.range.start.line == 1 and "topc" in d.message]
    assert on_prompt
    cursor = types.Range(start=types.Position(line=1, character=0), end=types.Position(line=1, character=0))

    async def titles(diagnostics):
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=cursor,
                context=types.CodeActionContext(diagnostics=diagnostics, only=[types.CodeActionKind.QuickFix]),
            )
        )
        return {a.title for a in actions or []}

    assert "write `{{topic}}`" not in await titles([])
    assert "write `{{topic}}`" in await titles(on_prompt)


async def test_formatting_gives_fmts_canonical_text(client: LanguageClient):
    text = EXAMPLE.read_text().replace('"version": "2.1",', '"version":   "2.1" ,')
    uri = await open_file(client, text, "example.llmtool.json")
    edits = await client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert apply(text, edits, client.encoding) == EXAMPLE.read_text()
    line = text.split("\n").index('  "version":   "2.1" ,')
    ranged = await client.text_document_range_formatting_async(
        types.DocumentRangeFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=5)),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert len(ranged) == 1 and apply(text, ranged, client.encoding) == EXAMPLE.read_text()


async def test_definition_references_and_rename(client: LanguageClient):
    text = EXAMPLE.read_text()
    uri = await open_file(client, text, "example.llmtool.json")
    place = at(client, text, "{{level}}", 3)
    found = await client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=place)
    )
    declared = text.index('"name": "level"') + len('"name": ')
    assert found.range.start == position(text, declared, client.encoding)
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=place,
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    assert len(refs) == 2
    prepared = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=types.TextDocumentIdentifier(uri=uri), position=place)
    )
    assert prepared.placeholder == "level"
    edit = await client.text_document_rename_async(
        types.RenameParams(text_document=types.TextDocumentIdentifier(uri=uri), position=place, new_name="expertise")
    )
    renamed = apply(text, edit.changes[uri], client.encoding)
    assert "{{expertise}}" in renamed and '"name": "expertise"' in renamed and "level" not in renamed.split('"metadata"')[0]
    assert check_json(renamed) == []
    with pytest.raises(Exception, match="already exists"):
        await client.text_document_rename_async(
            types.RenameParams(text_document=types.TextDocumentIdentifier(uri=uri), position=place, new_name="topic")
        )


async def test_outline_and_hover(client: LanguageClient):
    text = EXAMPLE.read_text()
    uri = await open_file(client, text, "example.llmtool.json")
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert [s.name for s in symbols] == ["model_prompt", "metadata"]
    assert [(c.name, c.detail) for c in symbols[1].children] == [("topic", "text"), ("level", "single-select")]
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=at(client, text, "{{level}}", 2))
    )
    assert "single-select" in hover.contents.value and "`curious beginner`" in hover.contents.value
    on_prompt = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=at(client, text, "pitch the"))
    )
    # `topic` has no default, so the prompt cannot be rendered with the defaults alone.
    assert "topic" in on_prompt.contents.value


async def test_a_json_file_that_is_not_a_tool_gets_nothing(client: LanguageClient):
    uri = await open_file(client, '{"name": "package", "version": "1.0.0",}', "package.json")
    assert list(client.diagnostics[uri]) == []


# A tool file half written, with the cursor's places marked by `|` (removed before opening).
TYPING = """{
  "model_prompt": "Tell me about {{topic}} for a {{|",
  "metadata": {
    "model_version": ["gpt-4o|"],
    "variables": [
      {"name": "topic", "type": "|", "description": "What to explain."},
      {"name": "level", "type": "single-select", "allowed_values": ["child", "expert"], "default": "|"}
    ],
    |
  }
}
"""


def marked(text: str):
    """The text without its `|` marks, and the character index of each mark."""
    places, clean = [], ""
    for part in text.split("|")[:-1]:
        clean += part
        places.append(len(clean))
    return clean + text.split("|")[-1], places


async def complete(client, uri, text, index):
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position(text, index, client.encoding),
        )
    )
    items = result.items if hasattr(result, "items") else result
    return {item.label: item for item in items}


async def test_completion_offers_what_fits_each_place(client: LanguageClient):
    text, (placeholder, model, kind, default, key) = marked(TYPING)
    uri = await open_file(client, text, "typing.llmtool.json")
    names = await complete(client, uri, text, placeholder)
    assert set(names) == {"topic", "level"}
    assert apply(text, [names["level"].text_edit], client.encoding).count("{{level}}") == 1
    # Inside a placeholder already written, the whole name and its braces are replaced.
    inside = text.index("{{topic}}") + len("{{to")
    within = await complete(client, uri, text, inside)
    completed = apply(text, [within["topic"].text_edit], client.encoding)
    assert completed.count("{{topic}}") == text.count("{{topic}}") and "}}pic" not in completed
    models = await complete(client, uri, text, model)
    assert "gpt-4o-mini" in models and models["gpt-4o-mini"].detail == "openai"
    kinds = await complete(client, uri, text, kind)
    assert {"text", "single-select", "multi-select", "texto", "텍스트", "단일 선택"} <= set(kinds)
    assert "translated" in kinds["texto"].detail and "translated" in kinds["다중 선택"].detail
    chosen = apply(text, [kinds["multi-select"].text_edit], client.encoding)
    assert '"type": "multi-select"' in chosen
    defaults = await complete(client, uri, text, default)
    assert set(defaults) == {"child", "expert"}
    keys = await complete(client, uri, text, key)
    assert "prompt_name" in keys and "variables" not in keys and "model_version" not in keys
    assert keys["prompt_name"].documentation.value == "A short name for the tool."
    typed = apply(text, [keys["prompt_name"].text_edit], client.encoding)
    assert '"prompt_name": ' in typed


async def test_hover_shows_key_docs_and_model_prices(client: LanguageClient):
    text = EXAMPLE.read_text()
    uri = await open_file(client, text, "example.llmtool.json")
    on_key = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=at(client, text, '"model_prompt"', 3))
    )
    assert "{{name}}" in on_key.contents.value
    on_model = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=at(client, text, '"gpt-4o-mini"', 3))
    )
    assert "per million input tokens" in on_model.contents.value and "openai" in on_model.contents.value


async def test_semantic_tokens_mark_each_placeholder(client: LanguageClient):
    uri = await open_file(client, BROKEN)
    tokens = await client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    data = tokens.data
    assert len(data) == 2 * 5  # `{{topc}}` and `{{level}}`
    first, second = data[:5], data[5:]
    start = at(client, BROKEN, "{{topc}}")
    assert (first[0], first[1], first[2]) == (start.line, start.character, len("{{topc}}"))
    assert first[4] == 1 and second[4] == 0  # `topc` is undeclared, `level` declared
    assert second[0] == 0 and second[1] == units("{{topc}} for a ", client.encoding)


async def test_lenses_render_run_and_test(client: LanguageClient):
    text = EXAMPLE.read_text()
    uri = EXAMPLE.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="json", version=1, text=text)
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert [lens.command.title for lens in lenses] == ["Render", "Run", "Test"]  # a test file is beside it
    render = next(lens.command for lens in lenses if lens.command.title == "Render")
    rendered = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=render.command, arguments=render.arguments)
    )
    assert "Cannot render" in rendered and "topic" in rendered
    run = next(lens.command for lens in lenses if lens.command.title == "Run")
    ran = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=run.command, arguments=run.arguments)
    )
    # `topic` has no default and the lens passes no values: llmtool run says so and exits 1 or 2.
    assert ran["exit"] in (1, 2) and "topic" in ran["output"]
    assert any("topic" in m.message for m in client.messages)
    # A URI that would read as an option or as standard input is not run at all.
    for bad in ["file:--help", "file:-", "file:--config=/tmp/x.toml"]:
        with pytest.raises(Exception, match="only a file on disk"):
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=run.command, arguments=[bad])
            )


async def test_the_test_lens_finds_the_file_llmtool_test_runs(client: LanguageClient, tmp_path):
    # `llmtool test x.llmtool.json` runs `x.llmtool.tests.json`; `x.tests.json` tests `x.json`.
    tool = tmp_path / "x.llmtool.json"
    tool.write_text(EXAMPLE.read_text())
    (tmp_path / "x.tests.json").write_text('{"cases": []}')

    async def titles():
        uri = tool.as_uri()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="json", version=1, text=tool.read_text())
            )
        )
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        return [lens.command.title for lens in lenses]

    assert await titles() == ["Render", "Run"]
    (tmp_path / "x.llmtool.tests.json").write_text('{"cases": []}')
    assert await titles() == ["Render", "Run", "Test"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[LLMTOOL, "lsp"]))
async def glob_client(lsp_client: LanguageClient):
    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"globs": ["**/prompts/*.json"]},
    )
    result = await lsp_client.initialize_session(params)
    lsp_client.encoding = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


async def test_a_configured_glob_makes_a_tool_file(glob_client: LanguageClient):
    # Without `model_prompt`, only the glob makes this a tool file: its missing prompt is reported.
    text = '{"metadata": {"prompt_name": "Draft"}}'
    in_prompts = await open_file(glob_client, text, "prompts/draft.json")
    assert any(d.severity == types.DiagnosticSeverity.Error for d in glob_client.diagnostics[in_prompts])
    elsewhere = await open_file(glob_client, text, "drafts/draft.json")
    assert list(glob_client.diagnostics[elsewhere]) == []


# The config file's prices, over the built-in table, in hover and completion.
PRICED_CONFIG = ROOT / "target" / "lsp-prices.toml"
PRICED_CONFIG.write_text('[prices."work/house-model"]\ninput = 1.25\noutput = 5.5\n')


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[LLMTOOL, "lsp"], server_env={**os.environ, "LLMTOOL_CONFIG": str(PRICED_CONFIG)})
)
async def priced_client(lsp_client: LanguageClient):
    result = await lsp_client.initialize_session(types.InitializeParams(capabilities=client_capabilities("visual-studio-code")))
    lsp_client.encoding = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


async def test_the_config_files_prices_show_in_hover_and_completion(priced_client: LanguageClient):
    client = priced_client
    text = EXAMPLE.read_text().replace('"gpt-4o-mini"', '"work/house-model"')
    uri = await open_file(client, text, "priced.llmtool.json")
    hovered = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=at(client, text, '"work/house-model"', 3))
    )
    assert "$1.25 per million input tokens" in hovered.contents.value and "config file" in hovered.contents.value
    completed = await client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=at(client, text, '"work/house-model"', 1))
    )
    items = completed.items if hasattr(completed, "items") else completed
    assert any(item.label == "house-model" and item.detail == "work" for item in items)


BROKEN_CONFIG = ROOT / "target" / "lsp-broken-config.toml"
BROKEN_CONFIG.write_text("prices = [\n")


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[LLMTOOL, "lsp"], server_env={**os.environ, "LLMTOOL_CONFIG": str(BROKEN_CONFIG)})
)
async def misconfigured_client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(capabilities=client_capabilities("visual-studio-code")))
    yield
    await lsp_client.shutdown_session()


async def test_a_broken_config_file_still_lets_files_be_checked(misconfigured_client: LanguageClient):
    uri = await open_file(misconfigured_client, BROKEN, "misconfigured.llmtool.json")
    assert misconfigured_client.diagnostics[uri]
