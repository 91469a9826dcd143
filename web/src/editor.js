// The editor (`/t/SLUG/edit`, `/new`): the tool file in CodeMirror with the library's own
// check as you type (its diagnostics, and their fixes as actions), format, a form for the
// metadata, publishing with a change note, the version history with a side-by-side diff, and
// tags and labels. Viewers see it all read-only; the server enforces the roles either way.

import { basicSetup, EditorView } from "codemirror";
import { EditorState } from "@codemirror/state";
import { json } from "@codemirror/lang-json";
import { forceLinting, linter, lintGutter } from "@codemirror/lint";
import { api, canAct, el, header, path, say, slugOfPage, withCode } from "./common.js";

const slug = slugOfPage();
const main = document.getElementById("main");
const encoder = new TextEncoder();

const STARTER = `{
  "model_prompt": "Write a short poem about {{topic}}.",
  "metadata": {
    "prompt_name": "Poem Writer",
    "description": "Writes a short poem about a topic.",
    "variables": [
      { "name": "topic", "type": "text", "description": "What the poem is about." }
    ],
    "expected_output": { "type": "text" }
  }
}
`;

/** Turns the check's byte offsets into the editor's (UTF-16) offsets. */
function offsets(text) {
  const map = new Map();
  let bytes = 0;
  for (let index = 0; index < text.length; ) {
    map.set(bytes, index);
    const point = text.codePointAt(index);
    bytes += encoder.encode(String.fromCodePoint(point)).length;
    index += point > 0xffff ? 2 : 1;
  }
  map.set(bytes, text.length);
  return (byte) => map.get(byte) ?? text.length;
}

/** The check's diagnostics of the document, as CodeMirror's, with each fix as an action. */
async function check(view) {
  const text = view.state.doc.toString();
  let found;
  try {
    found = await api("/check", { method: "POST", text });
  } catch (error) {
    say(`The check failed: ${error.message}`, "error");
    return [];
  }
  if (view.state.doc.toString() !== text) return []; // Typed meanwhile: the next check counts.
  const at = offsets(text);
  const summary = document.getElementById("check-summary");
  const errors = found.filter((d) => d.severity === "error").length;
  summary.textContent = found.length ? `${errors} error(s), ${found.length - errors} warning(s)` : "No problems found.";
  showProblems(view, found, text, at);
  return found.map((diagnostic) => {
    const from = at(diagnostic.span?.start ?? 0);
    const to = Math.max(from, at(diagnostic.span?.end ?? 0));
    const message = `${diagnostic.code}: ${diagnostic.message}${diagnostic.help ? `\nhelp: ${diagnostic.help}` : ""}`;
    const fix = diagnostic.fix;
    return {
      from,
      to,
      severity: diagnostic.severity === "error" ? "error" : diagnostic.severity === "warning" ? "warning" : "info",
      message,
      source: "llmtool check",
      actions: fix
        ? [
            { name: fix.message, apply: (view) => applyFix(view, fix, text, at) },
          ]
        : [],
    };
  });
}

/** Applies `fix`, found in `text`, if the document is still that text. */
function applyFix(view, fix, text, at) {
  // The fix's spans are of the text it was found in.
  if (view.state.doc.toString() !== text) return;
  const changes = fix.edits.map((edit) => ({ from: at(edit.span.start), to: at(edit.span.end), insert: edit.replacement }));
  view.dispatch({ changes });
  view.focus();
}

/** The diagnostics as a list under the editor, each fix a button (reachable by keyboard). */
function showProblems(view, found, text, at) {
  const list = document.getElementById("problems");
  list.replaceChildren(
    ...found.map((diagnostic) =>
      el(
        "li",
        { class: diagnostic.severity },
        el("span", { class: "code" }, diagnostic.code),
        ` ${diagnostic.location ? `${diagnostic.location.line}:${diagnostic.location.column}` : ""} ${diagnostic.message}`,
        diagnostic.help ? el("span", { class: "help" }, ` (${diagnostic.help})`) : null,
        diagnostic.fix && !view.state.readOnly
          ? el("button", { type: "button", onclick: () => applyFix(view, diagnostic.fix, text, at) }, `Fix: ${diagnostic.fix.message}`)
          : null,
      ),
    ),
  );
}

function editorView(text, readOnly) {
  return new EditorView({
    parent: document.getElementById("code"),
    state: EditorState.create({
      doc: text,
      extensions: [
        basicSetup,
        json(),
        EditorView.lineWrapping,
        lintGutter(),
        linter(check, { delay: 300 }),
        EditorState.readOnly.of(readOnly),
        // Focusable even when read-only, so that the keyboard can reach and scroll the file.
        EditorView.contentAttributes.of({ "aria-label": "The tool file", tabindex: "0" }),
      ],
    }),
  });
}

function replaceDocument(view, text) {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
}

/** The metadata fields the form edits: where each is in the file, and how it is edited. */
const METADATA_FIELDS = [
  { path: ["metadata", "prompt_name"], label: "Name" },
  { path: ["metadata", "description"], label: "Description", control: "textarea" },
  { path: ["metadata", "usage_notes"], label: "Usage notes", control: "textarea" },
  { path: ["metadata", "model_version"], label: "Models (comma-separated)", kind: "list" },
  { path: ["metadata", "creator", "name"], label: "Creator" },
  { path: ["metadata", "parameters", "temperature"], label: "Temperature", kind: "number" },
  { path: ["metadata", "parameters", "max_tokens"], label: "Max tokens", kind: "number" },
  { path: ["metadata", "expected_output", "type"], label: "Expected output", control: "select", options: ["", "text", "code", "limited"] },
];

/** The value at `path` in `value`, if any. */
function valueAt(value, path) {
  return path.reduce((inner, key) => (inner && typeof inner === "object" ? inner[key] : undefined), value);
}

/** Sets (or, for `undefined`, removes) the value at `path`, making the objects on the way. */
function setValueAt(value, path, next) {
  let inner = value;
  for (const key of path.slice(0, -1)) {
    if (!inner[key] || typeof inner[key] !== "object") inner[key] = {};
    inner = inner[key];
  }
  if (next === undefined) delete inner[path.at(-1)];
  else inner[path.at(-1)] = next;
}

/** A form for the metadata's plain fields, kept in step with the JSON. */
function metadataForm(view, readOnly) {
  const inputs = new Map();
  const fill = () => {
    let tool;
    try {
      tool = JSON.parse(view.state.doc.toString());
    } catch {
      for (const input of inputs.values()) input.disabled = true;
      return;
    }
    for (const field of METADATA_FIELDS) {
      const input = inputs.get(field);
      const value = valueAt(tool, field.path);
      input.disabled = readOnly;
      input.value = Array.isArray(value) ? value.join(", ") : value ?? "";
    }
  };
  const write = async (field, written) => {
    let tool;
    try {
      tool = JSON.parse(view.state.doc.toString());
    } catch {
      return;
    }
    let value = written.trim() === "" ? undefined : written;
    if (value !== undefined && field.kind === "list") value = value.split(",").map((m) => m.trim()).filter(Boolean);
    if (value !== undefined && field.kind === "number") value = Number(value);
    setValueAt(tool, field.path, value);
    // Written back in the canonical form, as `llmtool fmt` writes it.
    const text = JSON.stringify(tool);
    const formatted = await api("/format", { method: "POST", text }).catch(() => ({ text: `${JSON.stringify(tool, null, 2)}\n` }));
    replaceDocument(view, formatted.text);
  };
  const form = el(
    "form",
    { class: "metadata", onsubmit: (event) => event.preventDefault() },
    METADATA_FIELDS.map((field) => {
      const id = `meta-${field.path.slice(1).join("-")}`;
      const input =
        field.control === "select"
          ? el("select", { id }, field.options.map((option) => el("option", { value: option }, option || "(not said)")))
          : el(field.control === "textarea" ? "textarea" : "input", {
              id,
              rows: 2,
              type: field.kind === "number" ? "number" : undefined,
              step: field.kind === "number" ? "any" : undefined,
            });
      input.addEventListener("change", () => write(field, input.value));
      inputs.set(field, input);
      return el("div", { class: "field" }, el("label", { for: id }, field.label), input);
    }),
  );
  return { form, fill };
}

/** Two columns from a unified diff: the older text on the left, the newer on the right. */
function sideBySide(unified) {
  const rows = [];
  const lines = unified.split("\n");
  let removed = [];
  let added = [];
  const flush = () => {
    const count = Math.max(removed.length, added.length);
    for (let i = 0; i < count; i++) rows.push([removed[i] ?? null, added[i] ?? null, "changed"]);
    removed = [];
    added = [];
  };
  for (const line of lines) {
    if (line.startsWith("---") || line.startsWith("+++")) continue;
    if (line.startsWith("@@")) {
      flush();
      rows.push([line, line, "hunk"]);
    } else if (line.startsWith("-")) removed.push(line.slice(1));
    else if (line.startsWith("+")) added.push(line.slice(1));
    else if (line.startsWith(" ")) {
      flush();
      rows.push([line.slice(1), line.slice(1), "same"]);
    }
  }
  flush();
  return el(
    "table",
    { class: "diff" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Before"), el("th", { scope: "col" }, "After"))),
    el(
      "tbody",
      {},
      rows.map(([left, right, kind]) =>
        el(
          "tr",
          { class: kind },
          el("td", { class: left === null ? "empty" : kind === "changed" ? "removed" : "" }, left ?? ""),
          el("td", { class: right === null ? "empty" : kind === "changed" ? "added" : "" }, right ?? ""),
        ),
      ),
    ),
  );
}

async function history(caller) {
  const list = document.getElementById("versions");
  const diff = document.getElementById("diff");
  let versions;
  try {
    versions = await api(path`/tools/${slug}/versions`);
  } catch (error) {
    list.replaceChildren(el("li", {}, ...withCode(error.message)));
    return;
  }
  const show = async (from, to) => {
    const answer = await api(path`/tools/${slug}/diff?from=${from}&to=${to}`);
    diff.replaceChildren(el("h3", {}, `v${from} → v${to}`), sideBySide(answer.diff));
  };
  list.replaceChildren(
    ...versions.map((v) =>
      el(
        "li",
        {},
        el("strong", {}, `v${v.version}`),
        ` ${v.published_at.slice(0, 16).replace("T", " ")}`,
        v.published_by ? ` by ${v.published_by}` : "",
        v.note ? ` · ${v.note}` : "",
        v.labels.length ? el("span", { class: "labels" }, ` · labels: ${v.labels.join(", ")}`) : "",
        " ",
        v.version > 1 ? el("button", { type: "button", onclick: () => show(v.version - 1, v.version) }, `Diff with v${v.version - 1}`) : null,
      ),
    ),
  );
  const labels = document.getElementById("label-form");
  if (!canAct(caller, "editor")) {
    labels.replaceChildren();
    return;
  }
  const name = el("input", { id: "label-name", type: "text", placeholder: "production", required: true });
  const version = el("select", { id: "label-version" }, versions.map((v) => el("option", { value: v.version }, `v${v.version}`)));
  labels.replaceChildren(
    el("label", { for: "label-name" }, "Label "),
    name,
    el("label", { for: "label-version" }, " points at "),
    version,
    el("button", { type: "submit" }, "Set label"),
  );
  labels.onsubmit = async (event) => {
    event.preventDefault();
    try {
      await api(path`/tools/${slug}/labels/${name.value.trim()}`, { method: "PUT", json: { version: Number(version.value) } });
      say(`${name.value.trim()} now points at v${version.value}.`);
      await history(caller);
      document.getElementById("label-name")?.focus();
    } catch (error) {
      say(error.message, "error");
    }
  };
}

function tagEditor(tags, canEdit) {
  const list = el("ul", { class: "tags", "aria-label": "Tags" });
  const redraw = () =>
    list.replaceChildren(
      ...tags.map((tag) =>
        el(
          "li",
          {},
          tag,
          canEdit
            ? el("button", {
                type: "button",
                "aria-label": `Remove the tag ${tag}`,
                onclick: async () => {
                  try {
                    await api(path`/tools/${slug}/tags/${tag}`, { method: "DELETE" });
                    tags.splice(tags.indexOf(tag), 1);
                    redraw();
                  } catch (error) {
                    say(error.message, "error");
                  }
                },
              }, "×")
            : null,
        ),
      ),
    );
  redraw();
  const input = el("input", { id: "new-tag", type: "text", placeholder: "a-tag" });
  const add = el(
    "form",
    {
      class: "inline",
      onsubmit: async (event) => {
        event.preventDefault();
        const tag = input.value.trim();
        if (!tag) return;
        try {
          await api(path`/tools/${slug}/tags/${tag}`, { method: "PUT" });
          tags.push(tag);
          input.value = "";
          redraw();
        } catch (error) {
          say(error.message, "error");
        }
      },
    },
    el("label", { for: "new-tag" }, "Add a tag "),
    input,
    el("button", { type: "submit" }, "Add"),
  );
  return el("div", {}, list, canEdit ? add : null);
}

async function start() {
  const caller = await header();
  const canEdit = canAct(caller, "editor");
  let text = STARTER;
  let current = null;
  let base = null;
  if (slug) {
    try {
      current = await api(path`/tools/${slug}`);
      base = current.version;
      const formatted = await api("/format", { method: "POST", text: JSON.stringify(current.tool) });
      text = formatted.text;
    } catch (error) {
      main.replaceChildren(el("h1", {}, slug), el("p", { class: "problem" }, ...withCode(error.message)));
      return;
    }
  }
  const note = el("input", { id: "note", type: "text", placeholder: "What changed" });
  const slugInput = slug ? null : el("input", { id: "slug", type: "text", placeholder: "made from the name" });
  main.replaceChildren(
    ...[
    el("h1", {}, slug ? `Edit ${slug}` : "New tool"),
    canEdit ? null : el("p", { class: "help" }, "Read-only: publishing needs the editor role."),
    el("div", { class: "editor-layout" },
      el("section", { "aria-labelledby": "file-heading" },
        el("h2", { id: "file-heading" }, "The tool file"),
        el("div", { id: "code" }),
        el("p", { id: "check-summary", role: "status", "aria-live": "polite" }),
        el("ul", { id: "problems", class: "problems", "aria-label": "Problems" }),
        canEdit
          ? el("div", { class: "buttons" },
              el("button", { type: "button", id: "format" }, "Format"),
              el("button", { type: "button", id: "fix" }, "Apply safe fixes"),
            )
          : null,
      ),
      el("section", { "aria-labelledby": "meta-heading" }, el("h2", { id: "meta-heading" }, "Metadata"), el("div", { id: "meta" })),
    ),
    canEdit
      ? el("form", { id: "publish-form", class: "publish" },
          el("h2", {}, "Publish"),
          slugInput ? el("div", { class: "field" }, el("label", { for: "slug" }, "Slug"), slugInput) : null,
          el("div", { class: "field" }, el("label", { for: "note" }, "Change note"), note),
          el("button", { type: "submit" }, "Publish a new version"),
        )
      : null,
    slug ? el("section", { id: "history", "aria-labelledby": "history-heading" },
      el("h2", { id: "history-heading" }, "Versions"),
      el("ol", { id: "versions", reversed: true }),
      el("form", { id: "label-form", class: "inline" }),
      el("div", { id: "diff" }),
      el("h2", {}, "Tags"),
      tagEditor([...current.tags], canEdit),
    ) : null,
    ].filter(Boolean),
  );
  const view = editorView(text, !canEdit);
  // For scripts and the browser tests: the editor's view (CodeMirror's API).
  window.studioEditor = view;
  const metadata = metadataForm(view, !canEdit);
  document.getElementById("meta").append(metadata.form);
  metadata.fill();
  view.dom.addEventListener("focusout", () => metadata.fill());
  const format = async (fix) => {
    try {
      const formatted = await api(`/format${fix ? "?fix=safe" : ""}`, { method: "POST", text: view.state.doc.toString() });
      replaceDocument(view, formatted.text);
      forceLinting(view);
      metadata.fill();
    } catch (error) {
      say(error.message, "error");
    }
  };
  document.getElementById("format")?.addEventListener("click", () => format(false));
  document.getElementById("fix")?.addEventListener("click", () => format(true));
  document.getElementById("publish-form")?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    if (slug) {
      query.set("slug", slug);
      // Refused if someone published meanwhile, rather than undoing their version.
      query.set("base", String(base));
    } else if (slugInput.value.trim()) query.set("slug", slugInput.value.trim());
    if (note.value.trim()) query.set("note", note.value.trim());
    try {
      const published = await api(`/tools?${query}`, { method: "POST", text: view.state.doc.toString() });
      say(published.created ? `Published ${published.slug} v${published.version}.` : `Unchanged: ${published.slug} is still v${published.version}.`);
      base = published.version;
      if (!slug) location.href = path`/t/${published.slug}/edit`;
      else history(caller);
    } catch (error) {
      const errors = (error.problem?.diagnostics || []).filter((d) => d.severity === "error").length;
      const why = error.status === 409 ? `${error.message} Copy your changes, reload, and apply them again.` : errors ? `${errors} error(s) in the file.` : error.message;
      say(`Not published: ${why}`, "error");
    }
  });
  if (slug) history(caller);
}

start();
