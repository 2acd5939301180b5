// The review card: a review-mode turn's proposal (a `proposal` frame, or a session's
// `pending_confirmation.proposal` after a reload) with the diff, one checkbox per
// change (its summary, its impact in red) and Accept / Reject (DESIGN §5c).
//
// A proposal is {request_id, turn_id?, question, base_version, yaml, diff, changes:
// [{id, tool, summary, impact: [str]}]}; the answer goes back as `review {request_id,
// accepted: [change ids]}` through onAnswer (all ids: accept all; []: reject).

import { h } from "./dom.js";
import { renderUnifiedDiff } from "./diff.js";

// The proposal from either source: a `proposal` frame, or a session's pending
// confirmation (whose proposal sits under `.proposal`); null when it is neither.
export function proposalFrom(source) {
  if (!source) return null;
  const part = source.proposal && typeof source.proposal === "object" ? source.proposal : source;
  if (!Array.isArray(part.changes) || typeof part.yaml !== "string") return null;
  return {
    proposal: true,
    turn_id: source.turn_id || part.turn_id || null,
    request_id: source.request_id || part.request_id,
    question: source.question || part.question || "",
    base_version: part.base_version,
    yaml: part.yaml,
    diff: part.diff || "",
    changes: part.changes.map((change) => ({
      id: String(change.id),
      tool: change.tool || "",
      summary: change.summary || "",
      impact: Array.isArray(change.impact) ? change.impact.map(String) : [],
    })),
  };
}

// What an error answering a proposal means, and whether the card stays answerable.
export const REVIEW_ERRORS = {
  stale_proposal: {
    open: false,
    text:
      "The workflow changed since this was proposed (another editor saved a version) and " +
      "these changes no longer apply to it. Nothing was committed; ask again to get a new proposal.",
  },
  dependent_change: {
    open: true,
    text:
      "A change you accepted needs one you left out, so nothing was committed. Tick what " +
      "it needs as well, or leave it out too, and answer again.",
  },
  no_pending_proposal: {
    open: false,
    text: "This proposal is no longer open (it was answered elsewhere). Nothing was committed here.",
  },
};

export class ReviewCard {
  // onAnswer(requestId, acceptedIds) -> true when the answer was sent;
  // onPreview(showDraft: bool) switches the diagram between the draft and the head.
  constructor(proposal, { readOnly = false, onAnswer, onPreview }) {
    this.proposal = proposal;
    this.onAnswer = onAnswer;
    this.onPreview = onPreview;
    this.readOnly = readOnly;
    this.boxes = new Map(); // change id -> checkbox
    this.items = new Map(); // change id -> li
    this.accept = h("button", { type: "button", class: "approve accept" }, "Accept all");
    this.reject = h("button", { type: "button", class: "ghost reject" }, "Reject");
    this.preview = h(
      "button",
      { type: "button", class: "ghost preview", title: "Show the draft on the diagram, or the current version" },
      "Show draft",
    );
    this.outcome = h("div", { class: "review-outcome", role: "status" });
    this.actions = h(
      "div",
      { class: "review-actions" },
      this.preview,
      h("span", { class: "spacer" }),
      readOnly ? null : [this.reject, this.accept],
    );
    const count = proposal.changes.length;
    this.el = h(
      "div",
      {
        class: "review-card",
        role: "group",
        "aria-label": "Proposed changes",
        "data-request-id": proposal.request_id,
        "data-base-version": String(proposal.base_version ?? ""),
      },
      h(
        "div",
        { class: "review-title" },
        `Proposed changes · ${count} change${count === 1 ? "" : "s"}`,
        proposal.base_version ? h("span", { class: "chip" }, `on version ${proposal.base_version}`) : null,
      ),
      proposal.question ? h("div", { class: "review-question" }, proposal.question) : null,
      h(
        "ol",
        { class: "review-changes", "aria-label": "Changes" },
        proposal.changes.map((change) => this.changeItem(change)),
      ),
      h(
        "details",
        { class: "review-diff-block", open: true },
        h("summary", {}, "What changes in the document"),
        h("pre", { class: "code diff review-diff" }, renderUnifiedDiff(proposal.diff)),
      ),
      this.actions,
      this.outcome,
    );
    if (readOnly) this.outcome.textContent = "Waiting for an editor to accept or reject these changes.";
    this.previewing = false;
    this.preview.addEventListener("click", () => this.setPreview(!this.previewing));
    this.accept.addEventListener("click", () => this.answer(this.checkedIds()));
    this.reject.addEventListener("click", () => this.answer([]));
    this.updateAccept();
  }

  changeItem(change) {
    const box = h("input", {
      type: "checkbox",
      class: "change-check",
      checked: true,
      disabled: this.readOnly,
      "aria-label": `Apply: ${change.summary}`,
      "data-change-id": change.id,
    });
    box.addEventListener("change", () => {
      this.items.get(change.id).classList.toggle("left-out", !box.checked);
      this.updateAccept();
    });
    this.boxes.set(change.id, box);
    const item = h(
      "li",
      { class: "review-change", "data-change-id": change.id, "data-tool": change.tool },
      h(
        "label",
        { class: "change-head" },
        box,
        h("span", { class: "change-summary-text" }, change.summary),
        change.tool ? h("span", { class: "chip change-tool" }, change.tool) : null,
      ),
      change.impact.length
        ? h(
            "ul",
            { class: "change-impact", "aria-label": "Impact" },
            change.impact.map((line) => h("li", { class: "impact" }, `⚠ ${line}`)),
          )
        : null,
      h("div", { class: "change-note", hidden: true }),
    );
    this.items.set(change.id, item);
    return item;
  }

  checkedIds() {
    return this.proposal.changes.map((c) => c.id).filter((id) => this.boxes.get(id).checked);
  }

  updateAccept() {
    const checked = this.checkedIds().length;
    const total = this.proposal.changes.length;
    this.accept.textContent = checked === total ? "Accept all" : `Accept ${checked} of ${total}`;
    this.accept.disabled = checked === 0 || this.el.dataset.answer !== undefined;
    this.accept.title = checked === 0 ? "Nothing is ticked: Reject leaves the workflow as it is." : "";
  }

  setPreview(on) {
    this.previewing = on;
    this.preview.textContent = on ? "Hide draft" : "Show draft";
    if (this.onPreview) this.onPreview(on);
  }

  setDisabled(disabled) {
    for (const box of this.boxes.values()) box.disabled = disabled || this.readOnly;
    this.reject.disabled = disabled;
    if (disabled) this.accept.disabled = true;
    else this.updateAccept();
  }

  answer(accepted) {
    if (this.readOnly) return;
    this.setDisabled(true);
    for (const item of this.items.values()) item.classList.remove("needed");
    for (const note of this.el.querySelectorAll(".change-note")) note.hidden = true;
    if (!this.onAnswer(this.proposal.request_id, accepted)) {
      this.setDisabled(false);
      this.outcome.textContent = "Not connected: try again in a moment.";
      return;
    }
    this.el.dataset.answer = "sent";
    this.accepted = accepted;
    const total = this.proposal.changes.length;
    this.outcome.textContent = !accepted.length
      ? "Rejecting: nothing will change…"
      : accepted.length === total
        ? "Accepting all changes…"
        : `Accepting ${accepted.length} of ${total} changes…`;
  }

  // The server applied (or rejected) the answer: the card is closed.
  settled(version) {
    if (this.previewing) this.setPreview(false);
    const accepted = this.accepted || [];
    const state = accepted.length ? "accepted" : "rejected";
    this.el.classList.add(state);
    this.el.dataset.answer = state;
    this.actions.remove();
    for (const [id, item] of this.items) {
      item.classList.toggle("applied", accepted.includes(id));
      item.classList.toggle("left-out", !accepted.includes(id));
    }
    this.setDisabled(true);
    this.el.querySelector(".review-diff-block").open = false; // answered: the diff folds away
    const total = this.proposal.changes.length;
    if (!accepted.length) this.outcome.textContent = "Rejected: the workflow is unchanged.";
    else {
      const which = accepted.length === total ? "All changes" : `${accepted.length} of ${total} changes`;
      this.outcome.textContent = `${which} applied${version ? ` as version ${version}` : ""}.`;
    }
  }

  // An error answering: the card stays answerable only for dependent_change, where
  // `changes` lists the accepted changes that cannot apply and `needs` (when the server
  // sends it) the left-out ones they need.
  failed(code, message, changes = [], needs = []) {
    const known = REVIEW_ERRORS[code];
    const open = known ? known.open : false;
    this.el.dataset.error = code || "error";
    if (open) {
      delete this.el.dataset.answer;
      this.setDisabled(false);
      const mark = (ids, text) => {
        for (const id of ids || []) {
          const item = this.items.get(String(id));
          if (!item) continue;
          item.classList.add("needed");
          const note = item.querySelector(".change-note");
          note.hidden = false;
          note.textContent = text;
        }
      };
      mark(changes, "Cannot apply without a change that was left out.");
      mark(needs, "Needed by a change you accepted.");
    } else {
      if (this.previewing) this.setPreview(false);
      this.el.classList.add("closed");
      this.el.dataset.answer = "closed";
      this.actions.remove();
      this.setDisabled(true);
    }
    const detail = message && (!known || code === "dependent_change") ? ` (${message})` : "";
    this.outcome.textContent = `${known ? known.text : message || "The answer failed."}${detail}`;
    this.outcome.classList.add("problem");
    this.outcome.scrollIntoView({ block: "nearest" });
    return open;
  }

  // Answered from another page or device (seen on reload or in the session detail).
  answeredElsewhere() {
    if (this.el.dataset.answer && this.el.dataset.answer !== "sent") return;
    if (this.previewing) this.setPreview(false);
    this.el.classList.add("closed");
    this.el.dataset.answer = "elsewhere";
    this.actions.remove();
    this.setDisabled(true);
    this.outcome.textContent = "Answered elsewhere (another page or device).";
  }
}
