// The workflow pane: the diagram, the YAML and the step code of the session's
// workflow, with the latest changes highlighted, and the page context a turn carries.

import { api, download } from "./api.js";
import { renderDiagram } from "./diagram.js";
import { append, clear, h } from "./dom.js";
import { STATUS_TEXT, stepDetail, stepStates } from "./runs.js";
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
    // Set by the page: the Fix button for a run (null: none), and what closing the
    // draft preview does (the review card's toggle follows).
    this.fixButton = () => null;
    this.onDraftClosed = () => {};
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
    this.run = null; // the last test run shown on the diagram (a TestRun)
    this.live = null; // step key -> {status} while a run goes
    this.runStep = null; // the step whose run detail is open under the diagram
    this.draft = null; // {model, yaml, base_version, highlight} while a draft is previewed
    this.nextRuns = null; // {expr, text} of the cron trigger's next runs, from the server
  }

  // --- test runs on the diagram ---------------------------------------------------------

  // `ofVersion`: a draft's run whose turn changed nothing (no proposal), so the draft
  // it ran is the version itself.
  showRun(run, { ofVersion = false } = {}) {
    this.run = run;
    this.runOfVersion = ofVersion;
    this.live = null;
    this.runStep = null;
    this.renderRun();
  }

  showLive(states) {
    this.live = states;
    this.renderRun();
  }

  // The run shown matches what the diagram draws: a draft's run (a review-mode turn's
  // test_run) colours the draft, a version's run the version.
  runMatchesView() {
    if (!this.run) return false;
    const ofDraft = Boolean(this.run.draft) && !this.runOfVersion;
    return ofDraft === this.draftShown();
  }

  runStates() {
    if (this.live) return this.live;
    const model = this.draft ? this.draft.model : this.model;
    if (!this.runMatchesView() || !model) return null;
    return stepStates(this.run, model.jobs.map((job) => job.key));
  }

  renderRun() {
    this.renderDiagramPane();
    this.renderRunBar();
    this.renderRunStep();
  }

  renderRunBar() {
    const bar = this.el.runBar;
    clear(bar);
    const run = this.run;
    const showing = Boolean(this.live || this.runMatchesView());
    bar.hidden = !showing;
    this.el.runLegend.hidden = !showing;
    if (!showing) return;
    if (this.live) {
      bar.dataset.status = "running";
      bar.append(h("span", { class: "spinner" }), h("span", {}, "Test run in progress…"));
      return;
    }
    bar.dataset.status = run.status;
    const stale = this.workflow && run.version && run.version !== this.workflow.version;
    const where = run.draft && !this.runOfVersion
      ? `(ran on the proposed draft of version ${run.version}, not applied)`
      : stale
        ? `(ran on version ${run.version})`
        : "";
    append(
      bar,
      h("span", { class: `run-status-chip ${run.status}` }, `Last test run: ${STATUS_TEXT[run.status] || run.status}`),
      h("span", { class: "run-bar-summary" }, run.summary || ""),
      where ? h("span", { class: "muted run-bar-version" }, where) : null,
      h("span", { class: "spacer" }),
      this.fixButton(run),
    );
  }

  // The step's input, output and logs in the last run, under the diagram.
  openRunStep(key) {
    this.runStep = this.runStep === key ? null : key;
    this.renderRunStep();
  }

  renderRunStep() {
    const box = this.el.stepRun;
    clear(box);
    const key = this.runStep;
    const states = this.live ? null : this.runStates();
    const state = states && key ? states.get(key) : null;
    box.hidden = !state;
    if (box.hidden) return;
    const model = this.draft ? this.draft.model : this.model;
    const job = model.jobs.find((j) => j.key === key);
    const name = job ? job.name : key;
    box.dataset.key = key;
    box.dataset.status = state.status;
    const close = h("button", { type: "button", class: "ghost close-step-run", "aria-label": "Close" }, "×");
    close.addEventListener("click", () => this.openRunStep(key));
    const code = h("button", { type: "button", class: "ghost show-code" }, "Step code");
    code.addEventListener("click", () => this.selectJob(key, { show: true }));
    append(
      box,
      h(
        "div",
        { class: "step-run-head" },
        h("strong", {}, name),
        h("span", { class: `chip run-${state.status}` }, state.status),
        state.step ? h("span", { class: "muted" }, `${state.step.duration_ms} ms`) : null,
        h("span", { class: "spacer" }),
        code,
        close,
      ),
    );
    if (state.step) box.append(stepDetail(state.step));
    else if (state.status === "unsupported") box.append(h("p", {}, `It cannot run here: ${state.reason || ""}`));
    else box.append(h("p", { class: "muted" }, "It did not run: no edge leading to it was taken."));
  }

  // --- a proposal's draft on the diagram ---------------------------------------------

  previewDraft(proposal) {
    let model;
    try {
      model = parseWorkflow(proposal.yaml);
    } catch (error) {
      this.el.changeSummary.textContent = `The draft cannot be drawn: ${error.message}`;
      return false;
    }
    const marks = structuralChanges(this.model, model);
    this.draft = { model, yaml: proposal.yaml, base_version: proposal.base_version, highlight: marks };
    this.renderDraft();
    return true;
  }

  clearDraft() {
    if (!this.draft) return;
    this.draft = null;
    this.renderDraft();
  }

  draftShown() {
    return Boolean(this.draft);
  }

  renderDraft() {
    const bar = this.el.draftBar;
    clear(bar);
    bar.hidden = !this.draft;
    document.body.dataset.diagram = this.draft ? "draft" : "head";
    if (this.draft) {
      const back = h("button", { type: "button", class: "ghost draft-close" }, "Show the current version");
      back.addEventListener("click", () => {
        this.clearDraft();
        this.onDraftClosed();
      });
      bar.append(
        h("strong", {}, "Draft, not applied."),
        h("span", {}, ` The proposed changes on version ${this.draft.base_version}; nothing changes until you accept them.`),
        h("span", { class: "spacer" }),
        back,
      );
    }
    this.renderDiagramPane();
    this.renderRunBar();
    this.renderRunStep();
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
    this.el.diagram.classList.toggle("draft", Boolean(this.draft));
    if (this.draft) {
      renderDiagram(this.el.diagram, this.draft.model, {
        highlight: this.draft.highlight,
        draft: true,
        run: this.runStates(),
        onRunStep: (key) => this.openRunStep(key),
      });
      return;
    }
    if (!this.model) {
      clear(this.el.diagram);
      return;
    }
    renderDiagram(this.el.diagram, this.model, {
      highlight: this.highlight,
      selected: this.selectedJob,
      onSelect: (key) => this.selectJob(key, { show: true }),
      run: this.runStates(),
      onRunStep: (key) => this.openRunStep(key),
    });
    const runs = this.nextRunsNote();
    if (runs) this.el.diagram.prepend(runs);
  }

  // Above the diagram: when an enabled cron trigger runs next (the server steps the
  // expression on its clock: GET /v1/cron/next-runs); asked again when the expression
  // changes, drawn once the answer comes.
  nextRunsNote() {
    const trigger = this.model.triggers.find((t) => t.type === "cron" && t.enabled && t.cron);
    if (!trigger) return null;
    const expr = trigger.cron;
    if (!this.nextRuns || this.nextRuns.expr !== expr) {
      this.nextRuns = { expr, text: null };
      api("GET", `/v1/cron/next-runs?expr=${encodeURIComponent(expr)}`)
        .then((answer) => {
          if (this.nextRuns && this.nextRuns.expr === expr && answer.text) {
            this.nextRuns.text = answer.text;
            if (!this.draft && this.model) this.renderDiagramPane();
          }
        })
        .catch(() => {}); // an expression the server refuses: validation says why elsewhere
      return null;
    }
    if (!this.nextRuns.text) return null;
    return h("p", { class: "next-runs muted", role: "note" }, `Next runs: ${this.nextRuns.text}`);
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
    this.renderRunBar();
    this.renderRunStep();
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
