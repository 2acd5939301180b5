// Test runs (DESIGN §5c): the Run panel (JSON editors for the input state and the
// sample responses, the Run button, live progress, the result) and what the diagram
// and the Fix button take from a run.
//
// A run is the server's TestRun: {run_id, workflow_id, version, status, steps: [{key,
// name, status, duration_ms, input, output, error?, logs, truncated}], edges: [{source,
// target, fired}], requests: [{step_key, method, url, status, matched}], unsupported:
// [{key, reason}], final_state, error?, summary, duration_ms, runtime, created_at}.

import { append, clear, formatTime, h } from "./dom.js";

export const DEFAULT_INPUT = '{\n  "data": {}\n}';
export const DEFAULT_RESPONSES = "[]";

// The errors text of a Fix turn is bounded by the server (20 000 characters).
const ERRORS_LIMIT = 20_000;

const STATUS_TEXT = {
  succeeded: "Succeeded",
  failed: "Failed",
  timed_out: "Timed out",
  unsupported: "Cannot run here",
};

const STEP_MARK = { succeeded: "✓", failed: "✗", running: "…", skipped: "–", unsupported: "!" };

function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function parseJson(text, what) {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { error: `${what} is not valid JSON: ${error.message}` };
  }
}

// The editors' text as a run request, or {error, field} saying what is wrong (then
// nothing may be sent).
export function readRunRequest(inputText, responsesText) {
  const inputSource = (inputText || "").trim() || "{}";
  const input = parseJson(inputSource, "The input");
  if (input.error) return { field: "input", error: input.error };
  if (!isPlainObject(input.value)) {
    return { field: "input", error: 'The input must be a JSON object: the initial state, e.g. {"data": {...}}.' };
  }
  const responsesSource = (responsesText || "").trim() || "[]";
  const responses = parseJson(responsesSource, "The sample responses");
  if (responses.error) return { field: "responses", error: responses.error };
  if (!Array.isArray(responses.value)) {
    return { field: "responses", error: "The sample responses must be a JSON list: [{method, url, status, body}, ...]." };
  }
  for (const [index, sample] of responses.value.entries()) {
    const which = `Sample response ${index + 1}`;
    if (!isPlainObject(sample)) return { field: "responses", error: `${which} must be an object {method, url, status, body}.` };
    if (typeof sample.url !== "string" || !sample.url.trim()) {
      return { field: "responses", error: `${which} needs a "url" (a URL ending in * answers every URL it starts).` };
    }
    if (sample.method !== undefined && (typeof sample.method !== "string" || !/^[A-Za-z]+$/.test(sample.method))) {
      return { field: "responses", error: `${which}: "method" must be a word such as GET or POST.` };
    }
    if (
      sample.status !== undefined &&
      (!Number.isInteger(sample.status) || sample.status < 100 || sample.status > 599)
    ) {
      return { field: "responses", error: `${which}: "status" must be an HTTP status (100 to 599).` };
    }
  }
  return { request: { input: input.value, responses: responses.value } };
}

// key -> {status: succeeded|failed|running|skipped|unsupported, step?} for the diagram.
// A step reached twice shows how it ended the last time; `complete` false (live
// progress): steps not reported yet are left out rather than called skipped.
export function stepStates(run, jobKeys, { complete = true } = {}) {
  const states = new Map();
  for (const step of run.steps || []) states.set(step.key, { status: step.status, step });
  for (const item of run.unsupported || []) {
    if (!states.has(item.key)) states.set(item.key, { status: "unsupported", reason: item.reason });
  }
  if (complete) {
    for (const key of jobKeys) if (!states.has(key)) states.set(key, { status: "skipped" });
  }
  return states;
}

// The step the Fix turn is about: the first that failed.
export function failedStep(run) {
  return (run.steps || []).find((step) => step.status === "failed") || null;
}

export function canFix(run) {
  return Boolean(run) && (run.status === "failed" || run.status === "timed_out");
}

function pretty(value) {
  if (value === undefined) return "";
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

// The `errors` text of the Fix turn (api.md): the failed step's name and key, its
// error, and its input JSON; the run's own error when no step failed.
export function fixErrors(run) {
  const step = failedStep(run);
  const head = `Test run ${run.run_id} of version ${run.version ?? "?"} ${
    run.status === "timed_out" ? "timed out" : "failed"
  }.`;
  if (!step) return `${head}\nError: ${run.error || run.summary || "the run did not finish"}`.slice(0, ERRORS_LIMIT);
  const lines = [
    head,
    `Failed step: "${step.name}" (key ${step.key})`,
    `Error: ${step.error || "(no message)"}`,
  ];
  const unmatched = (run.requests || []).filter((r) => !r.matched && (!r.step_key || r.step_key === step.key));
  for (const request of unmatched) {
    lines.push(`Request without a sample response: ${request.method} ${request.url}`);
  }
  lines.push("Input state:");
  const text = lines.join("\n");
  let input = pretty(step.input);
  const room = ERRORS_LIMIT - text.length - 1;
  if (input.length > room) input = `${JSON.stringify(step.input).slice(0, Math.max(0, room - 12))} …(cut)`;
  return `${text}\n${input}`;
}

function jsonBlock(label, value, cls) {
  return h(
    "div",
    { class: `step-part ${cls}` },
    h("div", { class: "step-part-label" }, label),
    h("pre", { class: "code json" }, value === undefined || value === null ? "null" : pretty(value)),
  );
}

// A step's input, output, logs and error (the Run panel and the diagram's step box).
export function stepDetail(step) {
  const logs = step.logs || [];
  return h(
    "div",
    { class: "step-detail", "data-key": step.key },
    step.error ? h("div", { class: "step-error", role: "alert" }, `Error: ${step.error}`) : null,
    jsonBlock("Output", step.output, "step-output"),
    jsonBlock("Input", step.input, "step-input"),
    h(
      "div",
      { class: "step-part step-logs" },
      h("div", { class: "step-part-label" }, `Logs (${logs.length})`),
      logs.length ? h("pre", { class: "code logs" }, logs.join("\n")) : h("span", { class: "muted" }, "nothing logged"),
    ),
    step.truncated ? h("div", { class: "muted" }, "Cut to the run's output limit.") : null,
  );
}

function durationText(ms) {
  if (ms === undefined || ms === null) return "";
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export class RunPanel {
  // elements: {form, input, responses, button, problem, progress, result, target};
  // onRun(request) starts a run (false: could not); onFix(run); nameOf(key) -> step name;
  // jobKeys() -> the shown workflow's step keys; fixAllowed() -> null when this
  // session cannot edit (no Fix button), else whether a Fix turn may be sent now.
  constructor(elements, { onRun, onFix, nameOf, jobKeys, fixAllowed }) {
    this.el = elements;
    this.onRun = onRun;
    this.onFix = onFix;
    this.nameOf = nameOf;
    this.jobKeys = jobKeys;
    this.fixAllowed = fixAllowed;
    this.run = null; // the last finished run shown
    this.draftOf = null; // the base version of the open proposal whose draft Run runs
    this.running = false;
    this.progressRun = null; // {run_id, steps: Map key -> status} while one runs
    this.el.input.value = DEFAULT_INPUT;
    this.el.responses.value = DEFAULT_RESPONSES;
    this.el.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    for (const editor of [this.el.input, this.el.responses]) {
      editor.addEventListener("input", () => {
        editor.removeAttribute("aria-invalid");
        this.el.problem.textContent = "";
      });
    }
  }

  // While a proposal is open the server runs its draft (a `run` frame without a
  // version): the button and a note say so. `baseVersion`: the proposal's base; null:
  // none open, Run runs the current version.
  setDraft(baseVersion) {
    this.draftOf = baseVersion ?? null;
    const target = this.el.target;
    if (target) {
      target.hidden = this.draftOf === null;
      target.textContent =
        this.draftOf === null
          ? ""
          : `A proposal is waiting for review: Run tests its draft (the proposed changes on version ${this.draftOf}), not the current version. Nothing is applied.`;
    }
    this.el.form.dataset.target = this.draftOf === null ? "version" : "draft";
    if (!this.running) this.el.button.textContent = this.idleLabel(Boolean(this.run));
  }

  idleLabel(again) {
    if (this.draftOf !== null) return "Run the proposed draft";
    return again ? "Run again" : "Run";
  }

  reset() {
    this.run = null;
    this.running = false;
    this.progressRun = null;
    clear(this.el.progress);
    clear(this.el.result);
    this.el.result.hidden = true;
    this.el.problem.textContent = "";
    this.el.button.disabled = false;
    this.el.button.textContent = this.idleLabel(false);
    delete this.el.result.dataset.status;
  }

  submit() {
    if (this.running) return;
    const read = readRunRequest(this.el.input.value, this.el.responses.value);
    this.el.input.removeAttribute("aria-invalid");
    this.el.responses.removeAttribute("aria-invalid");
    if (read.error) {
      const editor = read.field === "input" ? this.el.input : this.el.responses;
      editor.setAttribute("aria-invalid", "true");
      this.el.problem.textContent = `${read.error} Nothing was run.`;
      editor.focus();
      return;
    }
    this.el.problem.textContent = "";
    if (this.onRun(read.request) === false) {
      this.el.problem.textContent = "Could not start the run: not connected.";
    }
  }

  // A run was asked for (by the button, or by the planner's test_run tool).
  waiting() {
    this.running = true;
    this.progressRun = { run_id: null, steps: new Map() };
    this.el.button.disabled = true;
    this.el.button.textContent = "Running…";
    clear(this.el.progress);
    this.el.progress.append(h("li", { class: "run-line starting" }, h("span", { class: "spinner" }), "Starting OpenFn's runtime…"));
    this.el.progress.dataset.state = "running";
    this.updateFix();
  }

  progress(frame) {
    if (!this.running || (this.progressRun.run_id && this.progressRun.run_id !== frame.run_id)) {
      this.waiting();
    }
    this.progressRun.run_id = frame.run_id;
    this.progressRun.steps.set(frame.step_key, frame.status);
    for (const line of this.el.progress.querySelectorAll(".run-line.starting")) line.remove();
    const lines = [...this.el.progress.querySelectorAll("li.run-line")];
    let line = lines.reverse().find((li) => li.dataset.key === frame.step_key && li.dataset.status === "started");
    if (!line || frame.status === "started") {
      line = h("li", { class: "run-line", "data-key": frame.step_key });
      this.el.progress.append(line);
    }
    line.dataset.status = frame.status;
    clear(line).append(
      frame.status === "started"
        ? h("span", { class: "spinner", "aria-hidden": "true" })
        : h("span", { class: `icon ${frame.status}` }, STEP_MARK[frame.status] || "·"),
      h("span", {}, `${this.nameOf(frame.step_key)} `),
      h("span", { class: "muted" }, frame.status === "started" ? "running…" : frame.status),
    );
  }

  // Live states for the diagram while a run goes (null when none runs).
  liveStates() {
    if (!this.running || !this.progressRun) return null;
    const states = new Map();
    for (const [key, status] of this.progressRun.steps) {
      states.set(key, { status: status === "started" ? "running" : status });
    }
    return states;
  }

  failed(message) {
    this.running = false;
    this.progressRun = null;
    this.el.button.disabled = false;
    this.el.button.textContent = this.idleLabel(Boolean(this.run));
    this.el.progress.dataset.state = "idle";
    clear(this.el.progress);
    this.el.problem.textContent = message;
    this.updateFix();
  }

  completed(run) {
    this.running = false;
    this.progressRun = null;
    this.el.button.disabled = false;
    this.el.button.textContent = this.idleLabel(true);
    this.el.progress.dataset.state = "idle";
    clear(this.el.progress);
    this.show(run);
  }

  // Fix buttons follow whether a turn may be sent (not while one runs or waits).
  updateFix() {
    const allowed = this.fixAllowed();
    for (const button of document.querySelectorAll("button.fix-run")) {
      button.disabled = !allowed;
    }
  }

  fixButton(run) {
    const button = h("button", { type: "button", class: "fix-run danger-outline" }, "Fix it");
    button.title = "Ask the planner to fix the step that failed (errors mode)";
    button.disabled = !this.fixAllowed();
    button.addEventListener("click", () => {
      if (!button.disabled) this.onFix(run);
    });
    return button;
  }

  show(run) {
    this.run = run;
    const root = this.el.result;
    clear(root);
    root.hidden = false;
    root.dataset.status = run.status;
    root.dataset.runId = run.run_id;
    const steps = run.steps || [];
    const ran = new Set(steps.map((step) => step.key));
    const fixable = canFix(run) && this.fixAllowed() !== null;
    append(
      root,
      h(
        "div",
        { class: "run-head" },
        h("span", { class: `run-status-chip ${run.status}` }, STATUS_TEXT[run.status] || run.status),
        run.version
          ? h("span", { class: "chip" }, run.draft ? `draft of version ${run.version}` : `version ${run.version}`)
          : null,
        h("span", { class: "muted" }, `${durationText(run.duration_ms)}${run.created_at ? ` · ${formatTime(run.created_at)}` : ""}`),
        h("span", { class: "spacer" }),
        fixable ? this.fixButton(run) : null,
      ),
      run.summary ? h("p", { class: "run-summary" }, run.summary) : null,
      run.error ? h("div", { class: "run-error", role: "alert" }, run.error) : null,
      h(
        "ol",
        { class: "run-steps", "aria-label": "Steps in the order they ran" },
        steps.map((step, index) =>
          h(
            "li",
            { class: `run-step ${step.status}`, "data-key": step.key, "data-status": step.status, "data-index": String(index) },
            h(
              "details",
              {},
              h(
                "summary",
                {},
                h("span", { class: `icon ${step.status}` }, STEP_MARK[step.status] || "·"),
                h("span", { class: "run-step-name" }, step.name || this.nameOf(step.key)),
                h("span", { class: "muted" }, ` ${step.key} · ${durationText(step.duration_ms)}`),
              ),
              stepDetail(step),
            ),
          ),
        ),
      ),
    );
    if (!steps.length) root.append(h("p", { class: "muted" }, "No step ran."));
    const skipped = this.skippedNames(ran, run);
    if (skipped.length) {
      root.append(h("p", { class: "run-skipped muted" }, `Not run: ${skipped.join(", ")}.`));
    }
    if ((run.unsupported || []).length) {
      append(
      root,
        h("div", { class: "run-part-label" }, "Cannot run here"),
        h(
          "ul",
          { class: "run-unsupported" },
          run.unsupported.map((item) => h("li", { "data-key": item.key }, `${this.nameOf(item.key)}: ${item.reason}`)),
        ),
      );
    }
    root.append(h("div", { class: "run-part-label" }, `HTTP requests (${(run.requests || []).length})`));
    if ((run.requests || []).length) {
      append(
      root,
        h(
          "table",
          { class: "run-requests" },
          h("thead", {}, h("tr", {}, h("th", {}, "Step"), h("th", {}, "Request"), h("th", {}, "Answer"))),
          h(
            "tbody",
            {},
            run.requests.map((request) =>
              h(
                "tr",
                { class: request.matched ? "matched" : "unmatched", "data-matched": String(Boolean(request.matched)) },
                h("td", {}, request.step_key ? this.nameOf(request.step_key) : ""),
                h("td", { class: "request-url" }, `${request.method} ${request.url}`),
                h(
                  "td",
                  {},
                  request.matched
                    ? `sample response ${request.status ?? ""}`.trim()
                    : "no sample response: the step got an error",
                ),
              ),
            ),
          ),
        ),
      );
    } else {
      root.append(h("p", { class: "muted" }, "None."));
    }
    if ((run.edges || []).length) {
      append(
      root,
        h("div", { class: "run-part-label" }, "Edges"),
        h(
          "ul",
          { class: "run-edges" },
          run.edges.map((edge) =>
            h(
              "li",
              { class: edge.fired ? "fired" : "not-fired", "data-edge": `${edge.source}->${edge.target}` },
              `${this.nameOf(edge.source)} → ${this.nameOf(edge.target)}: ${edge.fired ? "taken" : "not taken"}`,
            ),
          ),
        ),
      );
    }
    const versions = Object.entries(run.runtime || {});
    if (versions.length) {
      root.append(h("p", { class: "run-runtime muted" }, `Ran in ${versions.map(([p, v]) => `${p} ${v}`).join(", ")}`));
    }
  }

  skippedNames(ran, run) {
    const unsupported = new Set((run.unsupported || []).map((item) => item.key));
    return this.jobKeys()
      .filter((key) => !ran.has(key) && !unsupported.has(key))
      .map((key) => this.nameOf(key));
  }

  // Open a step's detail in the result (from the diagram).
  openStep(key) {
    const items = [...this.el.result.querySelectorAll("li.run-step")].filter((li) => li.dataset.key === key);
    const item = items[items.length - 1];
    if (!item) return false;
    item.querySelector("details").open = true;
    item.scrollIntoView({ block: "nearest" });
    return true;
  }
}

export { durationText, STATUS_TEXT, STEP_MARK };
