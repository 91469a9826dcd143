// The spend page's charts, drawn as SVG: each one an image with a title and a description
// that says what it shows in words (`role="img"`, `aria-labelledby`), and every figure in a
// table beside it for those who read tables rather than pictures. Colours are distinguishable
// and each bar carries its own `<title>` for a pointer's hover.

const NS = "http://www.w3.org/2000/svg";

/** An SVG element, its text set as text. */
function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** Eight colours apart for readers with the common colour-vision deficiencies (Okabe-Ito). */
export const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];

let charts = 0;

/** The chart's frame: an SVG of `width` by `height` with its title and description. */
function frame(width, height, title, description) {
  const id = `chart-${++charts}`;
  return svg(
    "svg",
    { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-labelledby": `${id}-title ${id}-desc`, class: "chart" },
    svg("title", { id: `${id}-title` }, title),
    svg("desc", { id: `${id}-desc` }, description),
  );
}

/**
 * Columns of `days`, each stacked by `series` (`values[day][series]`), with a legend.
 * `format` writes a value.
 */
export function stackedColumns({ title, description, days, series, values, format }) {
  const width = 720;
  const height = 260;
  const left = 64;
  const bottom = 40;
  const top = 12;
  const chart = frame(width, height + 24 * Math.ceil(series.length / 4), title, description);
  const totals = days.map((day) => series.reduce((sum, name) => sum + (values[day]?.[name] ?? 0), 0));
  const most = Math.max(...totals, 0) || 1;
  const plot = height - bottom - top;
  const step = (width - left - 8) / Math.max(days.length, 1);
  const barWidth = Math.max(Math.min(step * 0.7, 40), 2);
  chart.append(svg("line", { x1: left, x2: width - 8, y1: top + plot, y2: top + plot, stroke: "#4a5360" }));
  for (const fraction of [0, 0.5, 1]) {
    const y = top + plot - plot * fraction;
    chart.append(svg("text", { x: left - 6, y: y + 4, "text-anchor": "end", "font-size": 11, fill: "#4a5360" }, format(most * fraction)));
  }
  days.forEach((day, index) => {
    let y = top + plot;
    const x = left + index * step + (step - barWidth) / 2;
    series.forEach((name, s) => {
      const value = values[day]?.[name] ?? 0;
      if (value <= 0) return;
      const tall = (value / most) * plot;
      y -= tall;
      chart.append(
        svg("rect", { x, y, width: barWidth, height: Math.max(tall, 0.5), fill: PALETTE[s % PALETTE.length] },
          svg("title", {}, `${day}, ${name || "no team"}: ${format(value)}`)),
      );
    });
    if (days.length <= 16 || index % Math.ceil(days.length / 16) === 0) {
      chart.append(svg("text", { x: x + barWidth / 2, y: height - bottom + 16, "text-anchor": "middle", "font-size": 10, fill: "#4a5360" }, day.slice(5)));
    }
  });
  series.forEach((name, s) => {
    const x = left + (s % 4) * 160;
    const y = height + 24 * Math.floor(s / 4);
    chart.append(svg("rect", { x, y: y - 10, width: 12, height: 12, fill: PALETTE[s % PALETTE.length] }));
    chart.append(svg("text", { x: x + 18, y, "font-size": 12, fill: "#1b1f24" }, name || "no team"));
  });
  return chart;
}

/** Horizontal bars of `items` (`{label, value}`), largest first, each labelled with its value. */
export function bars({ title, description, items, format }) {
  const width = 720;
  const row = 26;
  const label = 220;
  const chart = frame(width, Math.max(items.length, 1) * row + 8, title, description);
  const most = Math.max(...items.map((item) => item.value), 0) || 1;
  items.forEach((item, index) => {
    const y = 4 + index * row;
    const long = ((width - label - 120) * item.value) / most;
    chart.append(svg("text", { x: label - 8, y: y + 16, "text-anchor": "end", "font-size": 12, fill: "#1b1f24" }, item.label.length > 32 ? `${item.label.slice(0, 31)}…` : item.label));
    chart.append(svg("rect", { x: label, y: y + 3, width: Math.max(long, 1), height: row - 8, fill: PALETTE[0] }, svg("title", {}, `${item.label}: ${format(item.value)}`)));
    chart.append(svg("text", { x: label + Math.max(long, 1) + 6, y: y + 16, "font-size": 12, fill: "#1b1f24" }, format(item.value)));
  });
  return chart;
}
