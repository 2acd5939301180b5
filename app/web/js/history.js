// The history pane: versions (who, when, which tool, summary), a diff of each
// against the version before it, and revert.

import { api } from "./api.js";
import { h, clear, formatTime } from "./dom.js";
import { diffStats, lineDiff, renderDiff } from "./diff.js";

export class HistoryView {
  constructor(elements, { onError, onReverted }) {
    this.el = elements;
    this.onError = onError;
    this.onReverted = onReverted;
    this.workflowId = null;
    this.readOnly = true;
    this.versions = [];
    this.current = 0;
    this.selected = null;
    this.followLatest = true;
    this.yamlCache = new Map();
    this.refreshing = null;
    this.pending = false;
    this.el.revert.addEventListener("click", () => this.revert());
  }

  open(workflowId, { readOnly }) {
    this.workflowId = workflowId;
    this.readOnly = readOnly;
    this.versions = [];
    this.selected = null;
    this.followLatest = true;
    this.yamlCache = new Map();
    clear(this.el.list);
    this.el.detail.hidden = true;
  }

  // Coalesces bursts (one turn can commit several versions in a row).
  refresh() {
    if (this.refreshing) {
      this.pending = true;
      return this.refreshing;
    }
    this.refreshing = this.load().finally(() => {
      this.refreshing = null;
      if (this.pending) {
        this.pending = false;
        this.refresh();
      }
    });
    return this.refreshing;
  }

  async load() {
    if (!this.workflowId) return;
    const workflowId = this.workflowId;
    let versions;
    try {
      versions = await api("GET", `/v1/workflows/${encodeURIComponent(workflowId)}/versions`);
    } catch (error) {
      this.onError(error);
      return;
    }
    if (workflowId !== this.workflowId) return;
    this.versions = versions;
    this.current = versions.length ? versions[0].version : 0;
    this.renderList();
    const target = this.followLatest || this.selected === null ? this.current : this.selected;
    if (target) await this.select(target, { keepFollow: true });
  }

  renderList() {
    clear(this.el.list);
    for (const v of this.versions) {
      const item = h(
        "li",
        {
          class: `version${v.version === this.selected ? " selected" : ""}${v.version === this.current ? " current" : ""}`,
          "data-version": v.version,
          tabindex: 0,
          role: "button",
          "aria-label": `Version ${v.version}: ${v.summary}`,
        },
        h(
          "div",
          { class: "version-head" },
          h("span", { class: "version-number" }, `v${v.version}`),
          h("span", { class: "chip" }, v.tool || "edit"),
          v.version === this.current ? h("span", { class: "chip current-chip" }, "current") : "",
        ),
        h("div", { class: "version-summary" }, v.summary || ""),
        h("div", { class: "version-meta muted" }, `${v.author || "unknown"} · ${formatTime(v.created_at)}`),
      );
      const choose = () => {
        this.followLatest = v.version === this.current;
        this.select(v.version);
      };
      item.addEventListener("click", choose);
      item.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          choose();
        }
      });
      this.el.list.append(item);
    }
  }

  async yamlOf(version) {
    if (version < 1) return "";
    if (!this.yamlCache.has(version)) {
      const found = await api(
        "GET",
        `/v1/workflows/${encodeURIComponent(this.workflowId)}/versions/${version}`,
      );
      this.yamlCache.set(version, found.yaml || "");
    }
    return this.yamlCache.get(version);
  }

  async select(version, { keepFollow = false } = {}) {
    if (!keepFollow) this.followLatest = version === this.current;
    this.selected = version;
    for (const li of this.el.list.querySelectorAll("li.version")) {
      li.classList.toggle("selected", Number(li.dataset.version) === version);
    }
    let before;
    let after;
    try {
      [before, after] = await Promise.all([this.yamlOf(version - 1), this.yamlOf(version)]);
    } catch (error) {
      this.onError(error);
      return;
    }
    if (this.selected !== version) return;
    const ops = lineDiff(before, after);
    const { added, removed } = diffStats(ops);
    this.el.title.textContent =
      version === 1 ? `v1 (first version) +${added}` : `v${version} vs v${version - 1}  +${added} −${removed}`;
    clear(this.el.diff).append(renderDiff(ops));
    this.el.detail.hidden = false;
    this.el.detail.dataset.version = String(version);
    const canRevert = !this.readOnly && version !== this.current;
    this.el.revert.hidden = !canRevert;
    this.el.revert.textContent = `Revert to v${version}`;
  }

  async revert() {
    const version = this.selected;
    if (!version || this.readOnly) return;
    this.el.revert.disabled = true;
    try {
      const result = await api("POST", `/v1/workflows/${encodeURIComponent(this.workflowId)}/revert`, {
        version,
      });
      this.followLatest = true;
      this.onReverted(result, version);
      await this.refresh();
    } catch (error) {
      this.onError(error);
    } finally {
      this.el.revert.disabled = false;
    }
  }
}
