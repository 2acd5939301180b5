// The conversation pane: messages, per-tool status lines, confirmation cards, plan
// cards and per-workflow build progress, errors.

import { h, clear } from "./dom.js";
import { planCard } from "./plan.js";
import { ReviewCard } from "./review.js";

// What an error code means here; `subject` is "workflow" or "project" (a project session).
const ERROR_TEXT = {
  busy: (subject) => `Another turn is running on this ${subject}. Wait for it to finish, then send again.`,
  cancelled: (subject) => `Stopped. The ${subject} keeps every change made before the stop.`,
  proposal_pending: () =>
    "Proposed changes are waiting for a review: accept or reject them first, then send again.",
};

export class ChatView {
  constructor(root, { onConfirm }) {
    this.root = root;
    this.onConfirm = onConfirm;
    this.turn = null; // {id, el, statuses, bubble}
    this.planNames = new Map(); // workflow key -> name, from the latest plan card
    this.subject = "workflow"; // what the session's turns change: "workflow" | "project"
  }

  nearBottom() {
    return this.root.scrollHeight - this.root.scrollTop - this.root.clientHeight < 80;
  }

  append(el) {
    const stick = this.nearBottom();
    this.root.append(el);
    if (stick) this.root.scrollTop = this.root.scrollHeight;
    return el;
  }

  scrollToEnd() {
    this.root.scrollTop = this.root.scrollHeight;
  }

  reset() {
    clear(this.root);
    this.turn = null;
  }

  bubble(role, text, extra = "") {
    return h(
      "div",
      { class: `msg ${role} ${extra}`.trim(), "data-role": role },
      h("div", { class: "msg-who" }, role === "user" ? "You" : "Planner"),
      h("div", { class: "msg-body" }, text),
    );
  }

  renderHistory(messages, { project = false } = {}) {
    this.reset();
    if (!messages.length) {
      this.append(
        h(
          "div",
          { class: "msg system" },
          project
            ? "Paste a spec or SOP that describes several processes (a heading per process, with " +
                "its steps) and send it with Plan on: you review the proposed workflows before " +
                "anything is built."
            : "Start by describing the workflow, e.g. “create a workflow that gets referrals from http, " +
                "checks coverage with fhir, then emails the coordinator with gmail”.",
        ),
      );
    }
    for (const message of messages) {
      this.append(this.bubble(message.role === "user" ? "user" : "assistant", message.content));
    }
    this.scrollToEnd();
  }

  addUser(text) {
    for (const el of this.root.querySelectorAll(".msg.system")) el.remove();
    this.append(this.bubble("user", text));
  }

  ensureTurn(turnId) {
    if (this.turn && (!turnId || this.turn.id === turnId || this.turn.id === null)) {
      if (turnId) this.turn.id = turnId;
      return this.turn;
    }
    const el = h("div", { class: "turn", "data-turn-id": turnId || "" });
    this.turn = { id: turnId || null, el, bubble: null, text: "" };
    this.append(el);
    return this.turn;
  }

  // A turn waiting for another on the workflow: one note, updated as it moves up, gone
  // once the turn starts or ends.
  queued(frame) {
    const text = frame.position === 1
      ? "Queued: another turn is running on this workflow; yours starts next."
      : `Queued: another turn is running on this workflow; yours is number ${frame.position} in line.`;
    if (!this.queuedNote) this.queuedNote = this.note(text, "queued");
    else this.queuedNote.textContent = text;
    this.queuedNote.dataset.position = String(frame.position);
  }

  clearQueued() {
    if (this.queuedNote) this.queuedNote.remove();
    this.queuedNote = null;
  }

  startTurn(turnId) {
    this.clearQueued();
    this.turn = null;
    const turn = this.ensureTurn(turnId);
    turn.el.classList.add("running");
    turn.thinking = h("div", { class: "thinking" }, h("span", { class: "spinner" }), "Thinking…");
    turn.el.append(turn.thinking);
  }

  clearThinking() {
    if (this.turn && this.turn.thinking) {
      this.turn.thinking.remove();
      this.turn.thinking = null;
    }
  }

  route(frame) {
    const turn = this.ensureTurn(frame.turn_id);
    turn.el.dataset.route = frame.destination;
    if (frame.destination === "job_code") {
      this.status({ phase: "settled", tool: "route", text: "Sent to the step-code agent." }, true);
    }
  }

  // A proposed plan (see plan.js); an earlier card of the same turn stays, answered.
  plan(review, { readOnly }) {
    const turn = this.ensureTurn(review.turn_id);
    this.clearThinking();
    this.planNames = new Map(review.plan.workflows.map((w) => [w.key, w.name]));
    const card = planCard(review, { readOnly, onAnswer: this.onConfirm });
    turn.el.append(card);
    this.scrollToEnd();
    return card;
  }

  // A review-mode turn's proposal (see review.js); returns the ReviewCard.
  review(proposal, { readOnly, onAnswer, onPreview }) {
    const turn = this.ensureTurn(proposal.turn_id);
    this.clearThinking();
    // The planner's words (streamed) end here: a proposal has no `message` frame, and
    // its question repeats them (for clients that saw no stream), so they show once.
    if (turn.bubble) turn.bubble.classList.remove("streaming");
    const streamed = (turn.text || "").trim();
    if (streamed && proposal.question.startsWith(streamed)) {
      proposal = { ...proposal, question: proposal.question.slice(streamed.length).trim() };
    }
    for (const li of turn.el.querySelectorAll("li.status.spinning")) {
      li.classList.remove("spinning");
      li.querySelector(".spinner").className = "icon";
    }
    const card = new ReviewCard(proposal, { readOnly, onAnswer, onPreview });
    turn.el.append(card.el);
    this.scrollToEnd();
    return card;
  }

  // A plan card answered (or superseded) somewhere else: no longer answerable here.
  planAnsweredElsewhere(requestId) {
    for (const card of this.root.querySelectorAll(".plan-card:not([data-answer])")) {
      if (card.dataset.requestId !== requestId) continue;
      card.dataset.answer = "elsewhere";
      card.classList.add("elsewhere");
      for (const part of card.querySelectorAll(".plan-actions, .plan-adjust")) part.remove();
      card.querySelector(".plan-outcome").textContent =
        "Answered elsewhere (another page or device): the project pane shows where the plan stands.";
    }
  }

  // plan.progress: one line per planned workflow, spinning while it builds.
  progress(frame) {
    const name = this.planNames.get(frame.workflow_key) || frame.workflow_key;
    const tool = `plan:${frame.workflow_key}`;
    const detail = frame.message ? `: ${frame.message}` : "";
    const failed = frame.status === "failed";
    if (frame.status === "building") {
      this.status({ turn_id: frame.turn_id, phase: "spinner", tool, text: `Building ${name}…` });
    } else {
      // A built workflow's own status lines (above) already say what its build did.
      const text = failed ? `Could not build ${name}${detail}` : `Built ${name}`;
      this.status({ turn_id: frame.turn_id, phase: "settled", tool, text }, false, { failed });
    }
    const lines = [...this.turn.el.querySelectorAll("li.status")].filter((li) => li.dataset.tool === tool);
    const li = lines[lines.length - 1];
    if (li) {
      li.classList.add("plan-progress");
      li.dataset.workflowKey = frame.workflow_key;
      li.dataset.status = frame.status;
    }
  }

  status(frame, info = false, { failed = false } = {}) {
    const turn = this.ensureTurn(frame.turn_id);
    this.clearThinking();
    // Status lines group in lists, in order with the cards and text around them.
    let list = turn.el.lastElementChild;
    if (!list || !list.matches("ul.statuses")) {
      list = h("ul", { class: "statuses" });
      turn.el.append(list);
    }
    if (frame.phase === "spinner") {
      list.append(
        h(
          "li",
          { class: "status spinning", "data-tool": frame.tool },
          h("span", { class: "spinner", "aria-hidden": "true" }),
          h("span", { class: "status-text" }, frame.text),
        ),
      );
    } else {
      const open = [...turn.el.querySelectorAll("li.status.spinning")].find(
        (li) => li.dataset.tool === frame.tool,
      );
      const li =
        open ||
        list.appendChild(
          h("li", { class: "status", "data-tool": frame.tool }, h("span", { class: "icon" }), h("span", { class: "status-text" })),
        );
      li.classList.remove("spinning");
      li.classList.add("settled");
      if (info) li.classList.add("info");
      if (failed) li.classList.add("failed");
      const icon = li.querySelector(".spinner, .icon");
      icon.className = "icon";
      icon.textContent = info ? "→" : failed ? "✗" : "✓";
      li.querySelector(".status-text").textContent = frame.text;
    }
    if (this.nearBottom()) this.scrollToEnd();
  }

  assistantBubble(turnId) {
    const turn = this.ensureTurn(turnId);
    this.clearThinking();
    if (!turn.bubble) {
      turn.bubble = this.bubble("assistant", "", "streaming");
      turn.el.append(turn.bubble);
    }
    return turn.bubble;
  }

  delta(frame) {
    const bubble = this.assistantBubble(frame.turn_id);
    this.turn.text += frame.text;
    bubble.querySelector(".msg-body").textContent = this.turn.text;
    if (this.nearBottom()) this.scrollToEnd();
  }

  message(frame) {
    const bubble = this.assistantBubble(frame.turn_id);
    this.turn.text = frame.text;
    bubble.querySelector(".msg-body").textContent = frame.text;
    bubble.classList.remove("streaming");
    this.scrollToEnd();
  }

  // A reply that offers plan mode (message.offer === "plan"): one button that sends the
  // same message again as a plan; it is spent once pressed.
  offerPlan(frame, take) {
    const bubble = this.assistantBubble(frame.turn_id);
    const button = h("button", { type: "button", class: "approve plan-offer" }, "Plan it");
    button.addEventListener("click", () => {
      if (take()) button.disabled = true;
    });
    bubble.append(h("div", { class: "confirm-actions" }, button));
  }

  confirm(frame, { readOnly }) {
    const turn = this.ensureTurn(frame.turn_id);
    this.clearThinking();
    const approve = h("button", { type: "button", class: "approve" }, "Approve");
    const cancel = h("button", { type: "button", class: "ghost cancel" }, "Cancel");
    const outcome = h("div", { class: "confirm-outcome muted" });
    const actions = h("div", { class: "confirm-actions" }, readOnly ? "" : [cancel, approve]);
    const card = h(
      "div",
      { class: "confirm-card", "data-request-id": frame.request_id, role: "group", "aria-label": "Confirmation" },
      h("div", { class: "confirm-title" }, "Confirm this change"),
      h("div", { class: "confirm-question" }, frame.question),
      actions,
      outcome,
    );
    const answer = (approved) => {
      approve.disabled = true;
      cancel.disabled = true;
      if (this.onConfirm(frame.request_id, approved)) {
        card.classList.add(approved ? "approved" : "declined");
        actions.remove();
        outcome.textContent = approved ? "Approved, continuing…" : "Cancelled, nothing was removed.";
      } else {
        approve.disabled = false;
        cancel.disabled = false;
        outcome.textContent = "Not connected: try again in a moment.";
      }
    };
    approve.addEventListener("click", () => answer(true));
    cancel.addEventListener("click", () => answer(false));
    turn.el.append(card);
    this.scrollToEnd();
    return card;
  }

  endTurn(frame) {
    if (!this.turn) return;
    this.clearThinking();
    this.turn.el.classList.remove("running");
    for (const li of this.turn.el.querySelectorAll("li.status.spinning")) {
      li.classList.remove("spinning");
      li.querySelector(".spinner").className = "icon";
    }
    if (this.turn.bubble) this.turn.bubble.classList.remove("streaming");
    for (const outcome of this.turn.el.querySelectorAll(".confirm-card.approved .confirm-outcome")) {
      outcome.textContent = "Approved.";
    }
    for (const outcome of this.turn.el.querySelectorAll(".plan-card.approved .plan-outcome")) {
      outcome.textContent = "Approved.";
    }
    if (frame && frame.type === "turn.completed") this.turn.el.dataset.version = frame.version;
    this.turn = null;
  }

  error(frame) {
    this.clearQueued();
    const explain = ERROR_TEXT[frame.code];
    const text = (explain && explain(this.subject)) || frame.message || "Something went wrong.";
    const el = h(
      "div",
      { class: "msg error", "data-code": frame.code || "error", role: "alert" },
      h("div", { class: "msg-who" }, frame.code === "busy" ? "Busy" : "Error"),
      h("div", { class: "msg-body" }, text),
    );
    if (this.turn && (!frame.turn_id || frame.turn_id === this.turn.id)) {
      this.clearThinking();
      this.turn.el.append(el);
      this.scrollToEnd();
    } else {
      this.append(el);
    }
    return el;
  }

  note(text, kind = "info") {
    return this.append(h("div", { class: `msg note ${kind}` }, text));
  }
}
