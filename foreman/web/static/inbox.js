// The decision inbox: each open decision with its prompt, detail, risk findings, CI and merge-test
// results, its diff (asked for with diff.request) and one button per option (decision.answer).
import {clock, h, oneLine, safe} from "./text.js";
import {act} from "./views.js";

const cards = new Map();
const MAX_DIFF_LINES = 3000;
const SEVERITY = {critical: 0, high: 1, medium: 2, low: 3};

/** Update the inbox: a card per open decision, oldest first; answered ones leave it. */
export function renderInbox(store, ids, ctx) {
  const list = document.getElementById("decision-list");
  const open = store.openDecisions();
  const keep = new Set(open.map((d) => d.id));
  for (const [id, card] of cards) if (!keep.has(id)) { card.remove(); cards.delete(id); }
  for (const d of open) {
    ctx.notify(d);
    const old = cards.get(d.id);
    if (old && ids !== null && !ids.has(d.id)) {
      refreshChecks(old, d, store);
      continue;
    }
    const card = decisionCard(d, store, ctx, old);
    if (old !== card) { if (old) old.replaceWith(card); cards.set(d.id, card); }
  }
  const want = open.map((d) => cards.get(d.id));
  if (want.some((el, i) => list.children[i] !== el) || list.children.length !== want.length) list.replaceChildren(...want);
  document.getElementById("inbox-count").textContent = String(open.length);
  document.getElementById("inbox-empty").hidden = open.length > 0;
  document.title = open.length ? `(${open.length}) Foreman` : "Foreman";
}

function decisionCard(d, store, ctx, old) {
  const note = h("textarea", {name: "note", rows: 2, placeholder: "a note for the agent (optional)", "aria-label": "note"});
  const status = h("p", {class: "answer-status", role: "status"});
  const answer = async (option, button) => {
    for (const b of card.querySelectorAll(".options button")) b.disabled = true;
    status.textContent = `answering “${oneLine(d.options[option])}”…`;
    const ok = await act(ctx, {type: "decision.answer", decision: d.id, option, text: note.value.trim() || null});
    if (!ok) {
      for (const b of card.querySelectorAll(".options button")) b.disabled = false;
      status.textContent = "";
    } else {
      status.textContent = `answered: ${oneLine(d.options[option])}`;
      button.classList.add("chosen");
    }
  };
  const diffBox = old ? old.querySelector(".diff") : h("div", {class: "diff", hidden: true});
  const card = h("article", {class: `decision k-${d.kind}`, "data-decision": d.id, "data-kind": d.kind},
    h("header", {}, h("span", {class: `pill k-${d.kind}`}, d.kind), " ", h("b", {}, d.id),
      h("span", {class: "dim"}, ` · ${oneLine(d.askedBy)} asks${d.task ? " · " + d.task : ""} · ${clock(d.createdAt)}`)),
    h("p", {class: "prompt"}, safe(d.prompt)),
    d.detail ? h("p", {class: "detail"}, safe(d.detail)) : null,
    risks(d.risks || []),
    h("div", {class: "checks"}),
    d.kind === "merge" ? h("button", {type: "button", class: "link", onclick: () => toggleDiff(d, diffBox, ctx)}, "Show diff") : null,
    diffBox,
    note,
    h("div", {class: "options"}, ...d.options.map((label, i) =>
      h("button", {type: "button", class: i === 0 ? "primary" : "", "data-option": i, onclick: (ev) => answer(i, ev.currentTarget)},
        oneLine(label)))),
    status);
  refreshChecks(card, d, store);
  return card;
}

function risks(list) {
  if (!list.length) return null;
  const sorted = [...list].sort((a, b) => SEVERITY[a.severity] - SEVERITY[b.severity]);
  return h("ul", {class: "risks"}, ...sorted.map((r) => h("li", {class: `sev-${r.severity}`},
    h("span", {class: `pill sev-${r.severity}`}, r.severity), ` ${r.kind} `,
    h("code", {}, safe(r.path) + (r.line ? `:${r.line}` : "")), ` ${safe(r.message)}`)));
}

/** CI runs (the feed's ci items for the task) and the task's merge test. */
function refreshChecks(card, d, store) {
  const box = card.querySelector(".checks");
  if (!box || !d.task) return;
  const task = store.tasks.get(d.task);
  const ci = store.feed.filter((f) => f.kind === "ci" && f.task === d.task).slice(-3);
  const items = ci.map((f) => h("li", {class: "ci"}, h("time", {}, clock(f.at)), ` ${safe(f.text)}`));
  if (task && task.mergeTest) {
    const mt = task.mergeTest;
    items.push(h("li", {class: `mt mt-${mt.state}`}, `merge test: ${mt.state}${mt.verdict ? " · " + safe(mt.verdict) : ""}`
      + (mt.base ? ` · on ${mt.base.slice(0, 8)}` : "")));
  }
  box.replaceChildren(...(items.length ? [h("ul", {class: "log short"}, ...items)] : []));
}

async function toggleDiff(d, box, ctx) {
  if (!box.hidden) { box.hidden = true; return; }
  box.hidden = false;
  if (box.dataset.loaded) return;
  box.replaceChildren(h("p", {class: "dim"}, "loading the diff…"));
  const reply = await act(ctx, {type: "diff.request", decision: d.id});
  if (!reply) { box.replaceChildren(h("p", {class: "warn"}, "the diff could not be read")); return; }
  box.dataset.loaded = "1";
  box.replaceChildren(renderDiff(reply.diff));
}

/** A structured diff (protocol Diff) as files with their hunks. */
export function renderDiff(diff) {
  let budget = MAX_DIFF_LINES;
  const files = (diff.files || []).map((f) => {
    const hunks = [];
    for (const hk of f.hunks || []) {
      if (budget <= 0) break;
      const lines = hk.lines.slice(0, budget);
      budget -= lines.length;
      hunks.push(h("div", {class: "hunk"},
        h("div", {class: "hunk-head"}, `@@ -${hk.oldStart},${hk.oldLines} +${hk.newStart},${hk.newLines} @@ ${oneLine(hk.header || "")}`),
        ...lines.map((ln) => h("div", {class: ln.op === "+" ? "add" : ln.op === "-" ? "del" : "ctx"},
          h("span", {class: "ln"}, ln.op === "-" ? ln.old : ln.new), `${ln.op}${safe(ln.text)}`))));
    }
    return h("details", {class: "file", open: true},
      h("summary", {}, h("code", {}, safe(f.oldPath && f.oldPath !== f.path ? `${f.oldPath} → ${f.path}` : f.path)),
        ` ${f.status} `, h("span", {class: "add"}, `+${f.additions}`), " ", h("span", {class: "del"}, `−${f.deletions}`)),
      f.binary ? h("p", {class: "dim"}, "binary file") : null,
      f.truncated ? h("p", {class: "dim"}, "(truncated by the Foreman)") : null,
      ...hunks);
  });
  return h("div", {},
    h("p", {class: "dim"}, `${diff.filesChanged} files · +${diff.additions} −${diff.deletions} · ${safe(diff.base).slice(0, 10)}…${safe(diff.head).slice(0, 10)}`),
    ...files,
    budget <= 0 ? h("p", {class: "dim"}, `(only the first ${MAX_DIFF_LINES} lines are shown)`) : null);
}
