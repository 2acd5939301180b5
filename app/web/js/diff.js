// A line diff (longest common subsequence after trimming the common ends),
// rendered with a few lines of context around each change.

import { h } from "./dom.js";

// -> [{op: " " | "-" | "+", text}]
export function lineDiff(before, after) {
  const lines = (text) => (text ? text.replace(/\n$/, "").split("\n") : []);
  const a = lines(before);
  const b = lines(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const n = midA.length;
  const m = midB.length;
  // lcs[i][j]: LCS length of midA[i:] and midB[j:]
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lcs[i][j] = midA[i] === midB[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const ops = a.slice(0, start).map((text) => ({ op: " ", text }));
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && midA[i] === midB[j]) {
      ops.push({ op: " ", text: midA[i] });
      i += 1;
      j += 1;
    } else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      ops.push({ op: "-", text: midA[i] });
      i += 1;
    } else {
      ops.push({ op: "+", text: midB[j] });
      j += 1;
    }
  }
  for (const text of a.slice(endA)) ops.push({ op: " ", text });
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

// A unified diff (as the server sends a proposal's `diff`) as the same view: its hunk
// headers become the "⋯" separators, its file headers are left out.
export function unifiedOps(text) {
  const ops = [];
  for (const line of (text || "").replace(/\n$/, "").split("\n")) {
    if (line.startsWith("--- ") || line.startsWith("+++ ")) continue;
    if (line.startsWith("@@")) ops.push({ op: "@", text: line });
    else if (line.startsWith("+")) ops.push({ op: "+", text: line.slice(1) });
    else if (line.startsWith("-")) ops.push({ op: "-", text: line.slice(1) });
    else if (line.startsWith("\\")) continue; // "\ No newline at end of file"
    else if (line !== "" || ops.length) ops.push({ op: " ", text: line.slice(1) });
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
