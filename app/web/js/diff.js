// Line diffs by jsdiff (`diffLines`, `parsePatch`), rendered with a few lines of
// context around each change.

import { diffLines, parsePatch } from "../vendor/diff/libesm/index.js";
import { h } from "./dom.js";

const linesOf = (text) => (text === "" ? [] : text.replace(/\n$/, "").split("\n"));

// -> [{op: " " | "-" | "+", text}]
export function lineDiff(before, after) {
  const ops = [];
  for (const part of diffLines(before || "", after || "")) {
    const op = part.added ? "+" : part.removed ? "-" : " ";
    for (const text of linesOf(part.value)) ops.push({ op, text });
  }
  return ops;
}

export function diffStats(ops) {
  return {
    added: ops.filter((o) => o.op === "+").length,
    removed: ops.filter((o) => o.op === "-").length,
  };
}

export function renderDiff(ops, context = 3) {
  const out = document.createDocumentFragment();
  const keep = new Array(ops.length).fill(false);
  ops.forEach((o, index) => {
    if (o.op === " ") return;
    for (let k = Math.max(0, index - context); k <= Math.min(ops.length - 1, index + context); k += 1) {
      keep[k] = true;
    }
  });
  if (!ops.some((o) => o.op !== " ")) {
    out.append(h("span", { class: "d-same" }, "No differences."));
    return out;
  }
  let skipped = 0;
  const flush = () => {
    if (skipped) out.append(h("span", { class: "d-skip" }, `⋯ ${skipped} unchanged line${skipped === 1 ? "" : "s"}\n`));
    skipped = 0;
  };
  ops.forEach((o, index) => {
    if (!keep[index]) {
      skipped += 1;
      return;
    }
    flush();
    const cls = o.op === "+" ? "d-add" : o.op === "-" ? "d-del" : "d-ctx";
    out.append(h("span", { class: cls }, `${o.op} ${o.text}\n`));
  });
  flush();
  return out;
}

// A unified diff (as the server sends a proposal's `diff`) as the same view: each hunk
// starts with an "@" op carrying its header; file headers are left out.
export function unifiedOps(text) {
  const ops = [];
  for (const patch of parsePatch(text || "")) {
    for (const hunk of patch.hunks) {
      ops.push({ op: "@", text: `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@` });
      for (const line of hunk.lines) {
        if (line.startsWith("\\")) continue; // "\ No newline at end of file"
        ops.push({ op: line[0] === "+" || line[0] === "-" ? line[0] : " ", text: line.slice(1) });
      }
    }
  }
  return ops;
}

export function renderUnifiedDiff(text) {
  const ops = unifiedOps(text);
  const out = document.createDocumentFragment();
  if (!ops.some((o) => o.op === "+" || o.op === "-")) {
    out.append(h("span", { class: "d-same" }, "No differences."));
    return out;
  }
  for (const o of ops) {
    if (o.op === "@") {
      const start = /\+(\d+)/.exec(o.text);
      out.append(h("span", { class: "d-skip" }, start ? `⋯ from line ${start[1]}\n` : "⋯\n"));
      continue;
    }
    const cls = o.op === "+" ? "d-add" : o.op === "-" ? "d-del" : "d-ctx";
    out.append(h("span", { class: cls }, `${o.op} ${o.text}\n`));
  }
  return out;
}
