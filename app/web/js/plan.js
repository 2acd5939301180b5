// The plan card: a proposed project plan (a `plan.proposed` frame, or a session's
// `pending_confirmation.plan` after a reload) with Approve / Adjust / Reject.
//
// A review is {request_id, turn_id?, question, plan, contracts, delta, revision}; the
// answer goes back as `confirm {request_id, approved, feedback?}` through onAnswer.

import { h } from "./dom.js";

export const FIELD_LABELS = {
  name: "Name",
  purpose: "Purpose",
  trigger: "Trigger",
  inputs: "Inputs",
  outputs: "Outputs",
  depends_on: "Depends on",
  steps: "Steps",
};

// 'webhook' | 'cron 0 7 * * 1-5'
export function triggerText(trigger) {
  if (!trigger) return "webhook";
  if (trigger.type === "cron") return `cron ${trigger.cron_expression || "(no schedule)"}`;
  return trigger.type || "webhook";
}

export function listText(items) {
  return items && items.length ? items.join(", ") : "none";
}

// The review shape from either source: a plan.proposed frame, or a session's
// pending_confirmation (whose plan part sits under `.plan`).
export function reviewFrom(source) {
  if (!source) return null;
  const part = source.plan && source.plan.plan ? source.plan : source;
  if (!part.plan) return null;
  return {
    turn_id: source.turn_id || null,
    request_id: source.request_id,
    question: source.question || "",
    plan: part.plan,
    contracts: part.contracts || [],
    delta: part.delta || null,
    revision: part.revision || 1,
  };
}

// key -> {kind: "added"|"changed"|"unchanged", fields: Set} for a delta (null: no delta).
export function deltaMarks(delta) {
  const marks = new Map();
  if (!delta) return marks;
  for (const key of delta.added || []) marks.set(key, { kind: "added", fields: new Set() });
  for (const change of delta.changed || []) {
    marks.set(change.key, { kind: "changed", fields: new Set(change.fields || []) });
  }
  for (const key of delta.unchanged || []) marks.set(key, { kind: "unchanged", fields: new Set() });
  return marks;
}

// One line per planned change, for the delta summary at the top of the card.
export function deltaLines(delta) {
  if (!delta) return [];
  const lines = [];
  for (const key of delta.added || []) lines.push({ kind: "added", text: `Added ${key}` });
  for (const change of delta.changed || []) {
    const fields = (change.fields || []).map((f) => (FIELD_LABELS[f] || f).toLowerCase());
    lines.push({ kind: "changed", text: `Changed ${change.key} (${fields.join(", ")})` });
  }
  for (const key of delta.removed || []) {
    lines.push({ kind: "removed", text: `Removed ${key} (its workflow is kept as it is)` });
  }
  if (!lines.length) lines.push({ kind: "unchanged", text: "Nothing changes" });
  return lines;
}

// The planned workflows in build order (any the order leaves out, after).
export function inOrder(plan) {
  const byKey = new Map(plan.workflows.map((w) => [w.key, w]));
  const keys = new Set([...(plan.order || []).filter((key) => byKey.has(key)), ...byKey.keys()]);
  return [...keys].map((key) => byKey.get(key));
}

function field(name, value, changed) {
  return [
    h("dt", { class: changed ? "changed" : undefined }, FIELD_LABELS[name]),
    h("dd", { class: changed ? "changed" : undefined, "data-field": name }, value),
  ];
}

function workflowItem(workflow, mark) {
  const changed = (name) => Boolean(mark && mark.fields.has(name));
  const steps = workflow.steps && workflow.steps.length
    ? h("ol", { class: "pw-steps" }, workflow.steps.map((step) => h("li", {}, step)))
    : "none";
  return h(
    "li",
    {
      class: `plan-workflow${mark ? ` ${mark.kind}` : ""}`,
      "data-key": workflow.key,
      "data-delta": mark ? mark.kind : undefined,
    },
    h(
      "div",
      { class: "pw-head" },
      h("strong", { class: `pw-name${changed("name") ? " changed" : ""}` }, workflow.name),
      h("span", { class: "chip pw-key" }, workflow.key),
      mark && mark.kind !== "unchanged" ? h("span", { class: `chip pw-delta ${mark.kind}` }, mark.kind) : null,
    ),
    h("div", { class: `pw-purpose${changed("purpose") ? " changed" : ""}` }, workflow.purpose),
    h(
      "dl",
      { class: "pw-fields" },
      field("trigger", triggerText(workflow.trigger), changed("trigger")),
      field("inputs", listText(workflow.inputs), changed("inputs")),
      field("outputs", listText(workflow.outputs), changed("outputs")),
      field("depends_on", listText(workflow.depends_on), changed("depends_on")),
      field("steps", steps, changed("steps")),
    ),
  );
}

function contractItem(contract, names) {
  const name = (key) => names.get(key) || key;
  return h(
    "li",
    { class: "plan-contract", "data-source": contract.source, "data-target": contract.target },
    h("strong", {}, name(contract.source)),
    " → ",
    h("strong", {}, name(contract.target)),
    `: ${listText(contract.data)}`,
    h(
      "span",
      { class: "muted" },
      contract.via === "review"
        ? ` · reviewed by the ${contract.reviewer}; the decision comes to /i/${contract.webhook_path}`
        : ` · ${contract.via || "webhook"} /i/${contract.webhook_path}`,
    ),
  );
}

// The card; onAnswer(requestId, approved, feedback?) -> true when the answer was sent.
export function planCard(review, { readOnly = false, onAnswer }) {
  const plan = review.plan;
  const names = new Map(plan.workflows.map((w) => [w.key, w.name]));
  const marks = deltaMarks(review.delta);
  const removed = (review.delta && review.delta.removed) || [];

  const approve = h("button", { type: "button", class: "approve" }, "Approve and build");
  const adjust = h("button", { type: "button", class: "ghost adjust" }, "Adjust…");
  const reject = h("button", { type: "button", class: "ghost reject" }, "Reject");
  const feedback = h("textarea", {
    class: "plan-feedback",
    rows: "3",
    placeholder: "What should change? e.g. “merge the two checks into one workflow”",
    "aria-label": "Feedback on the plan",
  });
  const sendFeedback = h("button", { type: "submit", class: "send-feedback" }, "Send feedback");
  const cancelAdjust = h("button", { type: "button", class: "ghost cancel-adjust" }, "Back");
  const adjustForm = h(
    "form",
    { class: "plan-adjust", hidden: true },
    feedback,
    h("div", { class: "plan-adjust-actions" }, cancelAdjust, sendFeedback),
  );
  const actions = h("div", { class: "plan-actions" }, readOnly ? null : [reject, adjust, approve]);
  const outcome = h("div", { class: "plan-outcome muted", role: "status" });

  const card = h(
    "div",
    {
      class: "plan-card",
      role: "group",
      "aria-label": "Proposed plan",
      "data-request-id": review.request_id,
      "data-revision": String(review.revision),
    },
    h(
      "div",
      { class: "plan-title" },
      `Proposed plan · ${plan.workflows.length} workflow${plan.workflows.length === 1 ? "" : "s"}`,
      h("span", { class: "chip plan-revision" }, `revision ${review.revision}`),
    ),
    review.question ? h("div", { class: "plan-question" }, review.question) : null,
    h("p", { class: "plan-summary" }, plan.summary),
    review.delta
      ? h(
          "ul",
          { class: "plan-delta", "aria-label": "What changes" },
          deltaLines(review.delta).map((line) => h("li", { class: `delta-line ${line.kind}` }, line.text)),
        )
      : null,
    h(
      "ol",
      { class: "plan-workflows" },
      inOrder(plan).map((workflow) => workflowItem(workflow, marks.get(workflow.key))),
      removed.map((key) =>
        h(
          "li",
          { class: "plan-workflow removed", "data-key": key, "data-delta": "removed" },
          h("div", { class: "pw-head" }, h("strong", { class: "pw-name" }, key), h("span", { class: "chip pw-delta removed" }, "removed")),
        ),
      ),
    ),
    h(
      "div",
      { class: "plan-order" },
      h("span", { class: "plan-label" }, "Build order (leaf first): "),
      h(
        "ol",
        { class: "order-list" },
        plan.order.map((key) => h("li", { "data-key": key }, names.get(key) || key)),
      ),
    ),
    h(
      "div",
      { class: "plan-contracts-block" },
      h("span", { class: "plan-label" }, "Hand-offs: "),
      review.contracts.length
        ? h("ul", { class: "plan-contracts" }, review.contracts.map((c) => contractItem(c, names)))
        : h("span", { class: "muted" }, "none (the workflows run independently)"),
    ),
    actions,
    readOnly ? null : adjustForm,
    outcome,
  );
  if (readOnly) {
    outcome.textContent = "Waiting for an editor to approve, adjust or reject this plan.";
    return card;
  }

  const buttons = [approve, adjust, reject, sendFeedback, cancelAdjust];
  const setDisabled = (disabled) => {
    for (const button of buttons) button.disabled = disabled;
    feedback.disabled = disabled;
  };
  const answer = (approved, text, state, message) => {
    setDisabled(true);
    if (onAnswer(review.request_id, approved, text)) {
      card.classList.add(state);
      card.dataset.answer = state;
      actions.remove();
      adjustForm.remove();
      outcome.textContent = message;
    } else {
      setDisabled(false);
      outcome.textContent = "Not connected: try again in a moment.";
    }
  };
  approve.addEventListener("click", () => answer(true, undefined, "approved", "Approved: building the workflows…"));
  reject.addEventListener("click", () => answer(false, undefined, "rejected", "Rejected: nothing was built."));
  adjust.addEventListener("click", () => {
    adjustForm.hidden = false;
    actions.hidden = true;
    feedback.focus();
  });
  cancelAdjust.addEventListener("click", () => {
    adjustForm.hidden = true;
    actions.hidden = false;
  });
  adjustForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = feedback.value.trim();
    if (!text) {
      outcome.textContent = "Say what should change, or press Back.";
      feedback.focus();
      return;
    }
    answer(false, text, "adjusted", `Feedback sent: “${text}”. Revising the plan…`);
  });
  return card;
}
