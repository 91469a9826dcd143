// A conversation in the studio: under a run's answer, the follow-ups asked after it (each
// streamed as the run was, then shown as Markdown with a copy button), the box to ask the next
// one, and a share link; and the same turns read-only, for a shared snapshot.

import { ApiError, api, dollars, el, path, say, streamRun, withCode } from "./common.js";
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
  return [
    el("span", { class: `outcome ${run.outcome}` }, run.outcome),
    `${model} · ${tokens} · ${dollars(run.cost_usd)}${time === null || time === undefined ? "" : ` · ${time} ms`}`,
    ...(run.error ? [el("span", { class: "problem" }, ` · ${run.error}${line}`)] : []),
  ];
}

/**
 * An answer's place: its text as it streams (plain), then as Markdown (or, for an answer that
 * is code or data, as it is), with a button that copies it.
 */
export function answerView({ asMarkdown = true } = {}) {
  let text = "";
  const body = el("div", { class: "answer streaming" });
  const facts = el("p", { class: "facts" }, "Running…");
  const element = el("div", { class: "turn-answer" }, body, el("div", { class: "answer-tools" }, copyButton(() => text, "Copy answer")), facts);
  return {
    element,
    facts,
    append(piece) {
      text += piece;
      body.textContent = text;
    },
    finish(final) {
      if (final !== null && final !== undefined) text = final;
      body.classList.remove("streaming");
      body.replaceChildren(asMarkdown ? markdown(text) : el("pre", {}, text));
    },
    /** An image tool's pictures, above the lines that describe them. */
    showPictures(pictures) {
      if (pictures?.length) element.insertBefore(picturesView(pictures), body);
    },
  };
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
    pictures.map((picture) =>
      el(
        "a",
        { href: picture.url, target: "_blank", rel: "noopener", title: `Open picture ${picture.position} at full size` },
        el("img", {
          src: picture.url,
          alt: `Picture ${picture.position} of run ${picture.run}: ${picture.width}×${picture.height} ${picture.format}`,
          width: picture.width,
          height: picture.height,
          loading: "lazy",
        }),
      ),
    ),
  );
}

/** A follow-up as asked, shown as the text it is, with who asked it (`you` by default). */
function askedView(text, who) {
  return el("div", { class: "turn-asked" }, el("p", { class: "who-asked" }, who ? `${who} asked` : "You asked"), el("p", { class: "asked-text" }, text));
}

/**
 * The follow-ups of conversation `id` under its first answer, in `into`: the turns asked
 * here, a box to ask the next (unless not `askable`: an image tool's run has no follow-ups),
 * and a button that makes a share link.
 */
export function followUps(into, id, { askable = true } = {}) {
  const turns = el("div", { class: "turns" });
  const box = el("textarea", { id: "follow-up", rows: 2, required: true });
  const ask = el("button", { type: "submit" }, "Ask");
  const form = el(
    "form",
    {
      class: "follow-up",
      onsubmit: async (event) => {
        event.preventDefault();
        const text = box.value.trim();
        if (!text) return;
        ask.disabled = true;
        await askFollowUp(turns, id, text);
        box.value = "";
        ask.disabled = false;
        box.focus();
      },
    },
    el("label", { for: "follow-up" }, "Ask a follow-up"),
    box,
    ask,
  );
  const shared = el("p", { class: "share-link" });
  const share = el("button", { type: "button", onclick: () => makeLink(id, shared) }, "Share");
  into.append(el("section", { class: "thread", "aria-label": "Follow-ups" }, turns, askable ? form : null, el("div", { class: "share" }, share, shared)));
}

/** Asks `text` in conversation `id`, its turn added to `turns` as it streams. */
async function askFollowUp(turns, id, text) {
  const answer = answerView();
  turns.append(el("article", { class: "turn" }, askedView(text), answer.element));
  const started = performance.now();
  try {
    await streamRun(path`/api/v1/conversations/${id}/messages`, { text }, (name, data) => {
      if (name === "start" && data.notices?.length) say(data.notices.join(" "));
      if (name === "text") answer.append(data.text);
      if (name === "done") {
        answer.finish(data.answer);
        say(`The follow-up on ${data.provider}/${data.model} ended: ${data.outcome}.`);
        answer.facts.replaceChildren(...factsOf(data, Math.round(performance.now() - started)));
        document.dispatchEvent(new Event("studio:conversations"));
      }
    });
  } catch (error) {
    answer.facts.replaceChildren(...withCode(error instanceof ApiError ? error.message : `The follow-up stopped: ${error.message}`));
    answer.facts.classList.add("problem");
  }
}

/** Makes a share link of conversation `id`, shown in `into` with a button that copies it. */
async function makeLink(id, into) {
  try {
    const link = await api(path`/conversations/${id}/share`, { method: "POST" });
    const address = new URL(link.url, location.origin).href;
    const field = el("input", { type: "text", readonly: true, value: address, "aria-label": "Share link", class: "share-address" });
    into.replaceChildren(field, " ", copyButton(() => address, "Copy link"), el("span", { class: "help" }, ` A snapshot of ${link.turns} turn(s), for members who may see this tool.`));
    say("The share link is ready.");
  } catch (error) {
    say(error.message, "error");
  }
}

/**
 * A transcript's turns (`GET /conversations/{id}` or a shared snapshot), read-only; the tool's
 * own answer as Markdown unless `firstAnswer` says it is shown as it is (code, data).
 */
export function transcriptView(messages, firstAnswer = "markdown") {
  return messages.map((message) => {
    const answer = answerView({ asMarkdown: message.turn !== 1 || firstAnswer === "markdown" });
    answer.finish(message.answer ?? (message.error ? `(no answer: ${message.error})` : "(no answer)"));
    answer.showPictures(message.pictures);
    answer.facts.replaceChildren(...factsOf(message));
    const asked = message.turn === 1 ? el("div", { class: "turn-asked" }, el("p", { class: "who-asked" }, "The prompt"), el("pre", { class: "prompt" }, message.asked ?? "")) : askedView(message.asked ?? "", message.asked_by ?? "Someone");
    return el("article", { class: "turn" }, asked, answer.element);
  });
}
