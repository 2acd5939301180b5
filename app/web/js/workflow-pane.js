// The workflow pane: the diagram, the YAML and the step code of the session's
// workflow, with the latest changes highlighted, and the page context a turn carries.

import { download } from "./api.js";
import { renderDiagram } from "./diagram.js";
import { clear, h } from "./dom.js";
import { highlightJs, highlightYaml } from "./highlight.js";
import {
  adaptorLabel,
  frameChanges,
  hasCode,
  parseWorkflow,
  structuralChanges,
  summariseChanges,
} from "./model.js";

const NO_HIGHLIGHT = () => ({ jobs: new Set(), edges: new Set(), triggers: new Set() });

export class WorkflowPane {
  constructor(elements) {
    this.el = elements;
    this.workflow = null; // {id, name, version, yaml}
    this.open(null);
    this.tab = "diagram";
    for (const button of document.querySelectorAll(".tab")) {
      button.addEventListener("click", () => this.setTab(button.dataset.tab));
    }
    this.el.contextClear.addEventListener("click", () => this.setTab("diagram"));
    this.el.stepSelect.addEventListener("change", () => this.selectJob(this.el.stepSelect.value));
  }

  // Show this workflow (null: none); its document comes with apply(..., {initial: true}).
  open(workflow) {
    this.workflow = workflow ? { ...workflow } : null;
    this.model = null;
    this.parseError = null;
    this.highlight = NO_HIGHLIGHT();
    this.highlightTurn = null;
    this.changes = [];
    this.showChanges = false;
    this.selectedJob = null;
  }

  async exportYaml() {
    if (!this.workflow) return;
    const name = ((this.model && this.model.name) || "workflow").replace(/[^\w.-]+/g, "-");
    await download(`/v1/workflows/${encodeURIComponent(this.workflow.id)}/export`, `${name}.yaml`);
  }

  renderTitle() {
    const name = (this.model && this.model.name) || (this.workflow && this.workflow.name) || "";
    this.el.title.textContent = name || "Untitled workflow";
    this.el.versionLabel.textContent = this.workflow ? `version ${this.workflow.version}` : "";
    document.body.dataset.version = this.workflow ? String(this.workflow.version) : "";
    document.title = name ? `${name} · Planwright` : "Planwright";
  }

  renderChangeSummary() {
    clear(this.el.changeSummary);
    if (this.parseError) {
      this.el.changeSummary.append(
        h("span", { class: "problem" }, `The diagram cannot be drawn: ${this.parseError}`),
      );
      return;
    }
    if (!this.workflow || this.workflow.version <= 1 || !this.showChanges) return;
    this.el.changeSummary.append(
      h("span", { class: "chip" }, `v${this.workflow.version}`),
      ...summariseChanges(this.changes).map((note) =>
        h("span", { class: `change ${note.kind}` }, note.text),
      ),
    );
  }

  renderDiagramPane() {
    if (!this.model) {
      clear(this.el.diagram);
      return;
    }
    renderDiagram(this.el.diagram, this.model, {
      highlight: this.highlight,
      selected: this.selectedJob,
      onSelect: (key) => this.selectJob(key, { show: true }),
    });
  }

  renderYaml() {
    clear(this.el.yamlView).append(highlightYaml(this.workflow ? this.workflow.yaml : ""));
  }

  // The step on the Step code tab: the one picked, else the first.
  shownJob() {
    const jobs = this.model ? this.model.jobs : [];
    if (this.selectedJob && jobs.some((job) => job.key === this.selectedJob)) return this.selectedJob;
    return jobs.length ? jobs[0].key : null;
  }

  renderCode() {
    const jobs = this.model ? this.model.jobs : [];
    if (this.selectedJob && !jobs.some((job) => job.key === this.selectedJob)) {
      this.selectedJob = null;
    }
    const shown = this.shownJob();
    clear(this.el.stepSelect);
    for (const job of jobs) {
      this.el.stepSelect.append(h("option", { value: job.key, selected: job.key === shown }, job.name));
    }
    this.el.stepSelect.disabled = jobs.length === 0;
    const job = jobs.find((j) => j.key === shown);
    clear(this.el.codeView);
    if (!job) {
      this.el.stepMeta.textContent = "";
      this.el.codeView.append(h("span", { class: "muted" }, "This workflow has no steps yet."));
      return;
    }
    this.el.stepMeta.textContent = `${job.key} · ${adaptorLabel(job.adaptor)}`;
    if (hasCode(job.body)) this.el.codeView.append(highlightJs(job.body));
    else this.el.codeView.append(h("span", { class: "muted" }, `${job.body || ""}\n\n(no code yet)`));
  }

  renderWorkflow() {
    this.renderTitle();
    this.renderChangeSummary();
    this.renderDiagramPane();
    this.renderYaml();
    this.renderCode();
    this.renderContext();
  }

  selectJob(key, { show } = {}) {
    this.selectedJob = key;
    this.renderDiagramPane();
    this.renderCode();
    if (show) this.setTab("code");
  }

  setTab(tab) {
    this.tab = tab;
    for (const button of document.querySelectorAll(".tab")) {
      button.setAttribute("aria-selected", String(button.dataset.tab === tab));
    }
    for (const panel of document.querySelectorAll(".tab-panel")) {
      panel.hidden = panel.dataset.panel !== tab;
    }
    this.renderContext();
  }

  // The page context a turn carries: on the Step code tab, the selected step.
  pageContext() {
    const job = this.tab === "code" ? this.shownJob() : null;
    if (job) return { page: "job", job_key: job };
    return { page: "workflow" };
  }

  renderContext() {
    const context = this.pageContext();
    this.el.contextChip.hidden = context.page !== "job";
    const job = this.model && this.model.jobs.find((j) => j.key === context.job_key);
    this.el.contextStep.textContent = job ? job.name : context.job_key || "";
  }

  // Apply a document version (from a frame, a REST answer or a reload); false when it
  // is not this workflow's, or is already shown.
  apply(frame, { initial = false } = {}) {
    if (!this.workflow) return false;
    if (frame.workflow_id && frame.workflow_id !== this.workflow.id) return false;
    if (!initial && frame.version <= this.workflow.version) return false; // already shown
    const before = this.model;
    this.workflow = { ...this.workflow, version: frame.version, yaml: frame.yaml };
    try {
      this.model = parseWorkflow(frame.yaml);
      this.parseError = null;
    } catch (error) {
      this.parseError = error.message;
    }
    if (initial) {
      this.highlight = NO_HIGHLIGHT();
      this.changes = [];
      this.highlightTurn = null;
      this.showChanges = false;
    } else {
      this.showChanges = true;
      const named = frameChanges(frame.changes);
      const listed = named.jobs.size + named.edges.size + named.triggers.size + named.removed.length;
      const marks = named.whole || !listed ? structuralChanges(before, this.model) : named;
      // Within one turn the highlights add up, so a turn's every change stays visible.
      const sameTurn = Boolean(frame.turn_id) && frame.turn_id === this.highlightTurn;
      if (sameTurn) {
        for (const section of ["jobs", "edges", "triggers"]) {
          for (const key of marks[section]) this.highlight[section].add(key);
        }
        this.changes = [...this.changes, ...(frame.changes || [])];
      } else {
        this.highlight = { jobs: marks.jobs, edges: marks.edges, triggers: marks.triggers };
        this.changes = [...(frame.changes || [])];
      }
      this.highlightTurn = frame.turn_id || null;
    }
    this.renderWorkflow();
    return true;
  }
}
