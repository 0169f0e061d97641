#!/usr/bin/env python3
"""A fake ``claude`` CLI: the CLI side of claude-agent-sdk's stream-json control protocol.

Standard library only. Scripted by the JSON scenario file named in ``FAKE_CLAUDE_SCENARIO``
(see ``tests/claude/fake_claude/__init__.py`` for the format). Every frame in both directions
and every notable event is appended to the scenario's ``log`` file as one JSON line, so tests
can assert on the wire.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid

READ_TOOLS = {"Read", "Grep", "Glob", "LS", "NotebookRead"}
BUILTIN_TOOLS = ["Task", "Bash", "Glob", "Grep", "LS", "Read", "Edit", "MultiEdit", "Write", "NotebookEdit",
                 "WebFetch", "WebSearch", "TodoWrite", "AskUserQuestion"]
VERSION = "2.1.332"
REAL_TOOLS = {"Bash", "Write", "Edit"}


class Interrupted(Exception):
    """The SDK interrupted the running turn."""


class Fake:
    def __init__(self, scenario: dict, argv: list[str]) -> None:
        self.scenario = scenario
        self.argv = argv
        self.log_path = scenario.get("log")
        self.out_lock = threading.Lock()
        self.log_lock = threading.Lock()
        self.responses: dict[str, dict] = {}
        self.response_events: dict[str, threading.Event] = {}
        self.initialized = threading.Event()
        self.interrupt = threading.Event()
        self.eof = threading.Event()
        self.prompts: queue.Queue = queue.Queue()
        self.hooks: dict = {}
        self.req_counter = 0
        self.cost = 0.0
        self.run = self._pick_run()
        self.options = self._parse_argv(argv)
        self.session_id = None
        self.mcp_servers = self._sdk_servers()
        self.mcp_ready = False
        self.mcp_id = 0
        self.max_turns = int(self.options.get("--max-turns") or 0)
        self.vars: dict[str, str] = {}

    # ------------------------------------------------------------------ plumbing
    def log(self, kind: str, data) -> None:
        if not self.log_path:
            return
        line = json.dumps({"t": time.time(), "pid": os.getpid(), "kind": kind, "data": data})
        with self.log_lock, open(self.log_path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def send(self, frame: dict) -> None:
        self.log("out", frame)
        data = json.dumps(frame) + "\n"
        with self.out_lock:
            sys.stdout.write(data)
            sys.stdout.flush()

    def _queue(self) -> str | None:
        """The queue this process plays from (``queues``): the local part of ``queue_env``."""
        queues = self.scenario.get("queues")
        if not queues:
            return None
        value = os.environ.get(self.scenario.get("queue_env", "GIT_AUTHOR_EMAIL"), "")
        name = value.split("@", 1)[0]
        return name if name in queues else None

    def _pick_run(self) -> dict:
        self.queue = self._queue()
        runs = (self.scenario["queues"][self.queue] if self.queue else self.scenario.get("runs")) or [{}]
        counter = f"count:{self.queue}" if self.queue else "count"
        state_path = self.scenario.get("state")
        index = 0
        if state_path:
            import fcntl

            with open(state_path, "a+", encoding="utf-8") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                fh.seek(0)
                text = fh.read()
                state = json.loads(text) if text.strip() else {}
                index = state.get(counter, 0)
                state[counter] = index + 1
                fh.seek(0)
                fh.truncate()
                fh.write(json.dumps(state))
        self.run_index = index
        if index >= len(runs):
            return runs[-1] if self.scenario.get("repeat_last") else {"missing": True}
        return runs[index]

    def _sessions(self, add: str | None = None) -> list[str]:
        state_path = self.scenario.get("state")
        known = list(self.scenario.get("sessions") or [])
        if not state_path:
            return known
        import fcntl

        with open(state_path, "a+", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            fh.seek(0)
            text = fh.read()
            state = json.loads(text) if text.strip() else {}
            if add and add not in state.setdefault("sessions", []):
                state["sessions"].append(add)
                fh.seek(0)
                fh.truncate()
                fh.write(json.dumps(state))
        return known + state.get("sessions", [])

    @staticmethod
    def _parse_argv(argv: list[str]) -> dict:
        opts: dict = {}
        i = 0
        while i < len(argv):
            arg = argv[i]
            if arg.startswith("--") and "=" in arg:
                key, value = arg.split("=", 1)
                opts[key] = value
            elif arg.startswith("--"):
                if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                    opts[arg] = argv[i + 1]
                    i += 1
                else:
                    opts[arg] = True
            i += 1
        return opts

    def _sdk_servers(self) -> list[str]:
        raw = self.options.get("--mcp-config")
        if not isinstance(raw, str):
            return []
        config = json.loads(raw).get("mcpServers", {})
        return [name for name, spec in config.items() if spec.get("type") == "sdk"]

    # ------------------------------------------------------------------ stdin
    def reader(self) -> None:
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            frame = json.loads(line)
            self.log("in", frame)
            kind = frame.get("type")
            if kind == "control_response":
                resp = frame["response"]
                rid = resp.get("request_id")
                self.responses[rid] = resp
                event = self.response_events.get(rid)
                if event:
                    event.set()
            elif kind == "control_request":
                self.on_control(frame["request_id"], frame["request"])
            elif kind == "user":
                self.prompts.put(frame)
        self.log("event", {"eof": True})
        self.eof.set()
        self.prompts.put(None)

    def on_control(self, rid: str, req: dict) -> None:
        sub = req.get("subtype")
        if sub == "initialize":
            self.hooks = req.get("hooks") or {}
            self.reply(rid, {"commands": [], "agents": [], "output_style": "default",
                             "available_output_styles": ["default"],
                             "models": [{"value": "claude-fake-1", "displayName": "Fake", "description": "offline"}],
                             "account": {"apiProvider": "firstParty", "apiKeySource": "none"}, "pid": os.getpid(),
                             "claude_code_version": VERSION, "current_model": self.model(),
                             "current_permission_mode": "default", "hook_on_failure_supported": True,
                             "hooks_applied": True})
            self.initialized.set()
        elif sub == "interrupt":
            self.log("event", {"interrupt": True})
            if not self.run.get("ignore_interrupt"):
                self.interrupt.set()
            if self.run.get("ack_interrupt", True):
                self.reply(rid, {})
        elif sub == "mcp_status":
            self.reply(rid, {"mcpServers": [{"name": n, "status": "connected"} for n in self.mcp_servers]})
        else:
            self.reply(rid, {})

    def reply(self, rid: str, response: dict) -> None:
        self.send({"type": "control_response",
                   "response": {"subtype": "success", "request_id": rid, "response": response}})

    def request(self, payload: dict) -> dict:
        """Send a control request to the SDK and wait for its answer (or an interrupt)."""
        self.req_counter += 1
        rid = f"cli_req_{self.req_counter}_{uuid.uuid4().hex[:8]}"
        event = threading.Event()
        self.response_events[rid] = event
        self.send({"type": "control_request", "request_id": rid, "request": payload})
        while not event.wait(0.01):
            if self.interrupt.is_set():
                self.send({"type": "control_cancel_request", "request_id": rid})
                raise Interrupted()
            if self.eof.is_set() and rid not in self.responses:
                raise Interrupted()
        resp = self.responses.pop(rid)
        if resp.get("subtype") == "error":
            return {"__error__": resp.get("error", "")}
        return resp.get("response") or {}

    # ------------------------------------------------------------------ model helpers
    def model(self) -> str:
        return self.options.get("--model") or "claude-fake-1"

    def assistant(self, content: list, **extra) -> None:
        message = {"id": f"msg_fake_{uuid.uuid4().hex[:12]}", "type": "message", "role": "assistant",
                   "model": self.model(), "content": content, "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 5}}
        frame = {"type": "assistant", "message": message, "parent_tool_use_id": None,
                 "session_id": self.session_id, "uuid": str(uuid.uuid4())}
        frame.update(extra)
        self.send(frame)

    def tool_result(self, tool_use_id: str, content, is_error: bool = False) -> None:
        self.send({"type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": tool_use_id, "type": "tool_result", "content": content, "is_error": is_error}]},
            "parent_tool_use_id": None, "session_id": self.session_id, "uuid": str(uuid.uuid4()),
            "tool_use_result": {"content": content}})

    def result(self, turn: dict, **fields) -> None:
        frame = {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 12,
                 "duration_api_ms": 6, "num_turns": turn["num_turns"], "result": turn["final_text"],
                 "stop_reason": "end_turn", "session_id": self.session_id, "total_cost_usd": round(self.cost, 6),
                 "usage": {"input_tokens": 10, "output_tokens": 5}, "modelUsage": {},
                 "permission_denials": turn["denials"], "terminal_reason": "completed",
                 "uuid": str(uuid.uuid4())}
        frame.update(fields)
        self.send(frame)
        self.send({"type": "system", "subtype": "session_state_changed", "state": "idle", "sdk_host_only": True,
                   "session_id": self.session_id, "uuid": str(uuid.uuid4())})

    # ------------------------------------------------------------------ permission and tools
    def hook_decision(self, tool: str, tool_input: dict, tool_use_id: str) -> dict | None:
        if self.run.get("hooks") is False:
            return None
        import re

        for matcher in self.hooks.get("PreToolUse", []):
            pattern = matcher.get("matcher")
            if pattern and not re.fullmatch(pattern, tool):
                continue
            for cb in matcher.get("hookCallbackIds", []):
                out = self.request({"subtype": "hook_callback", "callback_id": cb, "tool_use_id": tool_use_id,
                                    "input": {"session_id": self.session_id, "transcript_path": "/dev/null",
                                              "cwd": os.getcwd(), "permission_mode": "default",
                                              "hook_event_name": "PreToolUse", "tool_name": tool,
                                              "tool_input": tool_input, "tool_use_id": tool_use_id}})
                specific = out.get("hookSpecificOutput") or {}
                decision = specific.get("permissionDecision")
                if decision in ("allow", "deny"):  # the real CLI runs an allowed call with updatedInput
                    updated = {"updatedInput": specific["updatedInput"]} if "updatedInput" in specific else {}
                    return {"behavior": decision, "message": specific.get("permissionDecisionReason", ""), **updated}
        return None

    def permission(self, tool: str, tool_input: dict, tool_use_id: str) -> dict:
        decided = self.hook_decision(tool, tool_input, tool_use_id)
        if decided is not None:
            self.log("event", {"permission": tool, "via": "hook", **decided})
            return decided
        if tool in READ_TOOLS and self.run.get("auto_allow_reads", True):
            self.log("event", {"permission": tool, "via": "auto", "behavior": "allow"})
            return {"behavior": "allow", "updatedInput": tool_input}
        if self.options.get("--permission-prompt-tool") != "stdio":
            return {"behavior": "deny", "message": "no permission prompt tool"}
        answer = self.request({"subtype": "can_use_tool", "tool_name": tool, "display_name": tool,
                               "input": tool_input, "tool_use_id": tool_use_id,
                               "title": f"Claude wants to use {tool}", "description": "",
                               "permission_suggestions": [], "blocked_path": None})
        if "__error__" in answer:
            answer = {"behavior": "deny", "message": answer["__error__"]}
        self.log("event", {"permission": tool, "via": "can_use_tool", **answer})
        return answer

    def mcp(self, server: str, method: str, params: dict | None = None, notify: bool = False) -> dict:
        message: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            message["id"] = self.mcp_id
            self.mcp_id += 1
        out = self.request({"subtype": "mcp_message", "server_name": server, "message": message})
        return out.get("mcp_response") or {}

    def mcp_handshake(self) -> None:
        if self.mcp_ready:
            return
        self.mcp_ready = True
        for server in self.mcp_servers:
            self.mcp(server, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "claude-code", "version": VERSION}})
            self.mcp(server, "notifications/initialized", notify=True)
            listed = self.mcp(server, "tools/list", {})
            self.log("event", {"mcp_tools": server, "tools": listed.get("result", {}).get("tools", [])})

    def prompt_vars(self, frame: dict) -> None:
        """Fill ``self.vars`` from the prompt with the ``prompt_vars`` regexes (their first group)."""
        import re

        content = (frame.get("message") or {}).get("content", "")
        text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content
                                                                 if isinstance(c, dict))
        patterns = {**self.scenario.get("prompt_vars", {}), **self.run.get("prompt_vars", {})}
        for name, pattern in patterns.items():
            found = re.search(pattern, text)
            if found:
                self.vars[name] = found.group(1)
        if self.vars:
            self._session_vars(self.vars)

    def _session_vars(self, update: dict | None = None) -> dict:
        """The prompt variables of this session (kept in the state file, so a resume knows them)."""
        state_path = self.scenario.get("state")
        if not state_path:
            return dict(update or {})
        import fcntl

        with open(state_path, "a+", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            fh.seek(0)
            text = fh.read()
            state = json.loads(text) if text.strip() else {}
            known = state.setdefault("vars", {}).setdefault(self.session_id, {})
            if update:
                known.update(update)
                fh.seek(0)
                fh.truncate()
                fh.write(json.dumps(state))
        return dict(known)

    def substitute(self, value):
        """Replace ``${name}`` in the strings of a tool input by the prompt's variables."""
        if isinstance(value, str):
            for name, found in self.vars.items():
                value = value.replace("${" + name + "}", found)
            return value
        if isinstance(value, dict):
            return {k: self.substitute(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.substitute(v) for v in value]
        return value

    def tool_step(self, step: dict, turn: dict) -> None:
        name = step["tool"] if "tool" in step else f"mcp__{step.get('server', 'agentcraft')}__{step['mcp']}"
        tool_input = self.substitute(step.get("input", step.get("args", {})))
        if self.max_turns and turn["num_turns"] >= self.max_turns:
            raise MaxTurns()
        turn["num_turns"] += 1
        tool_use_id = f"toolu_fake_{uuid.uuid4().hex[:12]}"
        self.assistant([{"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input}])
        answer = self.permission(name, tool_input, tool_use_id)
        if answer.get("behavior") != "allow":
            message = answer.get("message", "denied")
            turn["denials"].append({"tool_name": name, "tool_use_id": tool_use_id, "tool_input": tool_input})
            self.tool_result(tool_use_id, message, is_error=True)
            if answer.get("interrupt"):
                raise Interrupted()
            return
        tool_input = answer.get("updatedInput", tool_input)
        if name.startswith("mcp__"):
            _, server, tool = name.split("__", 2)
            response = self.mcp(server, "tools/call", {"name": tool, "arguments": tool_input,
                                                       "_meta": {"claudecode/toolUseId": tool_use_id}})
            res = response.get("result") or {}
            text = "".join(c.get("text", "") for c in res.get("content", []) if isinstance(c, dict))
            self.log("event", {"mcp_result": tool, "text": text, "is_error": bool(res.get("isError"))})
            self.tool_result(tool_use_id, text, is_error=bool(res.get("isError")))
        elif self.run.get("real_tools", self.scenario.get("real_tools", False)) and name in REAL_TOOLS:
            text, is_error = self.real_tool(name, tool_input, step)
            self.tool_result(tool_use_id, text, is_error=is_error)
        else:
            self.tool_result(tool_use_id, step.get("output", "ok"))

    def real_tool(self, name: str, tool_input: dict, step: dict) -> tuple[str, bool]:
        """Do what the real CLI does for an allowed Write/Edit/Bash call; return (result text, is_error)."""
        if name == "Bash":
            command = tool_input.get("command", "")
            try:
                done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False,
                                      timeout=float(step.get("timeout", 120)))
                code, text = done.returncode, (done.stdout + done.stderr).strip()
            except subprocess.TimeoutExpired:
                code, text = 124, "Command timed out"
            self.log("event", {"ran": command, "exit": code, "output": text[-2000:]})
            return (text or "(no output)") if code == 0 else f"Exit code {code}\n{text}", code != 0
        path = tool_input.get("file_path", "")
        path = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
        if name == "Write":
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(tool_input.get("content", ""))
            self.log("event", {"wrote": path})
            return f"File created successfully at: {path}", False
        try:  # Edit
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            return f"<tool_use_error>{exc}</tool_use_error>", True
        old, new = tool_input.get("old_string", ""), tool_input.get("new_string", "")
        if old not in text:
            return "<tool_use_error>String to replace not found in file.</tool_use_error>", True
        text = text.replace(old, new) if tool_input.get("replace_all") else text.replace(old, new, 1)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        self.log("event", {"edited": path})
        return f"The file {path} has been updated.", False

    # ------------------------------------------------------------------ processes
    def spawn(self, spec: dict) -> None:
        trap = 'trap "" TERM; ' if spec.get("ignore_sigterm") else ""
        if spec.get("orphan"):
            out = subprocess.run(["sh", "-c", f"{trap}sleep 600 </dev/null >/dev/null 2>&1 & echo $!"],
                                 capture_output=True, text=True, check=True)
            pid = int(out.stdout.strip())
        else:
            proc = subprocess.Popen(["sh", "-c", f"{trap}exec sleep 600"], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            pid = proc.pid
        self.log("event", {"spawned": pid, "orphan": bool(spec.get("orphan"))})
        self.record_pids([pid])

    def record_pids(self, pids: list[int]) -> None:
        path = self.run.get("pids_file")
        if not path:
            return
        with open(path, "a", encoding="utf-8") as fh:
            fh.writelines(f"{pid}\n" for pid in pids)

    @staticmethod
    def alive(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
            return state not in ("Z", "X")
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return False

    # ------------------------------------------------------------------ main flow
    def startup(self) -> None:
        self.log("start", {"argv": self.argv, "pid": os.getpid(), "ppid": os.getppid(), "sid": os.getsid(0),
                           "pgid": os.getpgid(0), "cwd": os.getcwd(), "run": self.run_index, "queue": self.queue,
                           "env": {k: ("<set>" if "KEY" in k or "TOKEN" in k else v) for k, v in os.environ.items()
                                   if k.startswith(("CLAUDE", "ANTHROPIC", "GIT_", "FOREMAN", "FAKE_"))}})
        check = self.run.get("check_dead")
        if check:
            with open(check, "a+", encoding="utf-8") as fh:
                fh.seek(0)
                pids = [int(p) for p in fh.read().split()]
            self.log("event", {"check_dead": pids, "alive": [p for p in pids if self.alive(p)]})
        if self.run.get("ignore_sigterm"):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        self.record_pids([os.getpid()] if self.run.get("pids_file") else [])

    def main(self) -> int:
        self.startup()
        if self.run.get("missing"):
            sys.stderr.write("fake claude: no run left in the scenario\n")
            return 2
        if self.run.get("crash_at_start") is not None:
            return int(self.run["crash_at_start"])
        for spec in self.run.get("spawn_at_start", []):
            self.spawn(spec)
        if self.run.get("hang_at_start"):
            self.log("event", {"hang_at_start": True})
            while True:
                time.sleep(1)
        resume = self.options.get("--resume")
        if isinstance(resume, str):
            # like the real CLI: an unknown id is an error result and exit 1, before the handshake
            expect = self.run.get("expect_resume")
            if resume not in self._sessions() and not self.run.get("accept_any_resume"):
                self.session_id = str(uuid.uuid4())
                turn = {"num_turns": 0, "final_text": None, "denials": []}
                self.result(turn, subtype="error_during_execution", is_error=True, num_turns=0,
                            errors=[f"No conversation found with session ID: {resume}"], terminal_reason=None)
                sys.stderr.write(f"No conversation found with session ID: {resume}\n")  # the real CLI does both
                return 1
            if expect is not None and expect != resume:
                sys.stderr.write(f"fake claude: expected --resume={expect}, got {resume}\n")
                return 7
            self.session_id = resume
            self.vars = self._session_vars()
        else:
            self.session_id = self.run.get("session_id") or str(uuid.uuid4())
        threading.Thread(target=self.reader, daemon=True).start()
        if not self.initialized.wait(30):
            return 3
        self._sessions(add=self.session_id)
        for turn_steps in self.run.get("turns", [[{"text": "done"}]]):
            prompt = self.prompts.get()
            if prompt is None:
                return self.after_eof()
            self.prompt_vars(prompt)
            code = self.run_turn(turn_steps)
            if code is not None:
                return code
        while True:  # more prompts than scripted turns: answer briefly
            prompt = self.prompts.get()
            if prompt is None:
                return self.after_eof()
            code = self.run_turn([{"text": "nothing scripted"}])
            if code is not None:
                return code

    def after_eof(self) -> int:
        if self.run.get("ignore_eof"):
            while True:
                time.sleep(1)
        return 0

    def run_turn(self, steps: list[dict]) -> int | None:
        self.interrupt.clear()
        self.send({"type": "system", "subtype": "session_state_changed", "state": "running",
                   "sdk_host_only": True, "session_id": self.session_id, "uuid": str(uuid.uuid4())})
        self.mcp_handshake()
        tools = BUILTIN_TOOLS + [f"mcp__{s}__{t}" for s in self.mcp_servers for t in ("*",)]
        self.send({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": self.session_id,
                   "tools": tools, "mcp_servers": [{"name": s, "status": "connected", "source": "sdk"}
                                                   for s in self.mcp_servers],
                   "model": self.model(), "permissionMode": "default", "slash_commands": [], "apiKeySource": "none",
                   "claude_code_version": VERSION, "output_style": "default", "agents": [], "skills": [],
                   "plugins": [], "uuid": str(uuid.uuid4())})
        turn = {"num_turns": 1, "final_text": None, "denials": []}
        self.cost += float(self.run.get("cost", 0.0))
        try:
            for step in steps:
                code = self.step(step, turn)
                if code is not None:
                    return code
                if turn.get("ended"):
                    return None
        except Interrupted:
            self.result(turn, subtype="error_during_execution", is_error=True, terminal_reason="aborted_streaming",
                        result=None)
            return None
        except MaxTurns:
            self.result(turn, subtype="error_max_turns", is_error=True, terminal_reason="max_turns",
                        result=None, num_turns=self.max_turns)
            return None
        self.result(turn)
        return None

    def step(self, step: dict, turn: dict) -> int | None:
        if self.interrupt.is_set():
            raise Interrupted()
        if "text" in step:
            self.assistant([{"type": "text", "text": step["text"]}])
            turn["final_text"] = step["text"]
        elif "tool" in step or "mcp" in step:
            self.tool_step(step, turn)
        elif "sleep" in step:
            deadline = time.time() + float(step["sleep"])
            while time.time() < deadline:
                if self.interrupt.wait(0.01):
                    raise Interrupted()
        elif "hang" in step:
            while not self.interrupt.wait(0.05):
                if self.eof.is_set() and not self.run.get("ignore_eof"):
                    return 0
            raise Interrupted()
        elif "spawn" in step:
            self.spawn(step["spawn"])
        elif "crash" in step:
            sys.stdout.flush()
            sys.stderr.write(f"fake claude: crashed with code {step['crash']}\n")
            sys.stderr.flush()
            self.log("event", {"crash": step["crash"]})
            os._exit(int(step["crash"]))
        elif "garbage" in step:
            with self.out_lock:
                sys.stdout.write(step["garbage"] + "\n")
                sys.stdout.flush()
        elif "api_error" in step:
            err = step["api_error"]
            status = int(err.get("status", 529))
            text = f"API Error: {status} {err.get('message', 'Overloaded')}"
            self.assistant([{"type": "text", "text": text}], error=err.get("kind", "server_error"))
            self.result(turn, is_error=True, result=text, api_error_status=status, terminal_reason="api_error")
            turn["ended"] = True
            if err.get("exit") is not None:
                return int(err["exit"])
        elif "result" in step:
            fields = dict(step["result"])
            code = fields.pop("exit", None)
            self.result(turn, **fields)
            turn["ended"] = True
            if code is not None:
                return int(code)
        else:
            raise SystemExit(f"fake claude: unknown step {step}")
        return None


class MaxTurns(Exception):
    """The turn used up --max-turns."""


def main() -> int:
    path = os.environ.get("FAKE_CLAUDE_SCENARIO")
    argv = sys.argv[1:]
    if argv[:1] in (["--version"], ["-v"]):
        print(f"{VERSION} (Claude Code)")
        return 0
    scenario = {}
    if path:
        with open(path, encoding="utf-8") as fh:
            scenario = json.load(fh)
    return Fake(scenario, argv).main()


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)
