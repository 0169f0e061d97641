"""The generated protocol docs: up to date in the repository, deterministic, valid examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import protocol
from foreman.protodoc import DOCS_DIR, MD_NAME, SCHEMA_NAME, build_schema, docs_main, example, render


def test_committed_docs_are_up_to_date(capsys: pytest.CaptureFixture[str]) -> None:
    """Fails when docs/protocol.md or docs/protocol.schema.json is stale: run `foreman docs`."""
    assert docs_main(check=True, out=None) == 0, capsys.readouterr().err
    assert (DOCS_DIR / MD_NAME).exists() and (DOCS_DIR / SCHEMA_NAME).exists()


def test_check_names_the_stale_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert docs_main(check=True, out=tmp_path) == 1  # missing counts as stale
    assert docs_main(check=False, out=tmp_path) == 0
    assert docs_main(check=True, out=tmp_path) == 0
    capsys.readouterr()
    md = tmp_path / MD_NAME
    md.write_text(md.read_text().replace("| `to` |", "| `recipient` |", 1))
    assert docs_main(check=True, out=tmp_path) == 1
    err = capsys.readouterr().err
    assert str(md) in err and SCHEMA_NAME not in err


def test_output_is_deterministic() -> None:
    assert render() == render()


def test_every_message_is_documented_with_a_valid_example() -> None:
    schema = build_schema()
    text = render()[MD_NAME]
    for union, adapter in ((protocol.ClientMessage, protocol.CLIENT_ADAPTER), (protocol.ServerMessage, protocol.SERVER_ADAPTER)):
        import typing

        for model in typing.get_args(typing.get_args(union)[0]):
            tag = model.model_fields["type"].default
            assert f"### `{tag}`" in text
            data = example(model, schema["$defs"])
            assert type(adapter.validate_python(data)) is model
            assert json.dumps(data, indent=2, ensure_ascii=False) in text


def test_schema_has_both_unions_and_requires_type() -> None:
    schema = json.loads(render()[SCHEMA_NAME])
    defs = schema["$defs"]
    assert defs["ClientMessage"]["discriminator"]["propertyName"] == "type"
    assert set(defs["ClientMessage"]["discriminator"]["mapping"]) >= {"hello", "goal.submit", "message.send", "memory.read"}
    assert set(defs["ServerMessage"]["discriminator"]["mapping"]) >= {"snapshot", "ack", "error", "task.upsert"}
    assert defs["MessageSend"]["required"] == ["type", "to", "text"]
    assert "from" in defs["Message"]["properties"] and "createdAt" in defs["Goal"]["properties"]
    assert set(defs["Agent"]["required"]) == set(defs["Agent"]["properties"])  # the server sends every field
