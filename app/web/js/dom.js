// Tiny DOM helpers: build elements without innerHTML (all text goes in as text nodes).

const SVG_NS = "http://www.w3.org/2000/svg";

function fill(el, attrs, children) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") el.setAttribute("class", value);
    else if (name === "dataset") Object.assign(el.dataset, value);
    else if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), value);
    } else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function h(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

// Append children as h() does (null, undefined and false are left out; Element.append
// would write them as text).
export function append(el, ...children) {
  return fill(el, {}, children);
}

export function s(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

export function $(selector, root = document) {
  const found = root.querySelector(selector);
  if (!found) throw new Error(`missing element ${selector}`);
  return found;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export function formatTime(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const sameDay = date.toDateString() === new Date().toDateString();
  return sameDay
    ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })
    : date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
}
