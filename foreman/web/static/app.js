// The Foreman's browser view: one WebSocket to the daemon that served this page, protocol v1
// (docs/protocol.md). The session cookie (HttpOnly) goes with the upgrade request; the page never
// sees a token. Reconnects by itself with `since` (a daemon restart included), no reload.
import {Store} from "./store.js";
import {render, showToast} from "./views.js";

const store = new Store();
const pending = new Map();
let ws = null;
let nextId = 1;
let backoff = 250;
let failures = 0;
let frame = 0;

/** Figures the tests and bench/web_bench.py read (window.foremanWeb.stats). */
const stats = {firstRenderAt: null, renders: 0, applied: 0, applyMs: 0, renderMs: 0, renderedSeq: null,
               arrivals: [], renderLog: [], connects: 0};

function setConn(state, text) {
  document.body.dataset.conn = state;
  const el = document.getElementById("conn");
  el.textContent = text || state;
  el.dataset.state = state;
}

/** Send an intent; resolves with its reply (ack, diff, memory) or rejects with its error. */
export function request(intent) {
  return new Promise((resolve, reject) => {
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      reject(new Error("not connected to the Foreman: retrying"));
      return;
    }
    const id = "w" + nextId++;
    pending.set(id, {resolve, reject});
    ws.send(JSON.stringify({...intent, id}));
  });
}

function schedule() {
  if (!frame) frame = requestAnimationFrame(draw);
}

function draw() {
  frame = 0;
  const t0 = performance.now();
  render(store, store.takeDirty(), {request, notify: notifyDecision});
  const t1 = performance.now();
  stats.renderMs += t1 - t0;
  stats.renders += 1;
  stats.renderedSeq = store.seq;
  document.body.dataset.seq = String(store.seq);
  if (stats.firstRenderAt === null && store.status) stats.firstRenderAt = t1;
  if (store.status) primed = true;
  if (stats.renderLog.length < 5000) stats.renderLog.push([store.seq, t1]);
}

function onMessage(ev) {
  const t0 = performance.now();
  let msg;
  try {
    msg = JSON.parse(ev.data);
  } catch {
    return;
  }
  if (msg.type === "ack" || msg.type === "error" || msg.type === "diff" || msg.type === "memory") {
    const waiter = pending.get(msg.id);
    if (msg.type === "error" && msg.code === "unauthorized") needLogin();
    if (waiter) {
      pending.delete(msg.id);
      if (msg.type === "error") waiter.reject(new Error(msg.message));
      else waiter.resolve(msg);
    } else if (msg.type === "error") {
      showToast(msg.message);
    }
    return;
  }
  if (store.apply(msg)) {
    stats.applied += msg.type === "batch" ? msg.messages.length : 1;
    if (stats.arrivals.length < 5000) stats.arrivals.push([store.seq, t0]);
    stats.applyMs += performance.now() - t0;
    schedule();
  }
}

function connect() {
  setConn(failures ? "reconnecting" : "connecting");
  const sock = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`);
  ws = sock;
  sock.onopen = () => {
    sock.send(JSON.stringify({type: "hello", protocol: 1, client: "foreman-web/1", since: store.seq,
                              capabilities: ["batch"]}));
    failures = 0;
    backoff = 250;
    stats.connects += 1;
    setConn("live");
  };
  sock.onmessage = onMessage;
  sock.onclose = () => {
    if (ws !== sock) return;
    for (const w of pending.values()) w.reject(new Error("the connection to the Foreman closed"));
    pending.clear();
    failures += 1;
    setConn("reconnecting", "reconnecting…");
    if (failures % 4 === 0) checkLogin();
    setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, 3000);
  };
}

async function checkLogin() {
  try {
    const r = await fetch("/store.js", {cache: "no-store", credentials: "same-origin"});
    if (r.status === 401) needLogin();
  } catch {
    // the daemon is down: keep retrying
  }
}

function needLogin() {
  const b = document.getElementById("banner");
  b.hidden = false;
  b.textContent = "This browser is no longer logged in: run `foreman web` and open the link it prints.";
}

// ------------------------------------------------------------------ notifications (opt-in)
// Decisions open at the page's first render are not news; one that opens later (or while the
// page was away, seen in a catch-up) is.
const seenDecisions = new Set();
let primed = false;

function notifyDecision(decision) {
  if (seenDecisions.has(decision.id)) return;
  seenDecisions.add(decision.id);
  if (!primed || localStorage.getItem("foreman.notify") !== "on") return;
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  const n = new Notification(`${decision.askedBy} needs you`, {body: decision.prompt, tag: decision.id});
  n.onclick = () => { window.focus(); location.hash = "#inbox"; };
}

function setupNotify() {
  const btn = document.getElementById("notify");
  const paint = () => {
    const on = localStorage.getItem("foreman.notify") === "on";
    btn.textContent = on ? "Notifications on" : "Notify me";
    btn.setAttribute("aria-pressed", String(on));
  };
  btn.addEventListener("click", async () => {
    if (localStorage.getItem("foreman.notify") === "on") {
      localStorage.setItem("foreman.notify", "off");
    } else if ("Notification" in window) {
      const answer = await Notification.requestPermission();
      localStorage.setItem("foreman.notify", answer === "granted" ? "on" : "off");
      if (answer !== "granted") showToast("The browser did not allow notifications.");
    }
    paint();
  });
  paint();
}

window.foremanWeb = {store, stats, request};
setupNotify();
connect();
