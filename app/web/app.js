// Planwright web page: wires the views to the REST API and the two WebSockets
// (chat: /v1/sessions/{id}/ws; live view: /v1/workflows/{id}/watch?since_version=).
//
// Routes (the hash): #session=<id> (a workflow session), #project=<id>&session=<id>
// (a project session: plan mode), #project=<id> and #workflow=<id> (open a new
// session there), nothing (the picker).

import { api, ApiError, download, getToken, setToken, socketUrl } from "./js/api.js";
import { banner, hideBanner, reportError } from "./js/banner.js";
import { ChatView } from "./js/chat.js";
import { $ } from "./js/dom.js";
import { HistoryView } from "./js/history.js";
import { pickerLayout, sessionLayout, showProjectLink } from "./js/layout.js";
import { Picker } from "./js/picker.js";
import { reviewFrom } from "./js/plan.js";
import { ProjectView } from "./js/project.js";
import { proposalFrom, REVIEW_ERRORS } from "./js/review.js";
import { canFix, fixErrors, RunPanel } from "./js/runs.js";
import { ReconnectingSocket } from "./js/socket.js";
import { WorkflowPane } from "./js/workflow-pane.js";

// The turn a Fix button sends (api.md): errors mode on the failed step.
const FIX_CONTENT = "Fix the failed test run";
const REVIEW_OPTION_KEY = "planwright.review";

const state = {
  session: null, // {id, workflow_id, project_id, read_only, review}
  kind: null, // "workflow" | "project" (a project session: no workflow, plan turns)
  turnId: null,
  turnRunning: false,
  awaitingStart: false,
  pendingConfirm: null, // a confirmation, a plan review (.plan) or a proposal (.proposal)
  reviewCard: null, // the ReviewCard of the open (or being answered) proposal
  runPending: false, // a run frame was sent and its run.completed has not come
  draftRun: null, // {turnId, run}: a review-mode turn's test_run of its draft
  messageCount: 0,
  lastTurnContent: null, // the last turn's words, for a reply's "Plan it" offer
  chatSocket: null,
  watchSocket: null,
  socketStates: { chat: "idle", watch: "idle" },
  wasLost: false,
  nextBanner: null,
};

const el = {
  title: $("#workflow-title"),
  connection: $("#connection"),
  navWorkflows: $("#nav-workflows"),
  tokenForm: $("#token-form"),
  tokenInput: $("#token-input"),
  composer: $("#composer"),
  input: $("#chat-input"),
  send: $("#send-button"),
  cancel: $("#cancel-button"),
  hint: $("#composer-hint"),
  contextChip: $("#context-chip"),
  projectLink: $("#project-link"),
  planMode: $("#plan-mode"),
  reviewToggle: $("#review-toggle"),
  reviewMode: $("#review-mode"),
  reviewOption: $("#review-option"),
  projectPane: $("#project-pane"),
};

// --- feedback -------------------------------------------------------------------------

function setConnection(which, socketState) {
  state.socketStates[which] = socketState;
  const states = Object.values(state.socketStates);
  let label = "";
  let overall = "idle";
  if (states.includes("refused")) {
    overall = "refused";
    label = "Not allowed";
  } else if (states.includes("lost")) {
    overall = "lost";
    label = "Reconnecting…";
  } else if (states.includes("connecting")) {
    overall = "connecting";
    label = "Connecting…";
  } else if (states.every((s) => s === "open")) {
    overall = "open";
    label = "Live";
  }
  el.connection.dataset.state = overall;
  el.connection.textContent = label;
  if (overall === "lost" && !state.wasLost) {
    state.wasLost = true;
    banner("Connection lost. Reconnecting… (changes made meanwhile will be caught up)", "warn");
  } else if (overall === "open" && state.wasLost) {
    state.wasLost = false;
    banner("Reconnected; caught up with the latest version.", "ok", { autoHideMs: 4000 });
  } else if (overall === "refused") {
    banner(
      "The server refused the connection: check the token (top right), or open the workflow again.",
      "auth",
    );
  }
  updateComposer();
}

// --- the workflow pane ---------------------------------------------------------------

const pane = new WorkflowPane({
  title: el.title,
  versionLabel: $("#version-label"),
  changeSummary: $("#change-summary"),
  diagram: $("#diagram"),
  yamlView: $("#yaml-view"),
  codeView: $("#code-view"),
  stepSelect: $("#step-select"),
  stepMeta: $("#step-meta"),
  contextChip: el.contextChip,
  contextStep: $("#context-step"),
  contextClear: $("#context-clear"),
  draftBar: $("#draft-bar"),
  runBar: $("#run-bar"),
  runLegend: $("#run-legend"),
  stepRun: $("#step-run"),
});

// A new version of the session's workflow: shown, and the history and (for a turn run
// elsewhere) the conversation follow.
function applyWorkflow(frame, { initial = false } = {}) {
  if (!pane.apply(frame, { initial }) || initial) return;
  historyView.refresh();
  if (frame.turn_id && frame.turn_id !== state.turnId) scheduleConversationRefresh();
}

// --- the chat ---------------------------------------------------------------------

// Answer a confirmation or a plan review; false when not connected (nothing sent).
function sendConfirm(requestId, approved, feedback) {
  const frame = { type: "confirm", request_id: requestId, approved };
  if (feedback) frame.feedback = feedback;
  if (!state.chatSocket || !state.chatSocket.send(frame)) return false;
  if (state.pendingConfirm && state.pendingConfirm.plan) projectView.answered(approved, feedback);
  state.pendingConfirm = null;
  state.turnRunning = true;
  updateComposer();
  return true;
}

// Answer a proposal with the ids of the changes to apply ([]: reject); false when not
// connected (nothing sent; the card says so).
function sendReview(requestId, accepted) {
  const frame = { type: "review", request_id: requestId, accepted };
  if (!state.chatSocket || !state.chatSocket.send(frame)) return false;
  state.pendingConfirm = null;
  state.turnRunning = true;
  updateComposer();
  return true;
}

const chat = new ChatView($("#messages"), { onConfirm: sendConfirm });

// A review-mode turn's proposal: the card, and the draft on the diagram.
function showProposal(proposal) {
  state.turnId = proposal.turn_id || state.turnId;
  state.draftRun = null; // a run of this turn ran the proposed draft, not a version
  state.pendingConfirm = proposal;
  state.turnRunning = false;
  state.awaitingStart = false;
  const card = chat.review(proposal, {
    readOnly: state.session.read_only,
    onAnswer: sendReview,
    onPreview: (on) => (on ? pane.previewDraft(proposal) : pane.clearDraft()),
  });
  state.reviewCard = card;
  pane.onDraftClosed = () => {
    if (card.previewing) card.setPreview(false);
  };
  card.setPreview(true);
  updateComposer();
}

// The answer to a proposal failed: the card says why; dependent_change keeps it open.
function reviewFailed(frame) {
  const card = state.reviewCard;
  const details = frame.details || frame;
  const open = card.failed(frame.code, frame.message, details.changes || [], details.needs || []);
  if (open) {
    state.pendingConfirm = card.proposal;
    state.turnRunning = false;
    state.awaitingStart = false;
    updateComposer();
    return;
  }
  state.reviewCard = null;
  state.pendingConfirm = null;
  endTurn(frame);
}

const projectView = new ProjectView(
  {
    pane: el.projectPane,
    name: $("#project-name"),
    status: $("#plan-status"),
    list: $("#project-workflows"),
  },
  { onError: reportError },
);

projectView.follow({
  isIdle: () => !state.turnRunning && !state.awaitingStart,
  onPolled: (record, before) => {
    const pending = state.pendingConfirm;
    if (pending && pending.plan) {
      const same = !record || !record.request_id || record.request_id === pending.request_id;
      if (record && record.status === "proposed" && same) return;
      chat.planAnsweredElsewhere(pending.request_id);
      state.pendingConfirm = null;
      updateComposer();
    } else if (!record || record.status === before) return;
    refreshConversation(); // its messages, and a revision proposed in this session
  },
});

function showPlan(review) {
  state.turnId = review.turn_id || state.turnId;
  state.pendingConfirm = review; // .plan set: a plan review
  state.turnRunning = false;
  state.awaitingStart = false;
  chat.plan(review, { readOnly: state.session.read_only });
  projectView.proposed(review);
  updateComposer();
}

function updateComposer() {
  const connected = state.chatSocket && state.chatSocket.isOpen;
  const busy = state.turnRunning || state.awaitingStart;
  let hint = "";
  if (state.pendingConfirm && state.pendingConfirm.plan) {
    hint = state.session.read_only
      ? "A plan is waiting for an editor's review."
      : "Review the plan above first: approve, adjust or reject it.";
  } else if (state.pendingConfirm && state.pendingConfirm.proposal) {
    hint = "Review the proposed changes above first: accept them, some of them, or reject them.";
  } else if (state.pendingConfirm) hint = "Answer the confirmation above first.";
  else if (busy) hint = "Working…";
  else if (state.session && !connected) hint = "Not connected: waiting to reconnect…";
  else if (state.session && state.session.read_only) hint = "Read-only: questions only.";
  el.hint.textContent = hint;
  const waiting = state.pendingConfirm && state.pendingConfirm.proposal ? "review" : "confirm";
  document.body.dataset.turn = state.pendingConfirm ? waiting : busy ? "running" : "idle";
  el.send.disabled = Boolean(busy || state.pendingConfirm || !connected);
  el.cancel.hidden = !state.turnRunning;
  const proposal = openProposal();
  runPanel.setDraft(proposal ? proposal.base_version : null);
  runPanel.updateFix();
}

// The proposal waiting for an answer here (null: none, or its answer is on its way).
function openProposal() {
  const pending = state.pendingConfirm;
  return pending && pending.proposal ? pending : null;
}

// Whether a turn may be sent now (null: this session cannot edit at all).
function turnAllowed() {
  if (!state.session || state.session.read_only || state.kind !== "workflow") return null;
  const connected = Boolean(state.chatSocket && state.chatSocket.isOpen);
  // A turn while a run goes would be refused (busy): one thing at a time per workflow.
  const free = !state.turnRunning && !state.awaitingStart && !state.pendingConfirm && !runPanel.running;
  return connected && free;
}

// Send a turn frame (false: not connected, nothing sent); review mode as the toggle says.
function sendTurnFrame(frame) {
  if (frame.mode !== "plan" && state.kind === "workflow" && !state.session.read_only) {
    frame.review = el.reviewMode.checked;
  }
  if (!state.chatSocket || !state.chatSocket.send(frame)) return false;
  state.lastTurnContent = frame.content;
  chat.addUser(frame.content);
  state.messageCount += 1;
  state.awaitingStart = true;
  updateComposer();
  return true;
}

function sendTurn() {
  const content = el.input.value.trim();
  if (!content || el.send.disabled) return;
  const frame = { type: "turn", content, context: pane.pageContext() };
  if (el.planMode.checked && !state.session.read_only) frame.mode = "plan";
  if (!sendTurnFrame(frame)) {
    banner("Not connected, so the message was not sent; it is still in the box.", "warn");
    return;
  }
  el.input.value = "";
}

// --- test runs ------------------------------------------------------------------------

function stepName(key) {
  const model = pane.model;
  const job = model && model.jobs.find((j) => j.key === key);
  if (job) return job.name;
  const trigger = model && model.triggers.find((t) => t.key === key);
  return trigger ? `${trigger.type} trigger` : key;
}

// Run the workflow on the editors' sample: over the chat socket (progress streams),
// else over REST (the result comes at the end). While a proposal is open the socket's
// run tests its draft (the server's choice for a run frame without a version): the
// diagram shows the draft, which the run colours; REST would run the current version,
// so without the socket nothing is run then.
function startRun(request) {
  if (!state.session || !pane.workflow) return false;
  const proposal = openProposal();
  if (proposal) showDraftOf(proposal);
  if (state.chatSocket && state.chatSocket.send({ type: "run", ...request })) {
    state.runPending = true;
    runPanel.waiting();
    pane.showLive(new Map());
    return true;
  }
  if (proposal) return false;
  runOverRest(request);
  return true;
}

// The diagram shows the open proposal's draft (its card's toggle follows).
function showDraftOf(proposal) {
  const card = state.reviewCard;
  if (card && card.proposal.request_id === proposal.request_id) {
    if (!card.previewing) card.setPreview(true);
  } else if (!pane.draftShown()) pane.previewDraft(proposal);
}

async function runOverRest(request) {
  runPanel.waiting();
  pane.showLive(new Map());
  try {
    const run = await api("POST", `/v1/workflows/${encodeURIComponent(pane.workflow.id)}/runs`, request);
    runFinished(run);
  } catch (error) {
    runPanel.failed(`The run could not be done: ${error.message}`);
    pane.showLive(null);
    if (error instanceof ApiError && (error.isAuth || error.isForbidden)) reportError(error);
  }
}

function runFinished(run) {
  state.runPending = false;
  if (!pane.workflow || (run.workflow_id && run.workflow_id !== pane.workflow.id)) return;
  // A run of the open proposal's draft is drawn on the draft.
  const proposal = openProposal();
  if (run.draft && proposal && run.version === proposal.base_version) showDraftOf(proposal);
  runPanel.completed(run);
  pane.showRun(run);
  runPanel.updateFix();
}

// A failed run straight to errors mode: the failed step, its error and its input.
function sendFix(run) {
  if (!turnAllowed()) return;
  const frame = { type: "turn", content: FIX_CONTENT, context: { page: "workflow" }, errors: fixErrors(run) };
  if (!sendTurnFrame(frame)) banner("Not connected, so the fix was not asked for; try again.", "warn");
}

// The last run of the workflow, shown after a reload (none yet: nothing shown).
async function loadLastRun(workflowId) {
  let answer;
  try {
    answer = await api("GET", `/v1/workflows/${encodeURIComponent(workflowId)}/runs`);
  } catch {
    return; // no runs to show; the Run panel still works
  }
  const run = answer && Array.isArray(answer.runs) ? answer.runs[0] : null;
  if (!run || !pane.workflow || pane.workflow.id !== workflowId || pane.run || runPanel.running) return;
  runPanel.show(run);
  pane.showRun(run);
}

const runPanel = new RunPanel(
  {
    form: $("#run-form"),
    input: $("#run-input"),
    responses: $("#run-responses"),
    button: $("#run-button"),
    problem: $("#run-problem"),
    progress: $("#run-progress"),
    result: $("#run-result"),
    target: $("#run-target"),
  },
  {
    onRun: startRun,
    onFix: sendFix,
    nameOf: stepName,
    jobKeys: () => (pane.model ? pane.model.jobs.map((job) => job.key) : []),
    fixAllowed: turnAllowed,
  },
);
pane.fixButton = (run) => (canFix(run) && turnAllowed() !== null ? runPanel.fixButton(run) : null);

function endTurn(frame) {
  chat.endTurn(frame);
  state.turnRunning = false;
  state.awaitingStart = false;
  state.turnId = null;
  updateComposer();
}

function onChatFrame(frame) {
  switch (frame.type) {
    case "turn.started":
      state.turnId = frame.turn_id;
      state.turnRunning = true;
      state.awaitingStart = false;
      chat.startTurn(frame.turn_id);
      updateComposer();
      break;
    case "queued":
      chat.queued(frame);
      break;
    case "route":
      chat.route(frame);
      break;
    case "status":
      chat.status(frame);
      break;
    case "workflow":
      if (state.kind === "project") projectView.workflowFrame(frame);
      else {
        if (state.reviewCard && state.reviewCard.el.dataset.answer === "sent") pane.clearDraft();
        applyWorkflow(frame);
      }
      break;
    case "proposal": {
      const proposal = proposalFrom(frame);
      if (proposal) showProposal(proposal);
      break;
    }
    case "run.progress":
      runPanel.progress(frame);
      pane.showLive(runPanel.liveStates());
      break;
    case "run.completed":
      runFinished(frame.run);
      if (frame.turn_id && frame.run.draft) state.draftRun = { turnId: frame.turn_id, run: frame.run };
      break;
    case "plan.proposed":
      showPlan(reviewFrom(frame));
      break;
    case "plan.progress":
      chat.progress(frame);
      projectView.progress(frame);
      break;
    case "confirm.required":
      state.turnId = frame.turn_id;
      state.pendingConfirm = frame;
      state.turnRunning = false;
      state.awaitingStart = false;
      chat.confirm(frame, { readOnly: state.session.read_only });
      updateComposer();
      break;
    case "message.delta":
      chat.delta(frame);
      break;
    case "message":
      chat.message(frame);
      state.messageCount += 1;
      if (frame.offer === "plan" && !state.session.read_only && state.lastTurnContent) {
        const content = state.lastTurnContent;
        chat.offerPlan(frame, () => {
          const sent = sendTurnFrame({ type: "turn", content, context: pane.pageContext(), mode: "plan" });
          if (!sent) banner("Not connected, so the plan was not asked for; try again.", "warn");
          return sent;
        });
      }
      break;
    case "turn.completed":
      // A review-mode turn that changed nothing ends without a proposal: the draft its
      // test_run ran is the version itself, so the diagram shows that run.
      if (state.draftRun && state.draftRun.turnId === frame.turn_id && pane.run === state.draftRun.run) {
        pane.showRun(state.draftRun.run, { ofVersion: true });
      }
      state.draftRun = null;
      if (state.reviewCard && state.reviewCard.el.dataset.answer === "sent") {
        state.reviewCard.settled(frame.version);
        state.reviewCard = null;
      }
      endTurn(frame);
      if (state.kind === "project") projectView.load(state.session.project_id);
      else historyView.refresh();
      break;
    case "error":
      if (REVIEW_ERRORS[frame.code] && state.reviewCard) {
        reviewFailed(frame);
        break;
      }
      // A run's own failure (the runtime missing, a bad sample): the Run panel says it.
      if (state.runPending && (!(state.turnRunning || state.awaitingStart) || frame.code === "openfn_runtime_unavailable")) {
        state.runPending = false;
        runPanel.failed(frame.message || "The run could not be done.");
        pane.showLive(null);
        break;
      }
      chat.error(frame);
      if (frame.code === "proposal_pending") scheduleConversationRefresh(0);
      if (frame.code === "no_pending_confirmation" || frame.code === "stale_confirmation") {
        state.pendingConfirm = null;
      }
      if (!frame.turn_id || frame.turn_id === state.turnId || frame.code === "busy") {
        if (state.turnRunning || state.awaitingStart) endTurn(frame);
      }
      updateComposer();
      break;
    default:
      break;
  }
}

// Messages from turns run elsewhere (another device on this session) are not
// streamed here: fetch the conversation once they are likely saved.
let refreshTimer = null;
function scheduleConversationRefresh(delay = 1200) {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refreshConversation, delay);
}

async function refreshConversation() {
  if (!state.session || state.turnRunning || state.awaitingStart) return;
  const proposal = state.pendingConfirm && state.pendingConfirm.proposal ? state.pendingConfirm : null;
  if (state.pendingConfirm && !proposal) return;
  try {
    const detail = await api("GET", `/v1/sessions/${encodeURIComponent(state.session.id)}`);
    if (proposal) {
      // While a proposal waits, only its being answered elsewhere changes anything here.
      const pending = detail.pending_confirmation;
      if (pending && pending.request_id === proposal.request_id) return;
      if (state.reviewCard) state.reviewCard.answeredElsewhere();
      pane.clearDraft();
      state.reviewCard = null;
      state.pendingConfirm = null;
      updateComposer();
    }
    if (detail.messages.length !== state.messageCount) {
      chat.renderHistory(detail.messages, { project: state.kind === "project" });
      state.messageCount = detail.messages.length;
    }
    showPending(detail.pending_confirmation);
    if (detail.workflow) {
      applyWorkflow({ ...detail.workflow, workflow_id: detail.workflow.id, changes: [] });
    }
    if (state.kind === "project") await projectView.load(state.session.project_id);
  } catch (error) {
    reportError(error);
  }
}

// A pause the session's detail reports: a plan waiting for review or a confirmation
// (asked before a reload, while the connection was down, or on another device).
function showPending(pending) {
  if (!pending || state.pendingConfirm) return;
  chat.startTurn(pending.turn_id || null);
  const proposal = proposalFrom(pending);
  if (proposal) {
    showProposal(proposal);
    return;
  }
  const review = reviewFrom(pending);
  if (review) {
    showPlan(review);
    return;
  }
  state.pendingConfirm = pending;
  chat.confirm(pending, { readOnly: state.session.read_only });
  updateComposer();
}

// After a reconnect: the turn that was running (if any) kept going on the server.
let catchUpPolls = 0;
async function catchUp() {
  const interrupted = state.turnRunning || state.awaitingStart;
  if (interrupted) {
    endTurn(null);
    chat.note("The connection dropped during this turn; its reply will appear here once saved.");
  }
  await refreshConversation();
  historyView.refresh();
  if (interrupted) {
    catchUpPolls = 20;
    pollConversation();
  }
}

function pollConversation() {
  if (catchUpPolls <= 0) return;
  catchUpPolls -= 1;
  setTimeout(async () => {
    const before = state.messageCount;
    await refreshConversation();
    if (state.messageCount === before) pollConversation();
  }, 1500);
}

// --- sessions ----------------------------------------------------------------------

const historyView = new HistoryView(
  {
    list: $("#versions"),
    detail: $("#version-detail"),
    title: $("#diff-title"),
    diff: $("#diff-view"),
    revert: $("#revert-button"),
  },
  {
    onError: reportError,
    onReverted: (workflow, version) => {
      applyWorkflow({ ...workflow, workflow_id: workflow.id, changes: [] });
      banner(`Reverted to version ${version} (saved as version ${workflow.version}).`, "ok", {
        autoHideMs: 4000,
      });
    },
  },
);

function stopSockets() {
  for (const key of ["chatSocket", "watchSocket"]) {
    if (state[key]) state[key].stop();
    state[key] = null;
  }
  state.socketStates = { chat: "idle", watch: "idle" };
  state.wasLost = false;
}

function hashParams() {
  return new URLSearchParams(window.location.hash.replace(/^#/, ""));
}

// A hash change that replaces the current entry (Back skips the #project=/#workflow= step).
function replaceHash(hash) {
  window.location.replace(`${window.location.pathname}${window.location.search}#${hash}`);
}

// The picker's "Review changes before they apply" (on unless turned off; remembered).
function reviewOption() {
  return el.reviewOption.checked;
}

function loadReviewOption() {
  try {
    el.reviewOption.checked = localStorage.getItem(REVIEW_OPTION_KEY) !== "off";
  } catch {
    el.reviewOption.checked = true;
  }
}

async function openWorkflow(workflowId, readOnly, problems = [], { replace = false } = {}) {
  try {
    const body = { workflow_id: workflowId, read_only: readOnly };
    if (!readOnly) body.review = reviewOption();
    const session = await api("POST", "/v1/sessions", body);
    if (problems.length) state.nextBanner = `Imported with problems to fix: ${problems.join("; ")}`;
    const hash = `session=${encodeURIComponent(session.id)}`;
    if (replace) replaceHash(hash);
    else window.location.hash = hash;
  } catch (error) {
    reportError(error);
    if (replace) replaceHash("");
  }
}

// A new project session (its turns plan the project), shown at #project=<id>&session=<id>.
async function openProject(projectId, { replace = false } = {}) {
  try {
    const session = await api("POST", "/v1/sessions", { project_id: projectId, read_only: false });
    const hash = `project=${encodeURIComponent(projectId)}&session=${encodeURIComponent(session.id)}`;
    if (replace) replaceHash(hash);
    else window.location.hash = hash;
  } catch (error) {
    reportError(error);
    if (replace) replaceHash("");
  }
}

async function showPicker() {
  stopSockets();
  state.session = null;
  state.kind = null;
  pane.open(null);
  projectView.reset();
  pickerLayout();
  await picker.show();
}

function startChatSocket(sessionId) {
  state.chatSocket = new ReconnectingSocket(
    () => socketUrl(`/v1/sessions/${encodeURIComponent(sessionId)}/ws`),
    {
      onFrame: onChatFrame,
      onState: (socketState) => setConnection("chat", socketState),
      onOpen: (reconnected) => {
        if (reconnected) catchUp();
      },
    },
  ).start();
}

function startWatchSocket(workflowId) {
  state.watchSocket = new ReconnectingSocket(
    () =>
      socketUrl(`/v1/workflows/${encodeURIComponent(workflowId)}/watch`, {
        since_version: pane.workflow ? pane.workflow.version : undefined,
      }),
    {
      onFrame: (frame) => {
        if (frame.type === "workflow") applyWorkflow(frame);
      },
      onState: (socketState) => setConnection("watch", socketState),
    },
  ).start();
}

async function openSession(sessionId) {
  stopSockets();
  let detail;
  try {
    detail = await api("GET", `/v1/sessions/${encodeURIComponent(sessionId)}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      banner("That session does not exist here (or belongs to someone else). Pick a workflow.", "warn");
      window.location.hash = "";
      return;
    }
    reportError(error);
    await showPicker();
    return;
  }
  hideBanner();
  if (state.nextBanner) banner(state.nextBanner, "warn");
  state.nextBanner = null;
  el.tokenForm.classList.remove("attention");
  const readOnly = detail.read_only;
  const projectId = detail.project_id || (detail.workflow && detail.workflow.project_id) || null;
  const kind = detail.workflow ? "workflow" : "project";
  state.kind = kind;
  state.session = {
    id: detail.id,
    workflow_id: detail.workflow_id,
    project_id: projectId,
    read_only: readOnly,
    review: detail.review === true,
  };
  pane.open(detail.workflow);
  runPanel.reset();
  state.turnId = null;
  state.turnRunning = false;
  state.awaitingStart = false;
  state.pendingConfirm = null;
  state.reviewCard = null;
  state.runPending = false;
  sessionLayout(kind, readOnly);
  el.reviewToggle.hidden = kind !== "workflow" || readOnly;
  el.reviewMode.checked = state.session.review;
  chat.subject = kind;
  projectView.reset();

  chat.renderHistory(detail.messages, { project: kind === "project" });
  state.messageCount = detail.messages.length;
  if (kind === "workflow") {
    applyWorkflow({ ...detail.workflow, workflow_id: detail.workflow.id, changes: [] }, { initial: true });
    showProjectLink(projectId, () => state.session && state.session.project_id === projectId);
    historyView.open(detail.workflow_id, { readOnly });
    historyView.refresh();
    loadLastRun(detail.workflow_id);
  } else {
    el.projectLink.hidden = true;
    const project = await projectView.load(projectId);
    el.title.textContent = project ? project.name : "Project";
    document.title = project ? `${project.name} · Planwright` : "Planwright";
    document.body.dataset.version = "";
  }
  showPending(detail.pending_confirmation);

  state.socketStates = kind === "project" ? { chat: "idle" } : { chat: "idle", watch: "idle" };
  startChatSocket(detail.id);
  if (kind === "workflow") startWatchSocket(detail.workflow_id);
  updateComposer();
}

async function route() {
  const params = hashParams();
  if (params.get("session")) await openSession(params.get("session"));
  else if (params.get("project")) await openProject(params.get("project"), { replace: true });
  else if (params.get("workflow")) await openWorkflow(params.get("workflow"), false, [], { replace: true });
  else await showPicker();
}

const picker = new Picker($("#picker-view"), {
  onOpen: openWorkflow,
  onOpenProject: (projectId) => openProject(projectId),
  onError: reportError,
});

// --- wiring -------------------------------------------------------------------------

el.tokenInput.value = getToken();
loadReviewOption();
el.reviewOption.addEventListener("change", () => {
  try {
    localStorage.setItem(REVIEW_OPTION_KEY, el.reviewOption.checked ? "on" : "off");
  } catch {
    /* storage disabled: the choice lasts for this page */
  }
});
el.tokenForm.addEventListener("submit", (event) => {
  event.preventDefault();
  setToken(el.tokenInput.value.trim());
  el.tokenForm.classList.remove("attention");
  banner("Token saved in this browser.", "ok", { autoHideMs: 2500 });
  route();
});
$("#banner-close").addEventListener("click", hideBanner);
el.navWorkflows.addEventListener("click", () => {
  window.location.hash = "";
});
el.composer.addEventListener("submit", (event) => {
  event.preventDefault();
  sendTurn();
});
el.input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    sendTurn();
  }
});
el.cancel.addEventListener("click", () => {
  if (state.chatSocket) state.chatSocket.send({ type: "cancel" });
});
$("#export-button").addEventListener("click", () => pane.exportYaml().catch(reportError));
$("#project-export").addEventListener("click", async () => {
  const projectId = state.session && state.session.project_id;
  if (!projectId) return;
  const name = (projectView.name || "project").replace(/[^\w.-]+/g, "-");
  try {
    await download(`/v1/projects/${encodeURIComponent(projectId)}/export?format=lightning`, `${name}.yaml`);
  } catch (error) {
    reportError(error);
  }
});
window.addEventListener("hashchange", route);

// Exposed for debugging in the browser console (and for tests to read state).
window.planwright = { state, pane, projectView, runPanel };

route();
