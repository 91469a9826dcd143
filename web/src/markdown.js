// A model's answer as Markdown, made into page elements without ever parsing HTML: marked's
// lexer reads the Markdown into tokens, and each token becomes an element built with `el`
// (its text set as text). Raw HTML in an answer shows as the text it is; links go only to
// http(s) and mailto addresses, and open in a new tab without the page's reference.

import { Lexer } from "marked";
import { el } from "./common.js";

/** The addresses a link may have. */
const SAFE_LINK = /^(https?:|mailto:)/i;

/** `text` as Markdown: a fragment of elements; with `breaks`, each line break is one. */
export function markdown(text, { breaks = false } = {}) {
  const fragment = document.createDocumentFragment();
  fragment.append(...blocks(Lexer.lex(String(text ?? ""), { gfm: true, breaks })));
  return fragment;
}

function blocks(tokens) {
  return tokens.map(block).filter(Boolean);
}

function block(token) {
  switch (token.type) {
    case "heading":
      // An answer's headings sit under the page's own: one level down, at most h6.
      return el(`h${Math.min(token.depth + 2, 6)}`, {}, inline(token.tokens));
    case "paragraph":
      return el("p", {}, inline(token.tokens));
    case "text":
      return el("p", {}, token.tokens ? inline(token.tokens) : token.text);
    case "code":
      return codeBlock(token.text, token.lang);
    case "blockquote":
      return el("blockquote", {}, blocks(token.tokens));
    case "list": {
      const start = token.ordered && token.start !== "" && token.start !== 1 ? token.start : undefined;
      return el(token.ordered ? "ol" : "ul", { start }, token.items.map(listItem));
    }
    case "table":
      return el(
        "table",
        { class: "answer-table" },
        el("thead", {}, el("tr", {}, token.header.map((cell) => el("th", { scope: "col" }, inline(cell.tokens))))),
        el("tbody", {}, token.rows.map((row) => el("tr", {}, row.map((cell) => el("td", {}, inline(cell.tokens)))))),
      );
    case "hr":
      return el("hr");
    case "html":
      return el("p", {}, token.text);
    case "space":
      return null;
    default:
      return token.text ? el("p", {}, token.text) : null;
  }
}

function listItem(item) {
  // A tight list's item holds text tokens: their inline content, not paragraphs.
  const content = item.tokens.flatMap((token) => (token.type === "text" && !item.loose ? inline(token.tokens ?? [token]) : [block(token)]));
  const box = item.task ? el("input", { type: "checkbox", checked: item.checked, disabled: true, "aria-label": item.checked ? "done" : "not done" }) : null;
  return el("li", {}, box, box ? " " : null, content);
}

function inline(tokens = []) {
  return tokens.map((token) => {
    switch (token.type) {
      case "strong":
        return el("strong", {}, inline(token.tokens));
      case "em":
        return el("em", {}, inline(token.tokens));
      case "del":
        return el("del", {}, inline(token.tokens));
      case "codespan":
        return el("code", {}, token.text);
      case "br":
        return el("br");
      case "link":
        return SAFE_LINK.test(token.href)
          ? el("a", { href: token.href, title: token.title || undefined, target: "_blank", rel: "noopener noreferrer" }, inline(token.tokens))
          : el("span", {}, inline(token.tokens));
      case "image":
        // Never fetched: an answer must not make the reader's browser call an address.
        return el("span", { class: "image-text" }, `[image: ${token.text || token.href}]`);
      case "text":
      case "escape":
        return token.tokens ? inline(token.tokens) : unescaped(token.text);
      default:
        return unescaped(token.text ?? "");
    }
  });
}

/** The characters marked's lexer writes as entities in some text, as the characters. */
const ENTITIES = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };

function unescaped(text) {
  return String(text).replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]);
}

/** A code block with a button that copies its text. */
function codeBlock(text, lang) {
  const code = el("code", { class: lang ? `language-${lang}` : undefined }, text);
  return el("div", { class: "code-block" }, copyButton(() => text, "Copy code"), el("pre", {}, code));
}

/** A button that copies what `read` gives, saying so on itself for a moment. */
export function copyButton(read, label = "Copy") {
  const button = el("button", { type: "button", class: "copy" }, label);
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(read());
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed";
    }
    setTimeout(() => (button.textContent = label), 1500);
  });
  return button;
}
