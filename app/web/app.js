// Planwright web page: wires the views to the REST API and the two WebSockets
// (chat: /v1/sessions/{id}/ws; live view: /v1/workflows/{id}/watch?since_version=).

import { api, ApiError, download, getToken, setToken, socketUrl } from "./js/api.js";
import { ChatView } from "./js/chat.js";
import { renderDiagram } from "./js/diagram.js";
import { $, clear, h } from "./js/dom.js";
import { highlightJs, highlightYaml } from "./js/highlight.js";
import { HistoryView } from "./js/history.js";
import {
  adaptorLabel,
  frameChanges,
  hasCode,
  parseWorkflow,
  structuralChanges,
  summariseChanges,
} from "./js/model.js";
import { Picker } from "./js/picker.js";
import { ReconnectingSocket } from "./js/socket.js";

const NO_HIGHLIGHT = () => ({ jobs: new Set(), edges: new Set(), triggers: new Set() });

const state = {
  session: null, // {id, workflow_id, read_only}
  workflow: null, // {id, name, version, yaml}
  model: null,
  parseError: null,
  highlight: NO_HIGHLIGHT(),
  highlightTurn: null,
  changes: [],
  showChanges: false,
  selectedJob: null,
  tab: "diagram",
  turnId: null,
  turnRunning: false,
  awaitingStart: false,
  pendingConfirm: null,
  messageCount: 0,
  chatSocket: null,
  watchSocket: null,
  socketStates: { chat: "idle", watch: "idle" },
  wasLost: false,
  nextBanner: null,
};

const el = {
  title: $("#workflow-title"),
  badge: $("#mode-badge"),
  connection: $("#connection"),
  navWorkflows: $("#nav-workflows"),
  tokenForm: $("#token-form"),
  tokenInput: $("#token-input"),
  banner: $("#banner"),
  bannerText: $("#banner-text"),
  pickerView: $("#picker-view"),
  sessionView: $("#session-view"),
  readonlyNotice: $("#readonly-notice"),
  composer: $("#composer"),
  input: $("#chat-input"),
  send: $("#send-button"),
  cancel: $("#cancel-button"),
  hint: $("#composer-hint"),
  contextChip: $("#context-chip"),
  contextStep: $("#context-step"),
  diagram: $("#diagram"),
  changeSummary: $("#change-summary"),
  yamlView: $("#yaml-view"),
  codeView: $("#code-view"),
  stepSelect: $("#step-select"),
  stepMeta: $("#step-meta"),
  versionLabel: $("#version-label"),
};

// --- feedback -------------------------------------------------------------------------

let bannerTimer = null;

function banner(text, kind = "error", { autoHideMs } = {}) {
  clearTimeout(bannerTimer);
  el.banner.dataset.kind = kind;
  el.bannerText.textContent = text;
  el.banner.hidden = false;
  if (autoHideMs) bannerTimer = setTimeout(hideBanner, autoHideMs);
}

function hideBanner() {
  el.banner.hidden = true;
  delete el.banner.dataset.kind;
}

function reportError(error) {
  if (error instanceof ApiError && error.isAuth) {
    el.tokenForm.classList.add("attention");
    banner(
      getToken()
        ? "The server refused this token. Enter a valid token in the Token field (top right) and press Save."
        : "This server needs a token. Enter it in the Token field (top right) and press Save.",
      "auth",
    );
    el.tokenInput.focus();
    return;
  }
  if (error instanceof ApiError && error.isForbidden) {
    banner(`Not allowed: ${error.message}`, "auth");
    return;
  }
  banner(error.message || String(error), "error");
}

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

function renderTitle() {
  const name = (state.model && state.model.name) || (state.workflow && state.workflow.name) || "";
  el.title.textContent = name || "Untitled workflow";
  el.versionLabel.textContent = state.workflow ? `version ${state.workflow.version}` : "";
  document.body.dataset.version = state.workflow ? String(state.workflow.version) : "";
  document.title = name ? `${name} · Planwright` : "Planwright";
}

function renderChangeSummary() {
  clear(el.changeSummary);
  if (state.parseError) {
    el.changeSummary.append(
      h("span", { class: "problem" }, `The diagram cannot be drawn: ${state.parseError}`),
    );
    return;
  }
  if (!state.workflow || state.workflow.version <= 1 || !state.showChanges) return;
  el.changeSummary.append(
    h("span", { class: "chip" }, `v${state.workflow.version}`),
    ...summariseChanges(state.changes).map((note) =>
      h("span", { class: `change ${note.kind}` }, note.text),
    ),
  );
}

function renderDiagramPane() {
  if (!state.model) {
    clear(el.diagram);
    return;
  }
  renderDiagram(el.diagram, state.model, {
    highlight: state.highlight,
    selected: state.selectedJob,
    onSelect: (key) => selectJob(key, { show: true }),
  });
}

function renderYaml() {
  clear(el.yamlView).append(highlightYaml(state.workflow ? state.workflow.yaml : ""));
}

// The step on the Step code tab: the one picked, else the first.
function shownJob() {
  const jobs = state.model ? state.model.jobs : [];
  if (state.selectedJob && jobs.some((job) => job.key === state.selectedJob)) return state.selectedJob;
  return jobs.length ? jobs[0].key : null;
}

function renderCode() {
  const jobs = state.model ? state.model.jobs : [];
  if (state.selectedJob && !jobs.some((job) => job.key === state.selectedJob)) {
    state.selectedJob = null;
  }
  const shown = shownJob();
  clear(el.stepSelect);
  for (const job of jobs) {
    el.stepSelect.append(h("option", { value: job.key, selected: job.key === shown }, job.name));
  }
  el.stepSelect.disabled = jobs.length === 0;
  const job = jobs.find((j) => j.key === shown);
  clear(el.codeView);
  if (!job) {
    el.stepMeta.textContent = "";
    el.codeView.append(h("span", { class: "muted" }, "This workflow has no steps yet."));
    return;
  }
  el.stepMeta.textContent = `${job.key} · ${adaptorLabel(job.adaptor)}`;
  if (hasCode(job.body)) el.codeView.append(highlightJs(job.body));
  else el.codeView.append(h("span", { class: "muted" }, `${job.body || ""}\n\n(no code yet)`));
}

function renderWorkflow() {
  renderTitle();
  renderChangeSummary();
  renderDiagramPane();
  renderYaml();
  renderCode();
  renderContext();
}

function selectJob(key, { show } = {}) {
  state.selectedJob = key;
  renderDiagramPane();
  renderCode();
  if (show) setTab("code");
}

function setTab(tab) {
  state.tab = tab;
  for (const button of document.querySelectorAll(".tab")) {
    button.setAttribute("aria-selected", String(button.dataset.tab === tab));
  }
  for (const panel of document.querySelectorAll(".tab-panel")) {
    panel.hidden = panel.dataset.panel !== tab;
  }
  renderContext();
}

// The page context a turn carries: on the Step code tab, the selected step.
function pageContext() {
  const job = state.tab === "code" ? shownJob() : null;
  if (job) return { page: "job", job_key: job };
  return { page: "workflow" };
}

function renderContext() {
  const context = pageContext();
  el.contextChip.hidden = context.page !== "job";
  const job = state.model && state.model.jobs.find((j) => j.key === context.job_key);
  el.contextStep.textContent = job ? job.name : context.job_key || "";
}

// Apply a document version (from a frame, a REST answer or a reload).
function applyWorkflow(frame, { initial = false } = {}) {
  if (!state.workflow) return;
  if (frame.workflow_id && frame.workflow_id !== state.workflow.id) return;
  if (!initial && frame.version <= state.workflow.version) return; // already shown
  const before = state.model;
  state.workflow = { ...state.workflow, version: frame.version, yaml: frame.yaml };
  try {
    state.model = parseWorkflow(frame.yaml);
    state.parseError = null;
  } catch (error) {
    state.parseError = error.message;
  }
  if (initial) {
    state.highlight = NO_HIGHLIGHT();
    state.changes = [];
    state.highlightTurn = null;
    state.showChanges = false;
  } else {
    state.showChanges = true;
    const named = frameChanges(frame.changes);
    const listed = named.jobs.size + named.edges.size + named.triggers.size + named.removed.length;
    const marks = named.whole || !listed ? structuralChanges(before, state.model) : named;
    // Within one turn the highlights add up, so a turn's every change stays visible.
    const sameTurn = Boolean(frame.turn_id) && frame.turn_id === state.highlightTurn;
    if (sameTurn) {
      for (const section of ["jobs", "edges", "triggers"]) {
        for (const key of marks[section]) state.highlight[section].add(key);
      }
      state.changes = [...state.changes, ...(frame.changes || [])];
    } else {
      state.highlight = { jobs: marks.jobs, edges: marks.edges, triggers: marks.triggers };
      state.changes = [...(frame.changes || [])];
    }
    state.highlightTurn = frame.turn_id || null;
  }
  renderWorkflow();
  if (!initial) {
    historyView.refresh();
    if (frame.turn_id && frame.turn_id !== state.turnId) scheduleConversationRefresh();
  }
}

// --- the chat ---------------------------------------------------------------------

const chat = new ChatView($("#messages"), {
  onConfirm: (requestId, approved) => {
    if (!state.chatSocket || !state.chatSocket.send({ type: "confirm", request_id: requestId, approved })) {
      return false;
    }
    state.pendingConfirm = null;
    state.turnRunning = true;
    updateComposer();
    return true;
  },
});

function updateComposer() {
  const connected = state.chatSocket && state.chatSocket.isOpen;
  const busy = state.turnRunning || state.awaitingStart;
  let hint = "";
  if (state.pendingConfirm) hint = "Answer the confirmation above first.";
  else if (busy) hint = "Working…";
  else if (state.session && !connected) hint = "Not connected: waiting to reconnect…";
  else if (state.session && state.session.read_only) hint = "Read-only: questions only.";
  el.hint.textContent = hint;
  document.body.dataset.turn = state.pendingConfirm ? "confirm" : busy ? "running" : "idle";
  el.send.disabled = Boolean(busy || state.pendingConfirm || !connected);
  el.cancel.hidden = !state.turnRunning;
}

function sendTurn() {
  const content = el.input.value.trim();
  if (!content || el.send.disabled) return;
  if (!state.chatSocket || !state.chatSocket.send({ type: "turn", content, context: pageContext() })) {
    banner("Not connected, so the message was not sent; it is still in the box.", "warn");
    return;
  }
  chat.addUser(content);
  state.messageCount += 1;
  el.input.value = "";
  state.awaitingStart = true;
  updateComposer();
}

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
    case "route":
      chat.route(frame);
      break;
    case "status":
      chat.status(frame);
      break;
    case "workflow":
      applyWorkflow(frame);
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
      break;
    case "turn.completed":
      endTurn(frame);
      historyView.refresh();
      break;
    case "error":
      chat.error(frame);
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
  if (!state.session || state.turnRunning || state.awaitingStart || state.pendingConfirm) return;
  try {
    const detail = await api("GET", `/v1/sessions/${encodeURIComponent(state.session.id)}`);
    if (detail.messages.length !== state.messageCount) {
      chat.renderHistory(detail.messages);
      state.messageCount = detail.messages.length;
    }
    applyWorkflow({ ...detail.workflow, workflow_id: detail.workflow.id, changes: [] });
  } catch (error) {
    reportError(error);
  }
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

function sessionIdFromHash() {
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ""));
  return params.get("session");
}

async function openWorkflow(workflowId, readOnly, problems = []) {
  try {
    const session = await api("POST", "/v1/sessions", { workflow_id: workflowId, read_only: readOnly });
    if (problems.length) state.nextBanner = `Imported with problems to fix: ${problems.join("; ")}`;
    window.location.hash = `session=${encodeURIComponent(session.id)}`;
  } catch (error) {
    reportError(error);
  }
}

async function showPicker() {
  stopSockets();
  state.session = null;
  state.workflow = null;
  el.sessionView.hidden = true;
  el.pickerView.hidden = false;
  el.navWorkflows.hidden = true;
  el.badge.hidden = true;
  el.title.textContent = "";
  el.connection.textContent = "";
  el.connection.dataset.state = "idle";
  document.body.dataset.view = "picker";
  document.title = "Planwright";
  await picker.show();
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
  state.session = { id: detail.id, workflow_id: detail.workflow_id, read_only: readOnly };
  state.workflow = { ...detail.workflow };
  state.model = null;
  state.selectedJob = null;
  state.turnId = null;
  state.turnRunning = false;
  state.awaitingStart = false;
  state.pendingConfirm = null;
  document.body.dataset.view = "session";
  document.body.dataset.mode = readOnly ? "read-only" : "edit";
  el.pickerView.hidden = true;
  el.sessionView.hidden = false;
  el.navWorkflows.hidden = false;
  el.badge.hidden = false;
  el.badge.textContent = readOnly ? "Read-only" : "Editing";
  el.badge.dataset.mode = readOnly ? "read-only" : "edit";
  el.readonlyNotice.hidden = !readOnly;
  el.input.placeholder = readOnly
    ? "Ask about this workflow, e.g. “what happens when the coverage check fails?”"
    : "Describe or change the workflow… (Enter to send, Shift+Enter for a new line)";

  chat.renderHistory(detail.messages);
  state.messageCount = detail.messages.length;
  applyWorkflow({ ...detail.workflow, workflow_id: detail.workflow.id, changes: [] }, { initial: true });
  if (detail.pending_confirmation) {
    // A turn paused for confirmation (e.g. started on another device).
    state.pendingConfirm = detail.pending_confirmation;
    chat.startTurn(detail.pending_confirmation.turn_id || null);
    chat.confirm(detail.pending_confirmation, { readOnly });
  }
  historyView.open(detail.workflow_id, { readOnly });
  historyView.refresh();

  state.chatSocket = new ReconnectingSocket(
    () => socketUrl(`/v1/sessions/${encodeURIComponent(detail.id)}/ws`),
    {
      onFrame: onChatFrame,
      onState: (socketState) => setConnection("chat", socketState),
      onOpen: (reconnected) => {
        if (reconnected) catchUp();
      },
    },
  ).start();
  state.watchSocket = new ReconnectingSocket(
    () =>
      socketUrl(`/v1/workflows/${encodeURIComponent(detail.workflow_id)}/watch`, {
        since_version: state.workflow ? state.workflow.version : undefined,
      }),
    {
      onFrame: (frame) => {
        if (frame.type === "workflow") applyWorkflow(frame);
      },
      onState: (socketState) => setConnection("watch", socketState),
    },
  ).start();
  updateComposer();
}

async function route() {
  const sessionId = sessionIdFromHash();
  if (sessionId) await openSession(sessionId);
  else await showPicker();
}

const picker = new Picker($("#picker-view"), { onOpen: openWorkflow, onError: reportError });

// --- wiring -------------------------------------------------------------------------

el.tokenInput.value = getToken();
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
$("#context-clear").addEventListener("click", () => setTab("diagram"));
for (const button of document.querySelectorAll(".tab")) {
  button.addEventListener("click", () => setTab(button.dataset.tab));
}
el.stepSelect.addEventListener("change", () => selectJob(el.stepSelect.value));
$("#export-button").addEventListener("click", async () => {
  if (!state.workflow) return;
  const name = ((state.model && state.model.name) || "workflow").replace(/[^\w.-]+/g, "-");
  try {
    await download(`/v1/workflows/${encodeURIComponent(state.workflow.id)}/export`, `${name}.yaml`);
  } catch (error) {
    reportError(error);
  }
});
window.addEventListener("hashchange", route);

// Exposed for debugging in the browser console (and for tests to read state).
window.planwright = { state };

route();
