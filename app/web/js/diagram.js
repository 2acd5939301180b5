// The workflow diagram: a layered layout (trigger, then steps by depth) drawn as SVG.

import { Graph, layout as dagreLayout } from "../vendor/@dagrejs/dagre/dist/dagre.esm.js";
import { h, s, clear } from "./dom.js";
import { adaptorLabel, conditionClass, conditionText, hasCode, unreachableSteps } from "./model.js";

const NODE_W = 210;
const NODE_H = 58;
const TRIGGER_H = 44;
const GAP_X = 52;
const GAP_Y = 92;
const PAD = 24;
const EDGE_KINDS = ["success", "failure", "always", "js", "disabled"];

const nodeId = (kind, key) => `${kind}:${key}`;

function truncate(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

// Layered layout by dagre (rank by longest path, crossing reduction, edges that skip
// ranks routed through dummy points, edge labels placed as nodes of their own).
// -> {nodes: Map(id -> node{kind, item, x, y, w, h}), routes: [{edge, from, to, points,
//    label: {x, y}}], width, height}
export function layout(model) {
  const graph = new Graph({ multigraph: true });
  graph.setGraph({ rankdir: "TB", nodesep: GAP_X, ranksep: GAP_Y, edgesep: 16, marginx: PAD, marginy: PAD });
  const nodes = new Map();
  for (const trigger of model.triggers) {
    nodes.set(nodeId("trigger", trigger.key), { kind: "trigger", item: trigger, w: NODE_W, h: TRIGGER_H });
  }
  for (const job of model.jobs) {
    nodes.set(nodeId("job", job.key), { kind: "job", item: job, w: NODE_W, h: NODE_H });
  }
  for (const [id, node] of nodes) graph.setNode(id, { width: node.w, height: node.h });
  const routes = [];
  for (const edge of model.edges) {
    const from = nodeId(edge.fromTrigger ? "trigger" : "job", edge.source);
    const to = nodeId("job", edge.target);
    if (!nodes.has(from) || !nodes.has(to) || from === to) continue;
    const text = conditionText(edge);
    graph.setEdge(from, to, { width: labelWidth(text), height: LABEL_H, labelpos: "c" }, edge.key);
    routes.push({ edge, from, to });
  }
  dagreLayout(graph);
  for (const [id, node] of nodes) {
    const placed = graph.node(id);
    node.x = placed.x - node.w / 2;
    node.y = placed.y - node.h / 2;
  }
  for (const route of routes) {
    const placed = graph.edge({ v: route.from, w: route.to, name: route.edge.key });
    route.points = placed.points;
    route.label = { x: placed.x, y: placed.y };
  }
  const { width, height } = graph.graph();
  return { nodes, routes, width: Math.max(width, NODE_W + PAD * 2), height };
}

// A smooth path through the route's points: straight to the first midpoint, then a
// quadratic curve through each interior point to the next midpoint.
function routePath(points) {
  const mid = (a, b) => ({ x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 });
  if (points.length < 3) return `M${points[0].x},${points[0].y} L${points.at(-1).x},${points.at(-1).y}`;
  let d = `M${points[0].x},${points[0].y}`;
  const first = mid(points[0], points[1]);
  d += ` L${first.x},${first.y}`;
  for (let i = 1; i < points.length - 1; i += 1) {
    const to = i === points.length - 2 ? points[i + 1] : mid(points[i], points[i + 1]);
    d += ` Q${points[i].x},${points[i].y} ${to.x},${to.y}`;
  }
  return d;
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

const LABEL_H = 18;
const labelWidth = (text) => Math.max(24, text.length * 6.4 + 12);

function labelBox(x, y, text, kind) {
  const width = labelWidth(text);
  return s(
    "g",
    { class: `edge-label ${kind}`, transform: `translate(${x - width / 2},${y - 9})` },
    s("rect", { width, height: LABEL_H, rx: 9 }),
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
    const d = routePath(route.points);
    const label = route.label;
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
