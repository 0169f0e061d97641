// The task graph: one column per task state, dependencies drawn as curves between cards, and a
// task's dialog (description, history, steering: cancel, retry, prioritize, reassign).
import {clock, h, money, oneLine, safe} from "./text.js";
import {act} from "./views.js";

export const COLUMNS = ["todo", "doing", "review", "blocked", "done", "cancelled"];
const cards = new Map();
let depsFrame = 0;
let lastStore = null;

function columnsEl() {
  const root = document.getElementById("columns");
  if (!root.children.length) {
    root.append(...COLUMNS.map((s) => h("div", {class: "column", "data-status": s},
      h("h3", {}, s, " ", h("span", {class: "count"}, "0")), h("div", {class: "cards"}))));
  }
  return root;
}

function order(a, b) {
  return (b.priority || 0) - (a.priority || 0) || Number(a.id.slice(1)) - Number(b.id.slice(1)) || a.id.localeCompare(b.id);
}

/** Update the cards of the tasks in `ids` (null: every task) and put each in its state's column. */
export function renderBoard(store, ids, ctx) {
  lastStore = store;
  const root = columnsEl();
  if (ids === null) { cards.clear(); for (const c of root.querySelectorAll(".cards")) c.replaceChildren(); }
  const touched = new Set();
  for (const t of store.tasks.values()) {
    if (ids !== null && !ids.has(t.id) && cards.has(t.id)) continue;
    const card = taskCard(t, store, ctx);
    const old = cards.get(t.id);
    if (old) old.replaceWith(card);
    cards.set(t.id, card);
    touched.add(t.status);
    if (old) touched.add(old.dataset.status);
  }
  for (const status of (ids === null ? COLUMNS : touched)) {
    const col = root.querySelector(`.column[data-status="${status}"]`);
    if (!col) continue;
    const want = [...store.tasks.values()].filter((t) => t.status === status).sort(order).map((t) => cards.get(t.id));
    const box = col.querySelector(".cards");
    if (want.length !== box.children.length || want.some((el, i) => box.children[i] !== el)) box.replaceChildren(...want);
    col.querySelector(".count").textContent = String(want.length);
  }
  drawDeps();
}

function taskCard(t, store, ctx) {
  const mt = t.mergeTest;
  const open = [...store.decisions.values()].some((d) => d.task === t.id && d.status === "open");
  return h("button", {type: "button", class: `task st-${t.status}${open ? " waiting" : ""}`, "data-task": t.id,
                      "data-status": t.status, onclick: () => openTask(t.id, ctx)},
    h("span", {class: "task-id"}, t.id), " ", h("span", {class: "task-title"}, oneLine(t.title)),
    h("span", {class: "task-meta"},
      t.assignee ? `@${t.assignee}` : "unassigned", t.priority ? ` · p${t.priority}` : "",
      mt ? h("span", {class: `pill mt-${mt.state}`}, `merge test ${mt.state}`) : null,
      open ? h("span", {class: "pill waiting"}, "needs you") : null));
}

/** Draw each dependency as a curve from the card it waits for to the card that waits. */
export function drawDeps() {
  if (depsFrame) return;
  depsFrame = requestAnimationFrame(() => {
    depsFrame = 0;
    const svg = document.getElementById("deps");
    const scroll = document.getElementById("board-scroll");
    if (!svg || !lastStore) return;
    const box = scroll.getBoundingClientRect();
    svg.setAttribute("width", String(scroll.scrollWidth));
    svg.setAttribute("height", String(scroll.scrollHeight));
    const ns = "http://www.w3.org/2000/svg";
    const paths = [];
    for (const t of lastStore.tasks.values()) {
      const to = cards.get(t.id);
      if (!to || !to.isConnected) continue;
      for (const dep of t.deps || []) {
        const from = cards.get(dep);
        if (!from || !from.isConnected) continue;
        const a = from.getBoundingClientRect();
        const b = to.getBoundingClientRect();
        const ox = scroll.scrollLeft - box.left, oy = scroll.scrollTop - box.top;
        const y1 = a.top + a.height / 2 + oy, y2 = b.top + b.height / 2 + oy;
        let d;
        if (a.right <= b.left) { // the dependency's column is to the left: right edge to left edge
          const x1 = a.right + ox, x2 = b.left + ox, bend = Math.max(20, (x2 - x1) / 2);
          d = `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`;
        } else if (b.right <= a.left) { // to the right (a done dependency): left edge to right edge
          const x1 = a.left + ox, x2 = b.right + ox, bend = Math.max(20, (x1 - x2) / 2);
          d = `M${x1},${y1} C${x1 - bend},${y1} ${x2 + bend},${y2} ${x2},${y2}`;
        } else { // the same column: a loop on its left
          const x = Math.min(a.left, b.left) + ox;
          d = `M${x},${y1} C${x - 18},${y1} ${x - 18},${y2} ${x},${y2}`;
        }
        const p = document.createElementNS(ns, "path");
        p.setAttribute("d", d);
        p.setAttribute("data-dep", `${dep}->${t.id}`);
        paths.push(p);
      }
    }
    svg.replaceChildren(...paths);
  });
}

function openTask(id, ctx) {
  const t = lastStore.tasks.get(id);
  if (!t) return;
  const dlg = document.getElementById("task-dialog");
  const body = document.getElementById("task-dialog-body");
  const agents = [...lastStore.agents.values()].filter((a) => a.role === "worker");
  const steer = async (intent) => { if (await act(ctx, {...intent, task: t.id})) dlg.close(); };
  const prio = h("input", {type: "number", name: "priority", placeholder: "top", "aria-label": "priority", class: "narrow"});
  const who = h("select", {name: "agent", "aria-label": "reassign to"}, ...agents.map((a) => h("option", {value: a.name}, `@${a.name}`)));
  const u = t.usage || {};
  body.replaceChildren(
    h("h3", {}, `${t.id} · ${oneLine(t.title)}`),
    h("p", {class: "dim"}, `${t.status} · ${t.assignee ? "@" + t.assignee : "unassigned"} · priority ${t.priority} · `
      + `${money(u.costUsd)}` + (t.deps && t.deps.length ? ` · after ${t.deps.join(", ")}` : "")),
    t.blockedReason ? h("p", {class: "warn"}, safe(t.blockedReason)) : null,
    h("pre", {class: "desc"}, safe(t.description || "")),
    t.mergeTest ? h("p", {}, `Merge test: ${t.mergeTest.state} ${safe(t.mergeTest.verdict)}`) : null,
    h("ol", {class: "log short"}, ...(t.history || []).slice(-8).map((e) => h("li", {}, h("time", {}, clock(e.at)), ` ${oneLine(e.who)}: ${safe(e.what)}`))),
    h("div", {class: "buttons"},
      h("button", {type: "button", onclick: () => steer({type: "task.cancel"})}, "Cancel task"),
      h("button", {type: "button", onclick: () => steer({type: "task.retry"})}, "Retry"),
      h("span", {class: "group"}, prio, h("button", {type: "button", onclick: () =>
        steer({type: "task.prioritize", priority: prio.value === "" ? null : Number(prio.value)})}, "Prioritize")),
      h("span", {class: "group"}, who, h("button", {type: "button", onclick: () => steer({type: "task.reassign", agent: who.value})}, "Reassign")),
      h("button", {value: "close"}, "Close")));
  if (!dlg.open) dlg.showModal();
}
