// The page's mirror of the world, kept as protocol v1 says: a snapshot replaces it, an upsert
// replaces one entity by its key, an append adds one item. apply() returns nothing; it records
// what changed in `dirty` (kind -> Set of keys, or "all") for the next render.
export const FEED_KEEP = 300;

export class Store {
  constructor() {
    this.seq = null;
    this.clear();
  }

  clear() {
    this.status = null;
    this.agents = new Map();
    this.goals = new Map();
    this.tasks = new Map();
    this.decisions = new Map();
    this.repos = new Map();
    this.feed = [];
    this.messages = [];
    this.dirty = {all: true};
  }

  mark(kind, key) {
    if (this.dirty.all) return;
    const set = this.dirty[kind] || (this.dirty[kind] = new Set());
    set.add(key);
  }

  /** Apply one server message; returns true when it was a state message. */
  apply(msg) {
    switch (msg.type) {
      case "batch":
        for (const m of msg.messages) this.apply(m);
        return true;
      case "snapshot":
        this.clear();
        this.status = msg.status;
        for (const a of msg.agents) this.agents.set(a.name, a);
        for (const g of msg.goals) this.goals.set(g.id, g);
        for (const t of msg.tasks) this.tasks.set(t.id, t);
        for (const d of msg.decisions) this.decisions.set(d.id, d);
        for (const r of msg.repos) this.repos.set(r.id, r);
        this.feed = msg.feed.slice(-FEED_KEEP);
        this.messages = msg.messages.slice(-FEED_KEEP);
        break;
      case "agent.upsert": this.agents.set(msg.agent.name, msg.agent); this.mark("agent", msg.agent.name); break;
      case "goal.upsert": this.goals.set(msg.goal.id, msg.goal); this.mark("goal", msg.goal.id); break;
      case "task.upsert": this.tasks.set(msg.task.id, msg.task); this.mark("task", msg.task.id); break;
      case "decision.upsert": this.decisions.set(msg.decision.id, msg.decision); this.mark("decision", msg.decision.id); break;
      case "repo.upsert": this.repos.set(msg.repo.id, msg.repo); this.mark("repo", msg.repo.id); break;
      case "feed.append":
        this.feed.push(msg.item);
        if (this.feed.length > FEED_KEEP) this.feed.shift();
        this.mark("feed", msg.item.id);
        break;
      case "message.append":
        this.messages.push(msg.message);
        if (this.messages.length > FEED_KEEP) this.messages.shift();
        this.mark("message", msg.message.id);
        break;
      case "foreman.status": this.status = msg; this.mark("status", 0); break;
      case "log.append": break; // (agents' logs are the terminal client's; the page shows activities)
      default: return false;
    }
    if (typeof msg.seq === "number") this.seq = msg.seq;
    return true;
  }

  /** Take what changed since the last call. */
  takeDirty() {
    const d = this.dirty;
    this.dirty = {};
    return d;
  }

  openDecisions() {
    return [...this.decisions.values()].filter((d) => d.status === "open").sort((a, b) => a.createdAt - b.createdAt);
  }
}
