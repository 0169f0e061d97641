// Display-safe text (docs/protocol.md, "Display-safe text"): bidi controls and control characters
// other than tab and newline are shown escaped as <U+XXXX>, never as themselves.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The text as every view shows it (a CR right before a newline is part of the line break). */
export function safe(text) {
  if (text === null || text === undefined) return "";
  return String(text).replace(/\r\n/g, "\n").replace(UNSAFE,
    (c) => "<U+" + c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0") + ">");
}

/** Safe text for one line: newlines and tabs as blanks. */
export function oneLine(text) {
  return safe(text).replace(/[\t\n]/g, " ");
}

/** An element: h("div", {class: "x", onclick: fn}, "text", child, ...); strings become text nodes. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** US dollars: $0.42, $12.30. */
export function money(usd) {
  return "$" + (usd || 0).toFixed(2);
}

/** Token counts: 950, 12.3k, 4.1M. */
export function tokens(n) {
  n = n || 0;
  if (n >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (n >= 1e3) return (n / 1e3).toFixed(1) + "k";
  return String(n);
}

/** Local HH:MM:SS of a Unix time in seconds. */
export function clock(at) {
  if (!at) return "--:--:--";
  return new Date(at * 1000).toLocaleTimeString([], {hour12: false});
}
