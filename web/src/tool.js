// A tool's page (`/t/SLUG`): what it is, a form made from its variables, the prompt rendered
// live, a Run button that streams the answer on a chosen model, a side-by-side comparison of
// two or three models, and the runs kept with their cost.

import { ApiError, api, canAct, dollars, el, header, path, runTool, say, session, slugOfPage, withCode } from "./common.js";
import { followUps } from "./composer.js";
import { answerView, factsOf, picturesView, warningsBanner } from "./thread.js";

const slug = slugOfPage();
const params = new URLSearchParams(location.search);
const main = document.getElementById("main");
let version = null;
let fields = [];
let models = [];
/** Whether the tool's answers read as Markdown (text), or are shown as they are (code, data). */
let answersInMarkdown = true;
/** Whether the tool makes pictures (an image tool): its runs have no follow-ups. */
let makesPictures = false;
/** Whether each line break of an answer is one on the page (a smart tool's printed lines). */
let lineBreaks = false;

/** The form's values, as `render --vars` takes them. */
function values() {
  const collected = {};
  for (const field of fields) {
    const value = field.read();
    if (value !== undefined) collected[field.name] = value;
  }
  return collected;
}

/** One form control for a variable, and how to read it. */
function field(variable, onChange) {
  const id = `var-${variable.name}`;
  const allowed = variable.allowed_values || [];
  const required = variable.default === undefined || variable.default === null;
  const label = el("label", { for: id }, variable.name, required ? el("span", { class: "required" }, " (required)") : null);
  const help = variable.description ? el("p", { class: "help", id: `${id}-help` }, withCode(variable.description)) : null;
  const described = help ? `${id}-help` : undefined;
  const type = variable.type;
  if (type === "multi-select" && allowed.length) {
    const chosen = new Set([].concat(variable.default ?? []));
    let touched = false;
    const changed = () => {
      touched = true;
      onChange();
    };
    const boxes = allowed.map((value, index) =>
      el(
        "label",
        { class: "choice" },
        el("input", { type: "checkbox", value, id: index === 0 ? id : undefined, checked: chosen.has(value), onchange: changed }),
        ` ${value}`,
      ),
    );
    const legend = el("legend", {}, variable.name, required ? el("span", { class: "required" }, " (required)") : null);
    const group = el("fieldset", { class: "field", "aria-describedby": described }, legend, help, ...boxes);
    return {
      name: variable.name,
      element: group,
      // Untouched, the tool's default applies; once touched, the ticks are the value, even none.
      read: () => {
        const picked = boxes.map((box) => box.querySelector("input")).filter((input) => input.checked).map((input) => input.value);
        return picked.length || touched ? picked : undefined;
      },
    };
  }
  if (type === "multi-select") {
    // No allowed values: a tag picker (type a value, Enter adds it).
    const chips = el("ul", { class: "chips", "aria-label": `${variable.name}: chosen` });
    const picked = [].concat(variable.default ?? []);
    const redraw = () => {
      chips.replaceChildren(
        ...picked.map((value, index) =>
          el("li", {}, value, " ", el("button", { type: "button", "aria-label": `Remove ${value}`, onclick: () => { picked.splice(index, 1); redraw(); onChange(); } }, "×")),
        ),
      );
    };
    const input = el("input", {
      id,
      type: "text",
      "aria-describedby": described,
      onkeydown: (event) => {
        if (event.key === "Enter" && input.value.trim()) {
          event.preventDefault();
          picked.push(input.value.trim());
          input.value = "";
          redraw();
          onChange();
        }
      },
    });
    redraw();
    return { name: variable.name, element: el("div", { class: "field" }, label, help, chips, input), read: () => (picked.length ? [...picked] : undefined) };
  }
  if (type === "single-select" && allowed.length) {
    const select = el(
      "select",
      { id, onchange: onChange, "aria-describedby": described, required },
      required ? el("option", { value: "" }, "Choose…") : null,
      allowed.map((value) => el("option", { value, selected: value === variable.default }, value)),
    );
    return { name: variable.name, element: el("div", { class: "field" }, label, help, select), read: () => select.value || undefined };
  }
  const area = el("textarea", { id, rows: 3, oninput: onChange, "aria-describedby": described, required, placeholder: variable.default ?? "" });
  if (variable.default !== undefined && variable.default !== null) area.value = String(variable.default);
  const upload = documentUpload(variable.name, area, onChange);
  return { name: variable.name, element: el("div", { class: "field" }, label, help, area, upload), read: () => (area.value === "" ? undefined : area.value) };
}

/** The types of document the server reads (docs/documents.md), for the file picker. */
const DOCUMENT_TYPES = ".pdf,.docx,.odt,.html,.htm,.xhtml,.md,.markdown,.txt,text/plain,text/html,text/markdown,application/pdf";

/**
 * A text variable's "fill from a document" picker: the server reads the document's text (PDF,
 * DOCX, ODT, HTML, Markdown, text) and the text becomes the field's value; a document without
 * text (a scanned PDF) says why, and leaves the field as it was.
 */
function documentUpload(name, area, onChange) {
  const status = el("span", { class: "document-status", role: "status" });
  const input = el("input", { type: "file", id: `document-${name}`, accept: DOCUMENT_TYPES });
  input.addEventListener("change", async () => {
    const file = input.files?.[0];
    if (!file) return;
    status.classList.remove("problem");
    status.textContent = `Reading ${file.name}…`;
    const form = new FormData();
    form.append("file", file, file.name);
    try {
      const read = await api("/documents/text", { method: "POST", form });
      area.value = read.text;
      onChange();
      const pages = read.pages ? `, ${read.pages} page${read.pages === 1 ? "" : "s"}` : "";
      status.textContent = `${file.name}: ${read.kind}${pages}, ${read.characters.toLocaleString("en")} characters`;
    } catch (error) {
      status.classList.add("problem");
      status.replaceChildren(...withCode(`${file.name}: ${error.message}`));
    }
    input.value = "";
  });
  const label = el("label", { for: input.id, class: "document-label" }, `Fill ${name} from a document`);
  return el("div", { class: "document" }, label, input, status);
}

let rendering = null;
async function renderPrompt() {
  const target = document.getElementById("rendered");
  const ask = (rendering = {});
  try {
    const rendered = await api(path`/tools/${slug}/render?version=${version}`, { method: "POST", json: values() });
    if (ask !== rendering) return;
    target.textContent = rendered.prompt;
    target.classList.remove("problem", "pending");
  } catch (error) {
    if (ask !== rendering) return;
    // A value still to give is not a problem yet: the prompt shows once the form is filled.
    const waiting = error.status === 422 && /no value for/.test(error.message);
    target.replaceChildren(...withCode(waiting ? `The prompt shows here once the form is filled in (${error.message}).` : error.message));
    target.classList.toggle("problem", !waiting);
    target.classList.toggle("pending", waiting);
  }
}

/** A model's price per million tokens, in and out, for the picker. */
function price(model) {
  if (model.input_per_million === null || model.input_per_million === undefined) return " (unpriced)";
  if (model.input_per_million === 0 && model.output_per_million === 0) return " (free)";
  return ` ($${model.input_per_million}/M in, $${model.output_per_million}/M out)`;
}

function modelPicker(id, label) {
  return el(
    "div",
    { class: "field" },
    el("label", { for: id }, label),
    el(
      "select",
      { id },
      el("option", { value: "" }, "The tool's own choice"),
      models.map((model) =>
        el("option", { value: model.id, disabled: !model.ready }, `${model.id}${price(model)}${model.ready ? "" : " (not set up)"}`),
      ),
    ),
  );
}

/**
 * Runs the tool on `model` into `into`, showing the answer as it streams and then its facts;
 * with `thread`, the follow-ups of the conversation it starts go under it.
 */
async function runInto(into, model, signal, thread = false) {
  // Not a live region: a screen reader would read every piece as it streams. The outcome is
  // announced once, in the status line.
  const answer = answerView({ asMarkdown: answersInMarkdown, breaks: lineBreaks });
  into.replaceChildren(answer.element);
  const started = performance.now();
  let conversation = null;
  try {
    await runTool(slug, { values: values(), model: model || undefined }, (name, data) => {
      if (name === "start") {
        answer.facts.textContent = `Running on ${data.provider}/${data.model}…`;
        conversation = data.conversation;
        if (data.warnings?.length) into.prepend(warningsBanner(data.warnings));
      }
      if (name === "text") answer.append(data.text);
      if (name === "call") answer.called(data);
      if (name === "result") answer.returned(data);
      if (name === "done") {
        answer.finish(data.answer);
        answer.showPictures(data.pictures);
        if (data.printed) into.append(printedView(data.printed, data.printed_dropped));
        say(`The run on ${data.provider}/${data.model} ended: ${data.outcome}.`);
        answer.facts.replaceChildren(...factsOf(data, data.latency_ms ?? Math.round(performance.now() - started)));
        if (thread && conversation && (data.outcome === "ok" || data.outcome === "rejected")) followUps(into, conversation, { askable: !makesPictures, model: `${data.provider}/${data.model}` });
        if (thread && conversation) {
          // The conversation's own address: a reload opens it where it stopped.
          history.replaceState(null, "", path`/c/${conversation}`);
          document.dispatchEvent(new Event("studio:conversations"));
        }
      }
    }, { signal, version });
  } catch (error) {
    answer.facts.replaceChildren(...withCode(error instanceof ApiError ? error.message : `The run stopped: ${error.message}`));
    answer.facts.classList.add("problem");
  }
}

/** What a smart tool's code printed, folded away under the answer. */
function printedView(printed, dropped) {
  const more = dropped ? `\n(${dropped} more bytes printed, not kept)` : "";
  return el("details", { class: "printed" }, el("summary", {}, "What the code printed"), el("pre", {}, printed + more));
}

async function showRuns() {
  const table = document.getElementById("runs");
  if (!(await session())) {
    // The runs are shown to members only: nothing is asked for.
    table.replaceChildren(el("caption", {}, el("a", { href: signInHere() }, "Sign in"), " to see the runs."));
    return;
  }
  let runs = [];
  try {
    runs = await api(path`/tools/${slug}/runs?limit=20`);
  } catch {
    table.replaceChildren(el("caption", {}, "Sign in to see the runs."));
    return;
  }
  if (!runs.length) {
    table.replaceChildren(el("caption", {}, "Recent runs"), el("tbody", {}, el("tr", {}, el("td", { class: "empty" }, "No runs yet: fill in the form and press Run."))));
    return;
  }
  const pictured = runs.some((run) => run.pictures?.length);
  table.replaceChildren(
    el("caption", {}, "Recent runs"),
    el("thead", {}, el("tr", {}, [...["When", "Version", "Model", "Outcome", "Tokens", "Cost", "Latency", "By"], ...(pictured ? ["Pictures"] : [])].map((h) => el("th", { scope: "col" }, h)))),
    el(
      "tbody",
      {},
      runs.map((run) =>
        el(
          "tr",
          {},
          el("td", {}, run.started_at.replace("T", " ").slice(0, 19)),
          el("td", {}, run.version),
          el("td", {}, `${run.provider}/${run.model}`),
          el("td", {}, run.outcome),
          el("td", {}, `${run.input_tokens ?? "?"} / ${run.output_tokens ?? "?"}`),
          el("td", {}, dollars(run.cost_usd)),
          el("td", {}, run.latency_ms === null ? "" : `${run.latency_ms} ms`),
          el("td", {}, run.run_by ?? ""),
          // An image tool's pictures, to whoever may see them (who ran it, and admins).
          pictured ? el("td", {}, run.pictures?.length ? picturesView(run.pictures, { thumbnails: true }) : "") : null,
        ),
      ),
    ),
  );
}

/** The sign-in page, coming back here. */
function signInHere() {
  return `/signin?next=${encodeURIComponent(location.pathname + location.search)}`;
}

/** What the page shows when the tool cannot be shown: why, in words, and where to go. */
function notShown(error) {
  if (error.status === 401) {
    return [
      el("h1", {}, slug),
      el("p", {}, "This library is open to its members only. ", el("a", { href: signInHere() }, "Sign in"), " to see this tool."),
    ];
  }
  if (error.status === 404) {
    return [
      el("h1", {}, "No such tool"),
      el("p", {}, ...withCode(error.message)),
      el("p", {}, el("a", { href: "/" }, "See every tool in the gallery")),
    ];
  }
  return [el("h1", {}, slug), el("p", { class: "problem" }, ...withCode(error.message))];
}

async function main_() {
  const caller = await header();
  let tool;
  try {
    const asked = params.get("version");
    // A version is a number: `?version=../../other` must not name another tool's address.
    if (asked !== null && !/^[1-9][0-9]{0,9}$/.test(asked)) {
      throw new ApiError({ status: 400, title: "Bad Request", detail: `\`${asked}\` is not a version number` });
    }
    const label = params.get("label");
    tool = await api(asked ? path`/tools/${slug}/versions/${asked}` : label ? path`/tools/${slug}?label=${label}` : path`/tools/${slug}`);
  } catch (error) {
    main.replaceChildren(...notShown(error));
    return;
  }
  version = tool.version;
  const meta = tool.tool.metadata || {};
  // A smart tool runs its Python code (in the server's sandbox): no prompt, no comparison.
  const smart = tool.kind === "smart";
  const title = meta.prompt_name || meta.tool_name || slug;
  const kind = meta.expected_output?.type ?? "text";
  answersInMarkdown = kind === "text" && !["json", "xml", "csv"].includes(meta.expected_output?.format);
  makesPictures = kind === "image";
  lineBreaks = smart;
  document.title = `${title} · llmtool studio`;
  models = await api("/models").catch(() => []);
  // The server gives the variables as llmtool reads them (canonical type names).
  fields = (tool.variables || []).map((variable) => field(variable, smart ? () => {} : renderPrompt));
  const stop = { controller: null };
  const runButton = el("button", { type: "submit", disabled: !caller }, "Run");
  const output = el("div", { id: "output" });
  const form = el(
    "form",
    {
      id: "run-form",
      onsubmit: async (event) => {
        event.preventDefault();
        stop.controller = new AbortController();
        runButton.disabled = true;
        await runInto(output, document.getElementById("model").value, stop.controller.signal, true);
        // Still signed in? (The session may have ended during the run.)
        runButton.disabled = !(await session());
        runButton.focus();
        showRuns();
      },
    },
    fields.map((f) => f.element),
    modelPicker("model", smart ? "Model for the code's llm() calls" : "Model"),
    runButton,
    caller ? null : el("p", { class: "help" }, el("a", { href: signInHere() }, "Sign in"), " to run tools."),
  );
  const compareOutputs = [0, 1, 2].map(() => el("div", { class: "compare-column" }));
  const compareButton = el("button", { type: "submit", disabled: !caller }, "Compare");
  const compare = el(
    "form",
    {
      id: "compare-form",
      onsubmit: async (event) => {
        event.preventDefault();
        // One comparison at a time: a double click must not pay twice.
        compareButton.disabled = true;
        const picked = [0, 1, 2].map((i) => document.getElementById(`compare-${i}`).value);
        const runs = picked.map((model, i) => (i < 2 || model ? runInto(compareOutputs[i], model) : Promise.resolve(compareOutputs[i].replaceChildren())));
        await Promise.all(runs);
        compareButton.disabled = !(await session());
        compareButton.focus();
        showRuns();
      },
    },
    el("div", { class: "compare-pickers" }, [0, 1, 2].map((i) => modelPicker(`compare-${i}`, i < 2 ? `Model ${i + 1}` : "Model 3 (optional)"))),
    compareButton,
    caller ? null : el("p", { class: "help" }, el("a", { href: signInHere() }, "Sign in"), " to compare models."),
    el("div", { class: "compare-results" }, compareOutputs),
  );
  // A session that ends while the page is open turns running off.
  document.addEventListener("studio:signed-out", () => {
    runButton.disabled = true;
    compareButton.disabled = true;
  });
  main.replaceChildren(
    el(
      "div",
      { class: "tool-head" },
      el("h1", {}, title, smart ? el("span", { class: "kind smart", title: "Runs Python code in the server's sandbox" }, "smart") : null),
      el("p", { class: "facts" }, `${slug} v${tool.version}`, tool.labels.length ? ` · labels: ${tool.labels.join(", ")}` : "", tool.tags.length ? ` · tags: ${tool.tags.join(", ")}` : ""),
      meta.description ? el("p", {}, withCode(meta.description)) : null,
      meta.usage_notes ? el("p", { class: "help" }, withCode(meta.usage_notes)) : null,
      meta.creator?.name ? el("p", { class: "facts" }, `by ${meta.creator.name}`) : null,
      el("p", {}, canAct(caller, "editor") ? el("a", { href: path`/t/${slug}/edit` }, "Edit") : null, " ", el("a", { href: `${path`/t/${slug}/edit`}#history` }, "History")),
    ),
    el(
      "section",
      { "aria-labelledby": "run-heading" },
      el("h2", { id: "run-heading" }, "Run"),
      form,
      el("h3", {}, smart ? "The code" : "The prompt"),
      smart ? el("pre", { id: "tool-code", class: "source" }, tool.code) : el("pre", { id: "rendered", class: "prompt" }),
      el("h3", {}, smart ? "The result" : "The answer"),
      output,
    ),
    ...(smart ? [] : [el("section", { "aria-labelledby": "compare-heading" }, el("h2", { id: "compare-heading" }, "Compare models"), compare)]),
    el("section", { "aria-labelledby": "runs-heading" }, el("h2", { id: "runs-heading" }, "Runs"), el("table", { id: "runs" })),
  );
  say("");
  if (!smart) renderPrompt();
  showRuns();
}

main_();
