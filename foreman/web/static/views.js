// Rendering: each section is updated in place from what the store marked dirty (an upsert touches
// its own card; a snapshot redraws everything).
import {clock, h, money, oneLine, safe, tokens} from "./text.js";
import {renderInbox} from "./inbox.js";
import {drawDeps, renderBoard} from "./board.js";

let wired = false;
let toastTimer = 0;

/** A short message at the bottom of the screen (a refused intent, a lost connection). */
export function showToast(text) {
  const t = document.getElementById("toast");
  t.textContent = safe(text);
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, 6000);
}

/** Run an intent; a refusal is shown as a toast. Resolves with the reply or null. */
export async function act(ctx, intent) {
  try {
    return await ctx.request(intent);
  } catch (err) {
    showToast(err.message);
    return null;
  }
}

export function render(store, dirty, ctx) {
  if (!wired) wire(ctx);
  const all = !!dirty.all;
  const none = new Set();
  if (all || dirty.status || dirty.agent) renderStatus(store);
  if (all || dirty.goal || dirty.task) renderGoals(store);
  if (all || dirty.task || dirty.decision) {
    const ids = new Set(dirty.task || none); // a decision opened or answered flags its task's card
    for (const id of dirty.decision || none) { const d = store.decisions.get(id); if (d && d.task) ids.add(d.task); }
    renderBoard(store, all ? null : ids, ctx);
  }
  if (all || dirty.agent) renderAgents(store, all ? null : dirty.agent || none, ctx);
  if (all || dirty.decision || dirty.task || dirty.feed) renderInbox(store, all ? null : dirty.decision || none, ctx);
  if (all || dirty.feed) renderLog("feed-list", store.feed, all, feedItem);
  if (all || dirty.message) renderLog("message-list", store.messages, all, messageItem);
  if (all || dirty.agent) renderRecipients(store);
}

function wire(ctx) {
  wired = true;
  document.getElementById("goal-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const input = ev.target.elements.text;
    if (await act(ctx, {type: "goal.submit", text: input.value})) input.value = "";
  });
  document.getElementById("message-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = ev.target.elements;
    let to = f.to.value;
    let text = f.text.value;
    const at = /^@([\w.-]+)\s+([\s\S]+)$/.exec(text);
    if (at) { to = at[1]; text = at[2]; }
    if (await act(ctx, {type: "message.send", to, text})) f.text.value = "";
  });
  window.addEventListener("resize", () => drawDeps());
}

function renderStatus(store) {
  const s = store.status;
  if (!s) return;
  const title = document.getElementById("title");
  title.textContent = `Foreman · ${oneLine(s.profile)} · ${oneLine(s.backend)}`;
  const u = s.usageSession || {};
  const working = [...store.agents.values()].filter((a) => a.active && !["idle", "done"].includes(a.state)).length;
  document.getElementById("usage").textContent =
    `${working} working · ${money(u.costUsd)} this session · ${tokens((u.inputTokens || 0) + (u.outputTokens || 0))} tokens`;
}

function renderGoals(store) {
  const list = document.getElementById("goal-list");
  const goals = [...store.goals.values()].slice(-5); // (a cancelled one too: it says so)
  list.replaceChildren(...goals.map((g) => {
    const tasks = [...store.tasks.values()].filter((t) => t.goal === g.id);
    const done = tasks.filter((t) => t.status === "done").length;
    return h("div", {class: `goal ${g.status}`, "data-goal": g.id},
      h("div", {class: "goal-head"}, h("b", {}, g.id), " ", h("span", {class: "goal-text"}, oneLine(g.text)),
        h("span", {class: `pill ${g.status}`}, g.status)),
      h("div", {class: "progress", role: "progressbar", "aria-valuenow": g.progress, "aria-valuemin": 0, "aria-valuemax": 100},
        bar(g.progress)),
      h("div", {class: "dim"}, `${g.progress}% · ${done}/${tasks.length} tasks done · ${money(g.usage && g.usage.costUsd)}`
        + (g.budgetUsd ? ` of ${money(g.budgetUsd)}` : "")));
  }));
  if (!goals.length) list.replaceChildren(h("p", {class: "empty"}, "No goal yet: give the lead one below."));
}

function bar(progress) {
  const el = h("span");
  el.style.width = `${Math.max(0, Math.min(100, progress))}%`; // (CSSOM, not a style attribute: the CSP allows it)
  return el;
}

const agentRows = new Map();

function renderAgents(store, names, ctx) {
  const list = document.getElementById("agent-list");
  if (names === null) { list.replaceChildren(); agentRows.clear(); }
  const ordered = [...store.agents.values()].sort((a, b) =>
    (a.role === "lead" ? -1 : 0) - (b.role === "lead" ? -1 : 0) || (b.active - a.active) || a.seat - b.seat);
  for (const a of ordered) {
    if (names !== null && !names.has(a.name) && agentRows.has(a.name)) continue;
    const row = agentRow(a, ctx);
    const old = agentRows.get(a.name);
    if (old) old.replaceWith(row); else list.append(row);
    agentRows.set(a.name, row);
  }
  const want = ordered.map((a) => agentRows.get(a.name));
  if (want.some((el, i) => list.children[i] !== el)) list.replaceChildren(...want);
}

function agentRow(a, ctx) {
  const u = a.usage || {};
  const state = !a.active ? "off shift" : a.paused ? "paused" : a.state;
  const steer = (type) => act(ctx, {type, agent: a.name});
  return h("div", {class: `agent ${a.active ? "" : "off"}`, "data-agent": a.name, "data-state": state},
    h("div", {class: "agent-head"}, h("b", {}, oneLine(a.title || a.name)), h("span", {class: "dim"}, ` @${a.name} · ${a.role}`),
      h("span", {class: `pill st-${a.state}`}, state)),
    h("div", {class: "activity"}, oneLine(a.activity || "") || "—", a.task ? h("span", {class: "dim"}, ` · ${a.task}`) : null),
    h("div", {class: "dim usage"}, `${money(u.costUsd)} · ${tokens(u.inputTokens)} in / ${tokens(u.outputTokens)} out · ${u.turns || 0} turns`
      + (a.model ? ` · ${oneLine(a.model)}` : "") + ` · ${oneLine(a.backend)}`),
    h("div", {class: "buttons"},
      a.active && !a.paused ? h("button", {type: "button", onclick: () => steer("agent.pause")}, "Pause") : null,
      a.active && a.paused ? h("button", {type: "button", onclick: () => steer("agent.resume")}, "Resume") : null,
      a.active ? h("button", {type: "button", onclick: () => steer("agent.stop")}, "Stop") : null,
      !a.active ? h("button", {type: "button", onclick: () => steer("agent.spawn")}, "Spawn") : null));
}

function renderLog(id, items, all, make) {
  const list = document.getElementById(id);
  if (all) {
    list.replaceChildren(...items.slice(-120).map(make));
  } else {
    const have = list.lastElementChild ? Number(list.lastElementChild.dataset.id) : -1;
    for (const it of items) if (it.id > have) list.append(make(it));
    while (list.children.length > 120) list.firstElementChild.remove();
  }
  list.scrollTop = list.scrollHeight;
}

function feedItem(f) {
  return h("li", {"data-id": f.id, class: `k-${f.kind}`}, h("time", {}, clock(f.at)), " ", safe(f.text));
}

function messageItem(m) {
  return h("li", {"data-id": m.id}, h("time", {}, clock(m.at)), " ", h("b", {}, `${oneLine(m.from)} → ${oneLine(m.to)}`), " ", safe(m.text));
}

function renderRecipients(store) {
  const sel = document.querySelector("#message-form select");
  const keep = sel.value;
  const names = [...store.agents.values()].filter((a) => a.active).map((a) => a.name);
  sel.replaceChildren(h("option", {value: "all"}, "@all"), ...names.map((n) => h("option", {value: n}, `@${n}`)));
  if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
}
