// The banner under the top bar: errors, warnings and notes, and what an API error
// means for the user (a missing or refused token points at the Token field).

import { ApiError, getToken } from "./api.js";
import { $ } from "./dom.js";

const root = $("#banner");
const textEl = $("#banner-text");
const tokenForm = $("#token-form");
const tokenInput = $("#token-input");

let bannerTimer = null;

export function banner(text, kind = "error", { autoHideMs } = {}) {
  clearTimeout(bannerTimer);
  root.dataset.kind = kind;
  textEl.textContent = text;
  root.hidden = false;
  if (autoHideMs) bannerTimer = setTimeout(hideBanner, autoHideMs);
}

export function hideBanner() {
  root.hidden = true;
  delete root.dataset.kind;
}

export function reportError(error) {
  if (error instanceof ApiError && error.isAuth) {
    tokenForm.classList.add("attention");
    banner(
      getToken()
        ? "The server refused this token. Enter a valid token in the Token field (top right) and press Save."
        : "This server needs a token. Enter it in the Token field (top right) and press Save.",
      "auth",
    );
    tokenInput.focus();
    return;
  }
  if (error instanceof ApiError && error.isForbidden) {
    banner(`Not allowed: ${error.message}`, "auth");
    return;
  }
  banner(error.message || String(error), "error");
}
