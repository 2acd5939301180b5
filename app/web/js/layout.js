// What the page shows around its views: the picker or a session (a workflow's or a
// project's), the top bar's badge and project link, the composer's mode and hints.

import { api } from "./api.js";
import { $ } from "./dom.js";

const el = {
  title: $("#workflow-title"),
  badge: $("#mode-badge"),
  connection: $("#connection"),
  navWorkflows: $("#nav-workflows"),
  pickerView: $("#picker-view"),
  sessionView: $("#session-view"),
  workflowPane: $("#workflow-pane"),
  historyPane: $("#history-pane"),
  projectPane: $("#project-pane"),
  readonlyNotice: $("#readonly-notice"),
  planToggle: $("#plan-toggle"),
  planMode: $("#plan-mode"),
  contextChip: $("#context-chip"),
  input: $("#chat-input"),
  projectLink: $("#project-link"),
};

export function pickerLayout() {
  el.sessionView.hidden = true;
  el.pickerView.hidden = false;
  el.navWorkflows.hidden = true;
  el.badge.hidden = true;
  el.projectLink.hidden = true;
  el.title.textContent = "";
  el.connection.textContent = "";
  el.connection.dataset.state = "idle";
  document.body.dataset.view = "picker";
  delete document.body.dataset.kind;
  document.title = "Planwright";
}

export function sessionLayout(kind, readOnly) {
  const project = kind === "project";
  document.body.dataset.view = "session";
  document.body.dataset.kind = kind;
  document.body.dataset.mode = readOnly ? "read-only" : "edit";
  el.pickerView.hidden = true;
  el.sessionView.hidden = false;
  el.workflowPane.hidden = project;
  el.historyPane.hidden = project;
  el.projectPane.hidden = !project;
  el.navWorkflows.hidden = false;
  el.badge.hidden = false;
  el.badge.textContent = readOnly ? "Read-only" : project ? "Planning" : "Editing";
  el.badge.dataset.mode = readOnly ? "read-only" : "edit";
  el.readonlyNotice.hidden = !readOnly;
  el.planToggle.hidden = readOnly;
  el.planMode.checked = project && !readOnly;
  el.contextChip.hidden = true;
  if (project) {
    el.input.placeholder = readOnly
      ? "Ask about this project's plan…"
      : "Paste a spec or SOP with several processes, or ask for a change to the plan… (Enter to send)";
  } else {
    el.input.placeholder = readOnly
      ? "Ask about this workflow, e.g. “what happens when the coverage check fails?”"
      : "Describe or change the workflow… (Enter to send, Shift+Enter for a new line)";
  }
}

// The topbar link from a workflow session to its project.
export async function showProjectLink(projectId, stillCurrent) {
  el.projectLink.hidden = !projectId;
  if (!projectId) return;
  el.projectLink.href = `#project=${encodeURIComponent(projectId)}`;
  el.projectLink.textContent = "Project";
  try {
    const project = await api("GET", `/v1/projects/${encodeURIComponent(projectId)}`);
    if (stillCurrent()) {
      el.projectLink.textContent = `${project.name} ›`;
    }
  } catch {
    /* the link still works; the name is a nicety */
  }
}
