// A conversation's turns in the studio: each answer as it streams, then as Markdown with a
// copy button; its facts, its pictures (each with a download link), the budget warnings its
// run started with; and a transcript's turns, read-only or with Retry. The box that asks the
// next turn is `composer.js`.

import { dollars, el, withCode } from "./common.js";
import { copyButton, markdown } from "./markdown.js";

/** The facts of a finished run: outcome, model, tokens (cached ones too), cost, latency. */
export function factsOf(run, latency) {
  const cached = run.cached_input_tokens ? ` (${run.cached_input_tokens} cached)` : "";
  // A smart run's tokens are its llm() calls'.
  const calls = run.llm_calls ? `${run.llm_calls.length} llm() call${run.llm_calls.length === 1 ? "" : "s"}` : null;
  const tokens = calls ?? `${run.input_tokens ?? "?"} in${cached}, ${run.output_tokens ?? "?"} out tokens`;
  const model = run.provider && run.model ? ` · ${run.provider}/${run.model}` : "";
  const time = latency ?? run.latency_ms;
  const line = run.line ? ` (line ${run.line} of the code)` : "";
  // A public snapshot's turn carries none of the counts: its outcome and model only.
  const counted = [run.input_tokens, run.output_tokens, run.cost_usd, run.llm_calls].some((fact) => fact !== null && fact !== undefined);
  const counts = counted ? ` · ${tokens} · ${dollars(run.cost_usd)}` : "";
  return [
    el("span", { class: `outcome ${run.outcome}` }, run.outcome),
    `${model}${counts}${time === null || time === undefined ? "" : ` · ${time} ms`}`,
    ...(run.error ? [el("span", { class: "problem" }, ` · ${run.error}${line}`)] : []),
  ];
}

/**
 * An answer's place: its text as it streams (plain), then as Markdown (or, for an answer that
 * is code or data, as it is), with a button that copies it. With `breaks`, each line break of
 * the text is one on the page (what a smart tool's code printed, line by line).
 */
export function answerView({ asMarkdown = true, breaks = false } = {}) {
  let text = "";
  const body = el("div", { class: "answer streaming" });
  const facts = el("p", { class: "facts" }, "Running…");
  const tools = el("div", { class: "answer-tools" }, copyButton(() => text, "Copy answer"));
  const calls = el("ol", { class: "calls", "aria-label": "Functions the model called" });
  const element = el("div", { class: "turn-answer" }, calls, body, tools, facts);
  return {
    element,
    facts,
    tools,
    /** A function the model asks for (a `call` event): shown as running. */
    called(call) {
      calls.append(callView(call));
    },
    /** A call that ended (a `result` event): the first of its name still running. */
    returned(result) {
      const running = [...calls.children].find((item) => item.dataset.name === result.name && item.classList.contains("running"));
      if (running) showResult(running, result);
      else calls.append(showResult(callView(result), result));
    },
    /** A kept turn's calls, each with its result. */
    showCalls(kept) {
      for (const call of kept ?? []) calls.append(showResult(callView(call), call));
    },
    append(piece) {
      text += piece;
      body.textContent = text;
    },
    finish(final) {
      if (final !== null && final !== undefined) text = final;
      body.classList.remove("streaming");
      body.replaceChildren(asMarkdown ? markdown(text, { breaks }) : el("pre", {}, text));
    },
    /** An image tool's pictures, above the lines that describe them. */
    showPictures(pictures) {
      if (pictures?.length) element.insertBefore(picturesView(pictures), body);
    },
  };
}

/** One function call: its name and arguments, its result folded under it once it ends. */
function callView(call) {
  const summary = el("summary", {}, el("code", {}, call.name), " ", el("span", { class: "call-arguments" }, call.arguments ?? ""));
  const item = el("li", { class: "call running" }, el("details", {}, summary, el("p", { class: "facts" }, "Running…")));
  item.dataset.name = call.name;
  return item;
}

/** `item` (a call) with its result, and whether it failed and how long it took. */
function showResult(item, result) {
  item.classList.remove("running");
  item.classList.toggle("failed", Boolean(result.failed));
  const how = result.failed ? "failed" : "returned";
  const details = item.querySelector("details");
  details.replaceChildren(details.querySelector("summary"), el("p", { class: "facts" }, `${how} in ${result.ms} ms`), el("pre", { class: "call-result" }, result.result ?? ""));
  return item;
}

/**
 * An image tool's pictures as the library keeps them with the run (`done.pictures`, a turn's
 * or a run's `pictures`): each shown at its own proportions, at most the column's width (or
 * as a thumbnail), and linked to itself at full size.
 */
export function picturesView(pictures, { thumbnails = false } = {}) {
  return el(
    "div",
    { class: thumbnails ? "pictures thumbnails" : "pictures" },
    pictures.map((picture) => {
      const name = `picture-${picture.run}-${picture.position}.${picture.format === "jpeg" ? "jpg" : picture.format}`;
      const image = el(
        "a",
        { href: picture.url, target: "_blank", rel: "noopener", title: `Open picture ${picture.position} at full size` },
        el("img", {
          src: picture.url,
          alt: `Picture ${picture.position} of run ${picture.run}: ${picture.width}×${picture.height} ${picture.format}`,
          width: picture.width,
          height: picture.height,
          loading: "lazy",
        }),
      );
      if (thumbnails) return image;
      return el("figure", {}, image, el("figcaption", {}, el("a", { href: picture.url, download: name, class: "download" }, `Download picture ${picture.position}`)));
    }),
  );
}

/** The budget warnings a run started with (its `start` event's), as a banner above its answer. */
export function warningsBanner(warnings) {
  return el("div", { class: "banner warning", role: "status" }, warnings.map((warning) => el("p", {}, ...withCode(`Budget warning: ${warning}.`))));
}

/** A button that asks `text` again, as a new turn, through `ask`. */
export function retryButton(text, ask) {
  return el("button", { type: "button", class: "secondary", onclick: () => ask(text) }, "Retry");
}

/** A follow-up as asked, shown as the text it is, with who asked it (`you` by default). */
export function askedView(text, who) {
  return el("div", { class: "turn-asked" }, el("p", { class: "who-asked" }, who ? `${who} asked` : "You asked"), el("p", { class: "asked-text" }, text));
}

/**
 * A transcript's turns (`GET /conversations/{id}` or a shared snapshot); the tool's own answer
 * as Markdown unless `firstAnswer` says it is shown as it is (code, data). With `retry`, each
 * follow-up has a Retry button that gives `retry` its question.
 */
export function transcriptView(messages, firstAnswer = "markdown", { retry = null } = {}) {
  return messages.map((message) => {
    const answer = answerView({ asMarkdown: message.turn !== 1 || firstAnswer === "markdown" });
    answer.finish(message.answer ?? (message.error ? `(no answer: ${message.error})` : "(no answer)"));
    answer.showCalls(message.calls);
    answer.showPictures(message.pictures);
    if (retry && message.turn !== 1 && message.asked) answer.tools.append(retryButton(message.asked, retry));
    answer.facts.replaceChildren(...factsOf(message));
    const asked = message.turn === 1 ? el("div", { class: "turn-asked" }, el("p", { class: "who-asked" }, "The prompt"), el("pre", { class: "prompt" }, message.asked ?? "")) : askedView(message.asked ?? "", message.asked_by ?? "Someone");
    return el("article", { class: "turn" }, asked, answer.element);
  });
}
