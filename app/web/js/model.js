// The workflow document as the page sees it: parsed from the YAML the server streams.

import { load } from "../vendor/js-yaml/dist/js-yaml.mjs";

export const EMPTY_BODY = "// Add operations here";

function entries(section) {
  if (!section || typeof section !== "object" || Array.isArray(section)) return [];
  return Object.entries(section).filter(([, value]) => value && typeof value === "object");
}

export function hasCode(body) {
  const text = (body || "").trim();
  return text !== "" && text !== EMPTY_BODY;
}

// -> {name, jobs, triggers, edges} or throws with a readable message.
export function parseWorkflow(yamlText) {
  const data = load(yamlText || "") || {};
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new Error("The document is not a mapping.");
  }
  const jobs = entries(data.jobs).map(([key, job]) => ({
    key,
    name: String(job.name ?? key),
    adaptor: String(job.adaptor ?? ""),
    body: typeof job.body === "string" ? job.body : "",
  }));
  const triggers = entries(data.triggers).map(([key, trigger]) => ({
    key,
    type: String(trigger.type ?? key),
    enabled: trigger.enabled === true,
    cron: trigger.cron_expression ? String(trigger.cron_expression) : null,
  }));
  const edges = entries(data.edges).map(([key, edge]) => ({
    key,
    source: String(edge.source_job ?? edge.source_trigger ?? ""),
    fromTrigger: edge.source_job == null && edge.source_trigger != null,
    target: String(edge.target_job ?? ""),
    condition: String(edge.condition_type ?? "always"),
    expression: edge.condition_expression == null ? null : String(edge.condition_expression),
    label: edge.condition_label == null ? null : String(edge.condition_label),
    enabled: edge.enabled !== false,
  }));
  return { name: data.name == null ? "" : String(data.name), jobs, triggers, edges };
}

// '@openfn/language-http@latest' -> 'http'; a pinned version is shown: 'http 6.4.0'.
export function adaptorLabel(adaptor) {
  const match = /^(?:@openfn\/language-)?(.+?)(?:@(.+))?$/.exec(adaptor || "");
  if (!match) return adaptor || "";
  const [, name, version] = match;
  return version && version !== "latest" ? `${name} ${version}` : name;
}

// Keys of the steps no trigger reaches through enabled edges: OpenFn never runs them.
// None while no trigger starts anything (the server notes the unconnected trigger).
export function unreachableSteps(model) {
  const next = new Map();
  for (const edge of model.edges) {
    if (!edge.enabled) continue;
    if (!next.has(edge.source)) next.set(edge.source, []);
    next.get(edge.source).push(edge.target);
  }
  const starts = model.triggers.map((trigger) => trigger.key).filter((key) => next.has(key));
  if (!starts.length) return new Set();
  const jobs = new Set(model.jobs.map((job) => job.key));
  const reached = new Set();
  const todo = [...starts];
  while (todo.length) {
    for (const target of next.get(todo.pop()) || []) {
      if (jobs.has(target) && !reached.has(target)) {
        reached.add(target);
        todo.push(target);
      }
    }
  }
  return new Set(model.jobs.map((job) => job.key).filter((key) => !reached.has(key)));
}

export function conditionText(edge) {
  let text;
  switch (edge.condition) {
    case "on_job_success":
      text = "on success";
      break;
    case "on_job_failure":
      text = "on failure";
      break;
    case "js_expression": {
      const expression = edge.expression || "";
      text = edge.label || (expression.length > 28 ? `${expression.slice(0, 27)}…` : expression);
      text = text || "condition";
      break;
    }
    default:
      text = edge.label || "always";
  }
  return edge.enabled ? text : `${text} (disabled)`;
}

export function conditionClass(edge) {
  if (!edge.enabled) return "disabled";
  return (
    { on_job_success: "success", on_job_failure: "failure", js_expression: "js" }[edge.condition] ||
    "always"
  );
}

// What differs between two parsed documents, as sets of keys (for highlighting
// when a frame does not list its changes, e.g. a revert or a PUT).
export function structuralChanges(before, after) {
  const changed = { jobs: new Set(), edges: new Set(), triggers: new Set() };
  if (!after) return changed;
  const index = (list) => new Map((list || []).map((item) => [item.key, JSON.stringify(item)]));
  for (const section of ["jobs", "edges", "triggers"]) {
    const old = index(before && before[section]);
    for (const item of after[section]) {
      if (old.get(item.key) !== JSON.stringify(item)) changed[section].add(item.key);
    }
  }
  return changed;
}

// The keys a `workflow` frame's `changes` names, by section; removals listed apart.
export function frameChanges(changes) {
  const result = { jobs: new Set(), edges: new Set(), triggers: new Set(), removed: [], whole: false };
  for (const change of changes || []) {
    if (change.key === "*" || change.kind === "workflow") {
      if (change.key === "*") result.whole = true;
      continue;
    }
    const section = { job: "jobs", edge: "edges", trigger: "triggers" }[change.kind];
    if (!section) continue;
    if (change.action === "removed") result.removed.push(change);
    else result[section].add(change.key);
  }
  return result;
}

export function describeChange(change) {
  const what = { job: "step", edge: "edge", trigger: "trigger", workflow: "workflow" }[change.kind];
  const verb = change.action.charAt(0).toUpperCase() + change.action.slice(1);
  if (change.kind === "workflow") {
    if (change.key !== "*") return `${verb} the workflow${change.detail ? ` (${change.detail})` : ""}`;
    if (change.detail === "revert") return "Reverted to an earlier version";
    if (change.detail === "put") return "Replaced the document";
    return "Updated the document";
  }
  const name = change.kind === "edge" ? change.key.replace("->", " → ") : change.key;
  const detail =
    change.detail && change.detail !== change.key && change.kind !== "edge"
      ? ` (${change.detail})`
      : "";
  return `${verb} ${what} ${name}${detail}`;
}

// Chips for the change summary: each change when there are few, else counts.
export function summariseChanges(changes) {
  if (!changes.length) return [{ kind: "updated", text: "Caught up with the latest version" }];
  if (changes.length <= 4) {
    return changes.map((change) => ({ kind: change.action, text: describeChange(change) }));
  }
  const groups = new Map();
  for (const change of changes) {
    const id = `${change.action}:${change.kind}`;
    groups.set(id, { ...change, count: (groups.get(id)?.count || 0) + 1 });
  }
  const nouns = { job: "step", edge: "edge", trigger: "trigger", workflow: "workflow" };
  return [...groups.values()].map((group) => {
    const verb = group.action.charAt(0).toUpperCase() + group.action.slice(1);
    const noun = nouns[group.kind] || group.kind;
    return {
      kind: group.action,
      text: `${verb} ${group.count} ${noun}${group.count === 1 ? "" : "s"}`,
    };
  });
}
