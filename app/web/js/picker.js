// Pick, create or import a workflow (then open a session on it), or open or create a project.

import { api } from "./api.js";
import { $, h, clear, formatTime } from "./dom.js";

export class Picker {
  constructor(root, { onOpen, onOpenProject, onError }) {
    this.root = root;
    this.onOpen = onOpen; // (workflowId, readOnly, problems?) => Promise
    this.onOpenProject = onOpenProject; // (projectId) => void
    this.onError = onError;
    $("#new-project-form", root).addEventListener("submit", (event) => {
      event.preventDefault();
      this.createProject();
    });
    $("#new-form", root).addEventListener("submit", (event) => {
      event.preventDefault();
      this.create();
    });
    $("#import-form", root).addEventListener("submit", (event) => {
      event.preventDefault();
      this.importYaml();
    });
    $("#import-file", root).addEventListener("change", async (event) => {
      const file = event.target.files && event.target.files[0];
      if (file) $("#import-yaml", root).value = await file.text();
    });
  }

  async show() {
    await Promise.all([this.showProjects(), this.showWorkflows()]);
  }

  async showProjects() {
    const rows = $("#project-rows", this.root);
    clear(rows);
    let projects = [];
    try {
      projects = await api("GET", "/v1/projects");
    } catch (error) {
      this.onError(error);
    }
    $("#projects-empty", this.root).hidden = projects.length > 0;
    $("#project-table", this.root).hidden = projects.length === 0;
    for (const project of projects) {
      rows.append(
        h(
          "tr",
          { "data-project-id": project.id },
          h("td", { class: "project-name" }, project.name),
          h("td", {}, String(project.workflow_count)),
          h("td", { class: "muted" }, formatTime(project.updated_at)),
          h(
            "td",
            { class: "row-actions" },
            h("button", { type: "button", class: "open-project", onclick: () => this.onOpenProject(project.id) }, "Open"),
          ),
        ),
      );
    }
  }

  async createProject() {
    const input = $("#new-project-name", this.root);
    const name = input.value.trim();
    try {
      const project = await api("POST", "/v1/projects", name ? { name } : {});
      input.value = "";
      this.onOpenProject(project.id);
    } catch (error) {
      this.onError(error);
    }
  }

  async showWorkflows() {
    const rows = $("#workflow-rows", this.root);
    clear(rows);
    let workflows = [];
    try {
      workflows = await api("GET", "/v1/workflows");
    } catch (error) {
      this.onError(error);
    }
    $("#picker-empty", this.root).hidden = workflows.length > 0;
    $("#workflow-table", this.root).hidden = workflows.length === 0;
    for (const workflow of workflows) {
      rows.append(
        h(
          "tr",
          { "data-workflow-id": workflow.id },
          h("td", { class: "wf-name" }, workflow.name),
          h("td", {}, `v${workflow.version}`),
          h("td", { class: "muted" }, formatTime(workflow.updated_at)),
          h(
            "td",
            { class: "row-actions" },
            h("button", { type: "button", class: "open-edit", onclick: () => this.onOpen(workflow.id, false) }, "Open"),
            h(
              "button",
              { type: "button", class: "ghost open-readonly", onclick: () => this.onOpen(workflow.id, true) },
              "Read-only",
            ),
          ),
        ),
      );
    }
  }

  async create() {
    const input = $("#new-name", this.root);
    const name = input.value.trim();
    try {
      const workflow = await api("POST", "/v1/workflows", name ? { name } : {});
      input.value = "";
      await this.onOpen(workflow.id, false);
    } catch (error) {
      this.onError(error);
    }
  }

  async importYaml() {
    const area = $("#import-yaml", this.root);
    const text = area.value;
    if (!text.trim()) {
      this.onError(new Error("Paste YAML or choose a file to import."));
      return;
    }
    try {
      const workflow = await api("POST", "/v1/workflows", { yaml: text });
      area.value = "";
      await this.onOpen(workflow.id, false, workflow.problems || []);
    } catch (error) {
      this.onError(error);
    }
  }
}
