// The project pane: the project's workflows and where its plan stands, kept live by
// the chat frames of a project session (plan.proposed, plan.progress, workflow) and
// re-read from GET /v1/projects/{id} after each turn.

import { api } from "./api.js";
import { clear, h } from "./dom.js";
import { summariseChanges } from "./model.js";

const POLL_MS = 2500;

const STATUS_TEXT = {
  pending: "planned",
  building: "building…",
  built: "built",
  failed: "failed",
  unchanged: "unchanged",
};

// One line on where the plan stands.
export function planStatusText(record) {
  if (!record) {
    return "No plan yet. Paste a spec or SOP with several processes and send it with Plan on.";
  }
  const outcomes = Object.values(record.workflows || {});
  const count = (status) => outcomes.filter((o) => o.status === status).length;
  const total = record.plan ? record.plan.workflows.length : outcomes.length;
  switch (record.status) {
    case "proposed":
      return `Plan revision ${record.revision || 1} proposed (${total} workflows): waiting for review.`;
    case "rejected":
      return "The plan was rejected: nothing was built.";
    case "building":
      return `Building: ${count("built")} of ${total} built${count("failed") ? `, ${count("failed")} failed` : ""}.`;
    case "built":
      return `Built: ${total} workflow${total === 1 ? "" : "s"}${count("unchanged") ? ` (${count("unchanged")} unchanged)` : ""}.`;
    case "partial":
      return `Partly built: ${count("built")} built, ${count("failed")} failed.`;
    default:
      return `Plan: ${record.status}`;
  }
}

// The entries the pane lists: planned workflows in build order (with their outcome and
// the project workflow built for them), then the project's other workflows.
export function projectEntries(project, record) {
  const byId = new Map((project ? project.workflows : []).map((w) => [w.id, w]));
  const entries = [];
  const used = new Set();
  if (record && record.plan) {
    const planned = new Map(record.plan.workflows.map((w) => [w.key, w]));
    const keys = [...record.plan.order, ...record.plan.workflows.map((w) => w.key)];
    for (const key of new Set(keys)) {
      const workflow = planned.get(key);
      if (!workflow) continue;
      const outcome = (record.workflows || {})[key] || {};
      const built = outcome.workflow_id ? byId.get(outcome.workflow_id) : null;
      if (built) used.add(built.id);
      entries.push({
        key,
        name: built ? built.name : workflow.name,
        workflowId: outcome.workflow_id || null,
        version: built ? built.version : null,
        status: outcome.status || "pending",
        message: outcome.message || "",
      });
    }
  }
  for (const workflow of project ? project.workflows : []) {
    if (used.has(workflow.id)) continue;
    entries.push({
      key: null,
      name: workflow.name,
      workflowId: workflow.id,
      version: workflow.version,
      status: null,
      message: "",
    });
  }
  return entries;
}

export class ProjectView {
  constructor(elements, { onError }) {
    this.el = elements; // {pane, name, status, list, exportButton}
    this.onError = onError;
    this.project = null;
    this.record = null;
    this.live = new Map(); // workflow_id -> {version, note} from workflow frames
    this.building = null; // the key plan.progress says is building now
    this.timer = null;
    this.isIdle = () => true;
    this.onPolled = () => {};
  }

  // A plan moved on by another device (or by this session while the page was away)
  // sends no frames here: while it is proposed or building, re-read it now and then,
  // when no turn runs on this page. onPolled(record, statusBefore) hears each re-read.
  follow({ isIdle, onPolled }) {
    this.isIdle = isIdle;
    this.onPolled = onPolled;
  }

  schedule() {
    clearTimeout(this.timer);
    const status = this.record && this.record.plan ? this.record.status : null;
    if (!this.project || (status !== "proposed" && status !== "building")) return;
    const projectId = this.project.id;
    this.timer = setTimeout(async () => {
      if (!this.isIdle()) {
        this.schedule();
        return;
      }
      if (await this.load(projectId, { quiet: true })) this.onPolled(this.record, status);
    }, POLL_MS);
  }

  reset() {
    clearTimeout(this.timer);
    this.project = null;
    this.record = null;
    this.live = new Map();
    clear(this.el.list);
    this.el.name.textContent = "";
    this.el.status.textContent = "";
  }

  async load(projectId, { quiet = false } = {}) {
    try {
      const project = await api("GET", `/v1/projects/${encodeURIComponent(projectId)}`);
      if (this.project && this.project.id !== project.id) this.live = new Map();
      this.project = project;
      this.record = project.plan || null;
      this.render();
      return project;
    } catch (error) {
      if (!quiet) this.onError(error);
      else if (this.project && this.project.id === projectId) this.schedule();
      return null;
    }
  }

  get name() {
    return this.project ? this.project.name : "";
  }

  ensureRecord() {
    if (!this.record) this.record = { status: "proposed", plan: null, workflows: {}, revision: 1 };
    if (!this.record.workflows) this.record.workflows = {};
    return this.record;
  }

  // A plan.proposed frame (or a pending review after a reload): the plan under review.
  proposed(review) {
    const record = this.ensureRecord();
    record.status = "proposed";
    record.plan = review.plan;
    record.contracts = review.contracts;
    record.delta = review.delta;
    record.revision = review.revision;
    this.render();
  }

  answered(approved, feedback) {
    if (!this.record) return;
    if (approved) this.record.status = "building";
    else if (!feedback) this.record.status = "rejected";
    this.render();
  }

  // plan.progress {workflow_key, workflow_id, status, message?}
  progress(frame) {
    const record = this.ensureRecord();
    if (record.status === "proposed") record.status = "building";
    this.building = frame.status === "building" ? frame.workflow_key : null;
    const outcome = record.workflows[frame.workflow_key] || {};
    record.workflows[frame.workflow_key] = {
      ...outcome,
      status: frame.status,
      workflow_id: frame.workflow_id || outcome.workflow_id || null,
      message: frame.message || (frame.status === "building" ? "" : outcome.message || ""),
    };
    this.render();
  }

  // A workflow frame with its workflow_id: the new version shows in that entry.
  // While a planned workflow builds, the frames of a workflow no entry holds yet are its.
  workflowFrame(frame) {
    if (!frame.workflow_id) return;
    const outcomes = this.record ? this.record.workflows || {} : {};
    const known = Object.values(outcomes).some((o) => o.workflow_id === frame.workflow_id);
    if (!known && this.building && outcomes[this.building]) {
      outcomes[this.building].workflow_id = frame.workflow_id;
    }
    const changes = frame.changes || [];
    const note = changes.length ? summariseChanges(changes).map((c) => c.text).join("; ") : "";
    this.live.set(frame.workflow_id, { version: frame.version, note });
    this.render();
  }

  render() {
    this.schedule();
    const record = this.record && this.record.plan ? this.record : null;
    this.el.name.textContent = this.project ? this.project.name : "";
    this.el.status.dataset.status = record ? record.status : "none";
    this.el.status.textContent = planStatusText(record);
    clear(this.el.list);
    const entries = projectEntries(this.project, record);
    if (!entries.length) {
      this.el.list.append(h("li", { class: "project-empty muted" }, "This project has no workflows yet."));
      return;
    }
    for (const entry of entries) this.el.list.append(this.entryItem(entry));
  }

  entryItem(entry) {
    const live = entry.workflowId ? this.live.get(entry.workflowId) : null;
    const version = live && (!entry.version || live.version > entry.version) ? live.version : entry.version;
    return h(
      "li",
      {
        class: "project-workflow",
        "data-key": entry.key || undefined,
        "data-workflow-id": entry.workflowId || undefined,
        "data-status": entry.status || "existing",
      },
      h(
        "div",
        { class: "pw-head" },
        h("strong", { class: "pw-name" }, entry.name),
        entry.key ? h("span", { class: "chip pw-key" }, entry.key) : null,
        entry.status ? h("span", { class: `wf-status ${entry.status}` }, STATUS_TEXT[entry.status] || entry.status) : null,
        h("span", { class: "spacer" }),
        version ? h("span", { class: "wf-version muted" }, `v${version}`) : null,
        entry.workflowId
          ? h("a", { class: "open-workflow", href: `#workflow=${encodeURIComponent(entry.workflowId)}` }, "Open")
          : null,
      ),
      entry.message && entry.status === "failed" ? h("div", { class: "wf-message" }, entry.message) : null,
      live && live.note ? h("div", { class: "wf-live muted" }, `Last change: ${live.note}`) : null,
    );
  }
}
