"""``foreman decode`` and ``foreman replay`` through their entry functions, on real files."""

from __future__ import annotations

import json
from pathlib import Path

from foreman.backends.local.cli import decode_main, replay_main
from foreman.backends.local.nativecodec import ToolCall, decode_tool_calls
from foreman.backends.local.textcodec import decode
from foreman.backends.local.trace import TraceRecorder, read_traces

from ._corpus import CORPUS

EDIT_REPLY = "calc.py\n>>>>>>> SEARCH\nreturn a - b\n=======\nreturn a + b\n>>>>>>> REPLACE\nRUN pytest -q\n"


def test_decode_json_prints_actions_repairs_and_reason(tmp_path: Path, capsys) -> None:
    reply = tmp_path / "reply.txt"
    reply.write_bytes(EDIT_REPLY.replace("\n", "\r\n").encode())
    assert decode_main([str(reply), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {
        "actions": [
            {"kind": "edit", "path": "calc.py", "search": "return a - b", "replace": "return a + b"},
            {"kind": "run", "command": "pytest -q"},
        ],
        "repairs": ["crlf", "marker_reversed"],
        "dropped": [],
        "reason": None,
    }


def test_decode_length_cut_reports_the_reason(tmp_path: Path, capsys) -> None:
    reply = tmp_path / "cut.txt"
    reply.write_text("READ calc.py\nRUN pyt", encoding="utf-8")
    assert decode_main([str(reply), "--finish-reason", "length", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [a["kind"] for a in out["actions"]] == ["read"] and out["dropped"] == ["truncated_action"]
    reply.write_text("RUN pyt", encoding="utf-8")
    assert decode_main([str(reply), "--finish-reason", "length"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("no action: truncated")


def test_decode_human_output_shows_canonical_actions(tmp_path: Path, capsys) -> None:
    reply = tmp_path / "reply.txt"
    reply.write_text(EDIT_REPLY, encoding="utf-8")
    assert decode_main([str(reply)]) == 0
    assert capsys.readouterr().out == (
        "2 actions\n"
        "  calc.py\n  <<<<<<< SEARCH\n  return a - b\n  =======\n  return a + b\n  >>>>>>> REPLACE\n"
        "  RUN pytest -q\n"
        "repairs: marker_reversed\n"
    )


def test_decode_every_corpus_file_through_the_cli(capsys) -> None:
    for path in sorted(CORPUS.glob("*.txt"))[:30]:
        expected = json.loads(path.with_suffix(".expected.json").read_text(encoding="utf-8"))
        argv = [str(path), "--json", "--finish-reason", expected["finish_reason"]]
        if expected.get("role"):
            argv += ["--role", expected["role"]]
        assert decode_main(argv) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["reason"] == expected["reason"], path.name
        assert len(out["actions"]) == len(expected["actions"]), path.name


def test_decode_errors(tmp_path: Path, capsys) -> None:
    assert decode_main([str(tmp_path / "missing.txt")]) == 1
    assert "cannot read" in capsys.readouterr().err
    assert decode_main([]) == 2
    assert decode_main(["x", "--finish-reason", "maybe"]) == 2


def _record_session(directory: Path) -> None:
    recorder = TraceRecorder(directory / "kit-t1.jsonl")
    replies = [
        ("READ calc.py\n", "stop"),
        (EDIT_REPLY, "stop"),
        ("<think>\nhmm\n</think>\n", "stop"),
        ("", "stop"),
        ("RUN pyt", "length"),
        ('{"tool": "shell", "content": "pytest"}', "stop"),
    ]
    for turn, (reply, finish) in enumerate(replies, 1):
        recorder.record(reply, decode(reply, finish), finish_reason=finish, now=1000.0 + turn,
                        agent="kit", role="worker", turn=turn)
    native = TraceRecorder(directory / "wren-t2.jsonl")
    calls = [ToolCall("read_file", '{"path": "a.py"}', "c1")]
    native.record("", decode_tool_calls(calls), finish_reason="tool_calls", now=2000.0, protocol="native",
                  tool_calls=calls, agent="wren", role="worker", turn=1)


def test_replay_prints_stable_figures(tmp_path: Path, capsys) -> None:
    _record_session(tmp_path)
    (tmp_path / "notes.txt").write_text("not a trace", encoding="utf-8")
    assert replay_main([str(tmp_path)]) == 0
    first = capsys.readouterr().out
    assert first == (
        "4 of 7 replies converted (57.14%), 4 repaired\n"
        "repairs applied\n"
        "  json_decision        1\n"
        "  marker_reversed      1\n"
        "  router_json          1\n"
        "  think_block          1\n"
        "  tool_alias           1\n"
        "no action\n"
        "  empty                1\n"
        "  only_thinking        1\n"
        "  truncated            1\n"
        "dropped\n"
        "  truncated_action     1\n"
        "changed since recording: 0\n"
    )
    assert replay_main([str(tmp_path)]) == 0
    assert capsys.readouterr().out == first


def test_replay_counts_changes_and_unreadable_lines(tmp_path: Path, capsys) -> None:
    _record_session(tmp_path)
    path = tmp_path / "kit-t1.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[0]["actions"] = []  # as if an older decoder had missed it
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n{broken\n", encoding="utf-8")
    assert replay_main([str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["total"] == 7 and report["converted"] == 4 and report["changed"] == 1
    assert report["bad_lines"] == 1 and report["files"] == 2
    assert report["rate"] == 57.14


def test_trace_records_round_trip_byte_for_byte(tmp_path: Path) -> None:
    weird = "caf\u00e9 \udcff \r\n\t<think>\x00 end"
    TraceRecorder(tmp_path / "t.jsonl").record(weird, decode(weird), finish_reason="stop", now=5.5)
    (record,) = read_traces(tmp_path).records
    assert record.reply == weird and record.time == 5.5 and record.protocol == "text"
    assert (tmp_path / "t.jsonl").read_bytes().isascii()


def test_replay_errors(tmp_path: Path, capsys) -> None:
    assert replay_main([str(tmp_path / "nope")]) == 1
    assert "no traces directory" in capsys.readouterr().err
    assert replay_main([]) == 1
    assert replay_main([], default_dir=tmp_path) == 0
    assert capsys.readouterr().out.startswith("0 of 0 replies converted (0.00%), 0 repaired")


def _guided(directory: Path) -> None:
    """A guided session as the runner writes it: ``<traces>/guided/<session>.jsonl``."""
    good = "```python\n# file: calc.py\nimport math\n\ndef area(r):\n    return math.pi * r * r\n```"
    records = [
        (good, "stop"),
        ("You should multiply pi by r squared.", "stop"),  # prose: nothing to place
        ("```python\ndef area(r)\n    return r\n```", "stop"),  # does not parse
        ("```python\nprint(area(2))\n```", "stop"),  # only a call: placement drops it
        ("```python\n# file: calc.py\ndef area(r):\n    return (", "length"),  # cut off
        ('{"edits": [{"file": "calc.py", "code": "def area(r):\\n    return r * r\\n"}]}', "stop"),  # constrained
    ]
    (directory / "guided").mkdir(parents=True)
    with (directory / "guided" / "juniper-s1.jsonl").open("w", encoding="ascii") as handle:
        for n, (reply, finish) in enumerate(records, 1):
            handle.write(json.dumps({"v": 1, "kind": "guided", "time": 3000.0 + n, "agent": "juniper", "task": "t1",
                                     "attempt": 1, "step": "edit", "temperature": 0.1, "finish_reason": finish,
                                     "reply": reply}) + "\n")
        # a harness step, not a model reply: a test probe (reply "", no finish_reason) is not scored
        handle.write(json.dumps({"v": 1, "kind": "guided", "time": 3100.0, "agent": "juniper", "task": "t1",
                                 "attempt": 1, "step": "asked test probe", "temperature": 0.1, "finish_reason": None,
                                 "reply": "", "outcomes": [["test_a", "passed", ""]]}) + "\n")


def test_replay_scores_guided_replies_with_the_guided_decoder(tmp_path: Path, capsys) -> None:
    _record_session(tmp_path)
    _guided(tmp_path)
    assert replay_main([str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # the agent loop's figures are those of its own replies only
    assert (report["total"], report["converted"], report["files"]) == (7, 4, 3)
    assert report["guided"] == {"total": 6, "converted": 2, "rate": 33.33, "reasons": {
        "no_code_block": 1, "nothing_to_place": 1, "syntax_error": 1, "truncated": 1}}
    assert replay_main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("4 of 7 replies converted (57.14%), 4 repaired\n")
    assert ("guided: 2 of 6 replies held code to place (33.33%)\n"
            "  no_code_block        1\n  nothing_to_place     1\n  syntax_error         1\n  truncated            1\n") in out
