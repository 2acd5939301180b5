// Small syntax highlighters for the YAML and step-code views. They build DOM
// nodes (never HTML strings), so document text cannot inject markup.

function span(cls, text) {
  const el = document.createElement("span");
  el.className = cls;
  el.textContent = text;
  return el;
}

const YAML_SCALAR = [
  [/^#.*/, "y-comment"],
  [/^'(?:[^']|'')*'/, "y-str"],
  [/^"(?:[^"\\]|\\.)*"/, "y-str"],
  [/^(?:true|false|yes|no|on|off)(?=\s*(?:#|$))/i, "y-bool"],
  [/^(?:null|~)(?=\s*(?:#|$))/, "y-null"],
  [/^[-+]?(?:\d[\d_]*)(?:\.\d+)?(?:[eE][-+]?\d+)?(?=\s*(?:#|$))/, "y-num"],
  [/^[|>][-+0-9]*(?=\s*(?:#|$))/, "y-block"],
  [/^&\S+|^\*\S+/, "y-anchor"],
];

function yamlValue(out, text) {
  let rest = text;
  while (rest.length) {
    const space = /^\s+/.exec(rest);
    if (space) {
      out.append(space[0]);
      rest = rest.slice(space[0].length);
      continue;
    }
    let matched = false;
    for (const [pattern, cls] of YAML_SCALAR) {
      const found = pattern.exec(rest);
      if (found) {
        out.append(span(cls, found[0]));
        rest = rest.slice(found[0].length);
        matched = true;
        break;
      }
    }
    if (matched) continue;
    // A plain scalar runs to a " #" comment or the end of the line.
    const plain = /^(.*?)(?=\s#|$)/.exec(rest)[1] || rest;
    out.append(span("y-plain", plain));
    rest = rest.slice(plain.length);
  }
}

export function highlightYaml(text) {
  const out = document.createDocumentFragment();
  const lines = (text || "").replace(/\n$/, "").split("\n");
  let blockIndent = null; // inside a `|` / `>` block scalar: lines indented deeper than this
  lines.forEach((line, index) => {
    if (index) out.append("\n");
    const indent = line.length - line.trimStart().length;
    if (blockIndent !== null) {
      if (line.trim() === "" || indent > blockIndent) {
        out.append(span("y-block-text", line));
        return;
      }
      blockIndent = null;
    }
    const match = /^(\s*)(-\s+)?((?:'[^']*'|"[^"]*"|[^\s#'"][^:#]*?))(\s*:)(\s+|$)(.*)$/.exec(line);
    if (match) {
      const [, lead, dash, key, colon, gap, value] = match;
      out.append(lead);
      if (dash) out.append(span("y-punct", dash));
      out.append(span("y-key", key), span("y-punct", colon), gap);
      yamlValue(out, value);
      if (/^[|>][-+0-9]*\s*(?:#.*)?$/.test(value)) blockIndent = indent + (dash ? dash.length : 0);
      return;
    }
    const item = /^(\s*)(-\s+|-$)(.*)$/.exec(line);
    if (item) {
      out.append(item[1], span("y-punct", item[2]));
      yamlValue(out, item[3]);
      return;
    }
    yamlValue(out, line);
  });
  return out;
}

const JS_TOKENS = new RegExp(
  [
    String.raw`(\/\/[^\n]*|\/\*[\s\S]*?\*\/)`, // 1 comment
    String.raw`('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|` + "`(?:[^`\\\\]|\\\\.)*`)", // 2 string
    String.raw`\b(const|let|var|function|return|if|else|for|while|of|in|new|async|await|try|catch|throw|true|false|null|undefined|export|import|from|fn|each)\b`, // 3 keyword
    String.raw`(\b\d+(?:\.\d+)?\b)`, // 4 number
    String.raw`(\$(?:\.[A-Za-z_][\w]*)*)`, // 5 state ($.data)
  ].join("|"),
  "g",
);

export function highlightJs(text) {
  const out = document.createDocumentFragment();
  const source = text || "";
  let last = 0;
  for (const match of source.matchAll(JS_TOKENS)) {
    if (match.index > last) out.append(source.slice(last, match.index));
    const cls = match[1] ? "j-comment" : match[2] ? "j-str" : match[3] ? "j-kw" : match[4] ? "j-num" : "j-state";
    out.append(span(cls, match[0]));
    last = match.index + match[0].length;
  }
  if (last < source.length) out.append(source.slice(last));
  return out;
}
