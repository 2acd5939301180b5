// The workflow diagram: a layered layout (trigger, then steps by depth) drawn as SVG.

import { h, s, clear } from "./dom.js";
import { adaptorLabel, conditionClass, conditionText, hasCode, unreachableSteps } from "./model.js";

const NODE_W = 210;
const NODE_H = 58;
const TRIGGER_H = 44;
const GAP_X = 52;
const GAP_Y = 92;
const PAD = 24;
const VIRTUAL_W = 24;
const EDGE_KINDS = ["success", "failure", "always", "js", "disabled"];

const nodeId = (kind, key) => `${kind}:${key}`;

function truncate(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

// Sugiyama-style layering: longest path from the trigger, edges that skip rows
// routed through virtual points, a few barycentre sweeps to reduce crossings.
// -> {nodes: Map(id -> node), routes: [{edge, from, to, via: [virtual ids]}], width, height}
export function layout(model) {
  const nodes = new Map();
  model.triggers.forEach((trigger, index) => {
    nodes.set(nodeId("trigger", trigger.key), { kind: "trigger", item: trigger, order: index });
  });
  model.jobs.forEach((job, index) => {
    nodes.set(nodeId("job", job.key), { kind: "job", item: job, order: 1000 + index });
  });
  const routes = [];
  for (const edge of model.edges) {
    const from = nodeId(edge.fromTrigger ? "trigger" : "job", edge.source);
    const to = nodeId("job", edge.target);
    if (nodes.has(from) && nodes.has(to) && from !== to) routes.push({ edge, from, to, via: [] });
  }

  // Longest-path layering (Kahn's order); anything left on a cycle goes last.
  const outgoing = new Map([...nodes.keys()].map((id) => [id, []]));
  const remaining = new Map([...nodes.keys()].map((id) => [id, 0]));
  for (const { from, to } of routes) {
    outgoing.get(from).push(to);
    remaining.set(to, remaining.get(to) + 1);
  }
  const base = model.triggers.length ? 1 : 0;
  const layer = new Map();
  const queue = [];
  for (const [id, node] of nodes) {
    if (remaining.get(id) === 0) {
      layer.set(id, node.kind === "trigger" ? 0 : base);
      queue.push(id);
    }
  }
  while (queue.length) {
    const id = queue.shift();
    for (const next of outgoing.get(id)) {
      layer.set(next, Math.max(layer.get(next) ?? 0, layer.get(id) + 1));
      remaining.set(next, remaining.get(next) - 1);
      if (remaining.get(next) === 0) queue.push(next);
    }
  }
  const deepest = Math.max(0, ...layer.values());
  for (const id of nodes.keys()) if (remaining.get(id) > 0) layer.set(id, deepest + 1);

  // Edges going down more than one row get a virtual point in each row between.
  const parents = new Map([...nodes.keys()].map((id) => [id, []]));
  for (const route of routes) {
    let previous = route.from;
    const top = layer.get(route.from);
    const bottom = layer.get(route.to);
    for (let row = top + 1; row < bottom; row += 1) {
      const id = `virtual:${route.edge.key}:${row}`;
      nodes.set(id, { kind: "virtual", order: 5000 + nodes.size });
      layer.set(id, row);
      parents.set(id, [previous]);
      route.via.push(id);
      previous = id;
    }
    if (bottom > top) parents.get(route.to).push(previous);
  }

  const rows = [];
  for (const [id] of [...nodes].sort((a, b) => a[1].order - b[1].order)) {
    (rows[layer.get(id) ?? 0] ||= []).push(id);
  }
  const compact = rows.filter((row) => row && row.length);

  for (let sweep = 0; sweep < 4; sweep += 1) {
    for (let row = 1; row < compact.length; row += 1) {
      const position = new Map();
      compact[row - 1].forEach((id, index) => position.set(id, index));
      const weight = (id, fallback) => {
        const placed = parents.get(id).filter((p) => position.has(p));
        if (!placed.length) return fallback;
        return placed.reduce((sum, p) => sum + position.get(p), 0) / placed.length;
      };
      compact[row] = compact[row]
        .map((id, index) => ({ id, key: weight(id, index) }))
        .sort((a, b) => a.key - b.key)
        .map((entry) => entry.id);
    }
  }

  const widthOf = (id) => (nodes.get(id).kind === "virtual" ? VIRTUAL_W : NODE_W);
  const rowWidth = (row) =>
    row.reduce((sum, id) => sum + widthOf(id), 0) + (row.length - 1) * GAP_X;
  const width = PAD * 2 + Math.max(NODE_W, ...compact.map(rowWidth));
  let y = PAD;
  for (const row of compact) {
    let x = (width - rowWidth(row)) / 2;
    const heights = row.map((id) => ({ trigger: TRIGGER_H, job: NODE_H }[nodes.get(id).kind] || 0));
    const rowHeight = Math.max(TRIGGER_H, ...heights);
    for (const id of row) {
      const node = nodes.get(id);
      node.w = widthOf(id);
      node.h = node.kind === "virtual" ? rowHeight : node.kind === "trigger" ? TRIGGER_H : NODE_H;
      node.x = x;
      node.y = y + (rowHeight - node.h) / 2;
      x += node.w + GAP_X;
    }
    y += rowHeight + GAP_Y;
  }
  return { nodes, routes, width, height: y - GAP_Y + PAD };
}

function spread(count, index) {
  const step = Math.min(26, (NODE_W - 40) / Math.max(1, count - 1));
  return (index - (count - 1) / 2) * step;
}

// Where each route leaves its source and enters its target: ports spread across the
// node's edge, ordered by where the other end sits, so lines do not cross at a node.
function ports(graph) {
  const centre = (id) => graph.nodes.get(id).x + graph.nodes.get(id).w / 2;
  const firstHop = (route) => (route.via.length ? route.via[0] : route.to);
  const lastHop = (route) => (route.via.length ? route.via[route.via.length - 1] : route.from);
  const result = new Map(graph.routes.map((route) => [route, { out: 0, in: 0 }]));
  const assign = (endOf, otherEnd, side) => {
    const groups = new Map();
    for (const route of graph.routes) {
      const key = endOf(route);
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(route);
    }
    for (const group of groups.values()) {
      group.sort((a, b) => centre(otherEnd(a)) - centre(otherEnd(b)));
      group.forEach((route, index) => {
        result.get(route)[side] = spread(group.length, index);
      });
    }
  };
  assign((route) => route.from, firstHop, "out");
  assign((route) => route.to, lastHop, "in");
  return result;
}

function cubicAt(a, b, t) {
  // Vertical tangents at both ends: control points straight below a and above b.
  const bend = Math.max(24, (b.y - a.y) / 2);
  const p1 = { x: a.x, y: a.y + bend };
  const p2 = { x: b.x, y: b.y - bend };
  const u = 1 - t;
  return {
    x: u * u * u * a.x + 3 * u * u * t * p1.x + 3 * u * t * t * p2.x + t * t * t * b.x,
    y: u * u * u * a.y + 3 * u * u * t * p1.y + 3 * u * t * t * p2.y + t * t * t * b.y,
  };
}

// -> {d, label: {x, y}}: a smooth path through the route's points.
function routePath(graph, route, port, labelT) {
  const from = graph.nodes.get(route.from);
  const to = graph.nodes.get(route.to);
  const points = [{ x: from.x + from.w / 2 + port.out, y: from.y + from.h }];
  for (const id of route.via) {
    const v = graph.nodes.get(id);
    points.push({ x: v.x + v.w / 2, y: v.y }, { x: v.x + v.w / 2, y: v.y + v.h });
  }
  points.push({ x: to.x + to.w / 2 + port.in, y: to.y - 2 });
  let d = `M${points[0].x},${points[0].y}`;
  for (let i = 1; i < points.length; i += 1) {
    const a = points[i - 1];
    const b = points[i];
    if (i % 2 === 0) {
      d += ` L${b.x},${b.y}`; // straight down through a row it skips
    } else {
      const bend = Math.max(24, (b.y - a.y) / 2);
      d += ` C${a.x},${a.y + bend} ${b.x},${b.y - bend} ${b.x},${b.y}`;
    }
  }
  // Long edges carry their label on their first hop, near where they start.
  const label = cubicAt(points[0], points[1], route.via.length ? 0.5 : labelT);
  return { d, label };
}

function arrowDefs() {
  return s(
    "defs",
    {},
    EDGE_KINDS.map((kind) =>
      s(
        "marker",
        {
          id: `arrow-${kind}`,
          viewBox: "0 0 10 10",
          refX: 9,
          refY: 5,
          markerWidth: 11,
          markerHeight: 11,
          markerUnits: "userSpaceOnUse",
          orient: "auto-start-reverse",
        },
        s("path", { d: "M0,0 L10,5 L0,10 z", class: `arrow ${kind}` }),
      ),
    ),
  );
}

function labelBox(x, y, text, kind) {
  const width = Math.max(24, text.length * 6.4 + 12);
  return s(
    "g",
    { class: `edge-label ${kind}`, transform: `translate(${x - width / 2},${y - 9})` },
    s("rect", { width, height: 18, rx: 9 }),
    s("text", { x: width / 2, y: 12.5, "text-anchor": "middle" }, text),
  );
}

const NEVER_RUNS = "not reached from any trigger: it never runs";

// What a step's badge says about the last test run, by its state there.
const RUN_BADGE = {
  succeeded: { text: "✓ ran", words: "ran and succeeded in the last test run" },
  failed: { text: "✗ failed", words: "failed in the last test run" },
  skipped: { text: "– skipped", words: "did not run in the last test run" },
  running: { text: "… running", words: "is running now" },
  unsupported: { text: "! cannot run", words: "cannot run in the test runtime here" },
};
const BADGE_W = 74;

function runBadge(node, runState, onRunStep) {
  const badge = RUN_BADGE[runState.status];
  const el = s(
    "g",
    {
      class: `run-badge ${runState.status}`,
      transform: `translate(${node.w - BADGE_W - 6},${-9})`,
      tabindex: 0,
      role: "button",
      "data-key": node.item.key,
      "aria-label": `${node.item.name}: ${badge.words}; show its output`,
    },
    s("title", {}, `${badge.words}: click for its input, output and logs`),
    s("rect", { width: BADGE_W, height: 18, rx: 9 }),
    s("text", { x: BADGE_W / 2, y: 13, "text-anchor": "middle" }, badge.text),
  );
  if (onRunStep) {
    const open = (event) => {
      event.stopPropagation();
      event.preventDefault();
      onRunStep(node.item.key);
    };
    el.addEventListener("click", open);
    el.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") open(event);
    });
  }
  return el;
}

function jobNode(node, { changed, selected, unreachable, runState, onRunStep }) {
  const job = node.item;
  const code = hasCode(job.body);
  const classes = [
    "node",
    "job",
    changed && "changed",
    selected && "selected",
    code && "has-code",
    unreachable && "unreachable",
    runState && `run-${runState.status}`,
  ];
  return s(
    "g",
    {
      class: classes.filter(Boolean).join(" "),
      transform: `translate(${node.x},${node.y})`,
      tabindex: 0,
      role: "button",
      "data-key": job.key,
      "data-kind": "job",
      "data-run": runState ? runState.status : undefined,
      "aria-label": `Step ${job.name}${changed ? " (just changed)" : ""}${
        unreachable ? ` (${NEVER_RUNS})` : ""
      }${runState ? ` (${RUN_BADGE[runState.status].words})` : ""}`,
    },
    s(
      "title",
      {},
      `${job.name} (${job.key})\n${job.adaptor}${code ? "\nhas code" : "\nno code yet"}${
        unreachable ? `\n${NEVER_RUNS}` : ""
      }`,
    ),
    s("rect", { class: "node-box", width: node.w, height: node.h, rx: 9 }),
    s("rect", { class: "node-accent", width: 5, height: node.h - 16, x: 0, y: 8, rx: 2 }),
    s("text", { class: "node-title", x: 16, y: 24 }, truncate(job.name, 26)),
    s(
      "text",
      { class: "node-sub", x: 16, y: 44 },
      `${adaptorLabel(job.adaptor)} · ${code ? "has code" : "no code yet"}`,
    ),
    unreachable
      ? s("text", { class: "node-warning", x: node.w - 12, y: 22, "text-anchor": "end" }, "⚠")
      : null,
    runState && RUN_BADGE[runState.status] ? runBadge(node, runState, onRunStep) : null,
  );
}

function triggerNode(node, { changed }) {
  const trigger = node.item;
  const title =
    trigger.type === "cron" ? `Cron ${trigger.cron || ""}`.trim() : `${trigger.type} trigger`;
  return s(
    "g",
    {
      class: ["node", "trigger", changed && "changed", !trigger.enabled && "off"]
        .filter(Boolean)
        .join(" "),
      transform: `translate(${node.x},${node.y})`,
      "data-key": trigger.key,
      "data-kind": "trigger",
      "aria-label": `Trigger ${trigger.key}`,
    },
    s("title", {}, `trigger ${trigger.key}: ${trigger.type}${trigger.enabled ? "" : " (disabled)"}`),
    s("rect", { class: "node-box", width: node.w, height: node.h, rx: node.h / 2 }),
    s("text", { class: "node-title", x: node.w / 2, y: 19, "text-anchor": "middle" }, `⚡ ${truncate(title, 24)}`),
    s(
      "text",
      { class: "node-sub", x: node.w / 2, y: 35, "text-anchor": "middle" },
      trigger.enabled ? "enabled" : "disabled",
    ),
  );
}

// Draw `model` into `container`. `highlight` = {jobs, edges, triggers} Sets of keys;
// `run`: step key -> {status} from a test run (each step coloured, with a badge that
// opens its output through `onRunStep`); `draft`: the model is a proposal's draft.
export function renderDiagram(
  container,
  model,
  { highlight, selected, onSelect, run = null, onRunStep = null, draft = false } = {},
) {
  clear(container);
  if (!model.jobs.length && !model.triggers.length) {
    container.append(
      h(
        "div",
        { class: "diagram-empty" },
        h("p", {}, "No steps yet."),
        h(
          "p",
          { class: "muted" },
          "Describe the process in the chat, e.g. “create a workflow that gets referrals from http, " +
            "checks coverage with fhir, then emails the coordinator with gmail”.",
        ),
      ),
    );
    return;
  }
  const marks = highlight || { jobs: new Set(), edges: new Set(), triggers: new Set() };
  const stranded = unreachableSteps(model);
  if (stranded.size) {
    const names = model.jobs.filter((job) => stranded.has(job.key)).map((job) => job.name);
    const one = names.length === 1;
    container.append(
      h(
        "p",
        { class: "diagram-note", role: "status" },
        `⚠ ${one ? "This step is" : `${names.length} steps are`} not reached from any trigger, ` +
          `so ${one ? "it never runs" : "they never run"}: ${names.join(", ")}.`,
      ),
    );
  }
  const graph = layout(model);
  const placedPorts = ports(graph);
  const outCount = new Map();
  const inCount = new Map();
  for (const route of graph.routes) {
    outCount.set(route.from, (outCount.get(route.from) || 0) + 1);
    inCount.set(route.to, (inCount.get(route.to) || 0) + 1);
  }
  const svg = s("svg", {
    class: `diagram-svg${draft ? " draft" : ""}${run ? " with-run" : ""}`,
    viewBox: `0 0 ${graph.width} ${graph.height}`,
    width: graph.width,
    height: graph.height,
    role: "img",
    "aria-label": `${draft ? "Draft (not applied) of the workflow" : "Workflow diagram"}: ${
      model.jobs.length
    } steps, ${model.edges.length} edges`,
  });
  svg.append(arrowDefs());
  const lines = s("g", { class: "edges" });
  const labels = s("g", { class: "edge-labels" });
  for (const route of graph.routes) {
    // Labels sit where sibling edges are furthest apart: near the targets when a
    // step fans out, near the sources when edges converge on one step.
    const fansOut = outCount.get(route.from) > 1;
    const converges = inCount.get(route.to) > 1;
    const labelT = fansOut && !converges ? 0.7 : converges && !fansOut ? 0.3 : 0.5;
    const { d, label } = routePath(graph, route, placedPorts.get(route), labelT);
    const kind = conditionClass(route.edge);
    const changed = marks.edges.has(route.edge.key);
    lines.append(
      s(
        "g",
        {
          class: `edge ${kind}${changed ? " changed" : ""}`,
          "data-key": route.edge.key,
          "data-condition": route.edge.condition,
        },
        s("title", {}, `${route.edge.key}: ${conditionText(route.edge)}`),
        s("path", { class: "edge-line", d, "marker-end": `url(#arrow-${kind})` }),
      ),
    );
    labels.append(labelBox(label.x, label.y, conditionText(route.edge), kind + (changed ? " changed" : "")));
  }
  const boxes = s("g", { class: "nodes" });
  for (const node of graph.nodes.values()) {
    if (node.kind === "virtual") continue;
    if (node.kind === "trigger") {
      boxes.append(triggerNode(node, { changed: marks.triggers.has(node.item.key) }));
    } else {
      const el = jobNode(node, {
        changed: marks.jobs.has(node.item.key),
        selected: selected === node.item.key,
        unreachable: stranded.has(node.item.key),
        runState: run ? run.get(node.item.key) : null,
        onRunStep,
      });
      if (onSelect) {
        el.addEventListener("click", () => onSelect(node.item.key));
        el.addEventListener("keydown", (event) => {
          if (event.key === "Enter" || event.key === " ") {
            event.preventDefault();
            onSelect(node.item.key);
          }
        });
      }
      boxes.append(el);
    }
  }
  svg.append(lines, boxes, labels);
  container.append(svg);
}
