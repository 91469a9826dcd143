// llmtool's expected output, enforced on the model's answer before promptfoo's assertions see
// it (a promptfoo `transform`: the body of a function of `output`). It computes what llmtool's
// `output::enforce` does: a `limited` tool's allowed value, a `code` tool's fenced block, a
// JSON answer pretty-printed; an answer that does not meet it is an error, which fails the
// test whatever its assertions say, as llmtool fails the case.
const spec = __SPEC__;

// Every fenced block (three or more backticks or tildes), in order; an unclosed one runs to
// the end of the text.
function fencedBlocks(text) {
  const lines = [];
  for (let start = 0; !(start > text.length || (start === text.length && text.length > 0)); ) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    lines.push([start, end]);
    start = end + 1;
  }
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const opening = text.slice(lines[i][0], lines[i][1]).trimStart();
    const marker = opening[0];
    if (marker !== "`" && marker !== "~") continue;
    let length = 0;
    while (opening[length] === marker) length++;
    if (length < 3) continue;
    const fence = opening.slice(0, length);
    const info = opening.slice(length).trim();
    const contentStart = Math.min(lines[i][1] + 1, text.length);
    let contentEnd = text.length;
    for (i = i + 1; i < lines.length; i++) {
      const inner = text.slice(lines[i][0], lines[i][1]).trim();
      if (inner.startsWith(fence) && inner.split(marker).join("") === "") {
        contentEnd = lines[i][0];
        break;
      }
    }
    let content = text.slice(contentStart, Math.max(contentEnd, contentStart));
    if (content.endsWith("\n")) content = content.slice(0, -1);
    blocks.push({ info, content });
  }
  return blocks;
}

// The text inside, when the whole answer is one fenced block; otherwise the answer, trimmed.
function unwrapFence(text) {
  const trimmed = text.trim();
  const blocks = fencedBlocks(trimmed);
  const fenced = /^[`~]/.test(trimmed) && /[`~]$/.test(trimmed);
  return blocks.length === 1 && fenced ? blocks[0].content : trimmed;
}

// The block in the tool's language (or a short name of it), else the first, else the answer.
function extractCode(answer) {
  const blocks = fencedBlocks(answer);
  const wanted = spec.language === null ? null : spec.language.toLowerCase();
  const named = blocks.find((block) => {
    const info = (block.info.split(/\s+/)[0] || "").toLowerCase();
    return wanted !== null && (info === wanted || spec.aliases.includes(info));
  });
  const block = named || blocks[0];
  return block ? block.content : answer.trim();
}

// An answer as llmtool compares it with an allowed value: no surrounding quotes, final
// punctuation or whitespace, and lower case.
function normalize(text) {
  const quotes = ['"', "'", "`", "\u201c", "\u201d", "\u2018", "\u2019", "\u00ab", "\u00bb", "*"];
  const final = [".", "!", "?", ",", ";", ":", "\u3002", "\uff01", "\uff1f"];
  text = text.trim();
  for (;;) {
    const before = text;
    while (text.length > 0 && final.includes(text[text.length - 1])) text = text.slice(0, -1);
    text = text.trim();
    if (text.length >= 2 && quotes.includes(text[0]) && quotes.includes(text[text.length - 1])) {
      text = text.slice(1, -1).trim();
    }
    if (text === before) break;
  }
  return text.toLowerCase();
}

if (spec.kind === "limited") {
  const value = spec.allowed.find((allowed) => normalize(allowed) === normalize(output));
  if (value === undefined) {
    throw new Error("the answer is not one of the allowed values: " + spec.allowed.join(", "));
  }
  return value;
}
const body = spec.kind === "code" ? extractCode(output) : output;
if (spec.format === "json") {
  let value;
  try {
    value = JSON.parse(unwrapFence(body));
  } catch (error) {
    throw new Error("the answer is not in the expected format: it is not valid JSON");
  }
  return JSON.stringify(value, null, 2);
}
if (spec.format === "xml" || spec.format === "csv") return unwrapFence(body);
return body;
