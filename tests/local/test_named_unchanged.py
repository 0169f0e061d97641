"""Two ways a file the task asks to change passed as changed when it was not (issue 13's
1.5B bench run): one fence holding two ``# file:`` headers went whole to the first file, and an
answer that only added an import to the target counted as a change."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.local import named
from foreman.backends.local.answers import blocks_of

TWO_FILES = ("```python\n# file: pkg/search.py\ndef count(notes):\n    return len(notes)\n\n"
             "# file: pkg/cmd.py\nfrom pkg.search import count\n\ndef run(notes):\n    print(count(notes))\n```")


def test_one_fence_with_two_file_headers_is_two_blocks() -> None:
    blocks = blocks_of(TWO_FILES)
    assert [(b.path, b.code.strip().split("\n")[0]) for b in blocks] == [
        ("pkg/search.py", "def count(notes):"), ("pkg/cmd.py", "from pkg.search import count")]
    assert "def run" not in blocks[0].code and "def count" not in blocks[1].code


def test_a_file_comment_inside_code_or_without_the_file_word_does_not_split() -> None:
    reply = "```python\n# file: a.py\ndef f():\n    # file: b.py\n    return 1\n# b.py\nX = 1\n```"
    blocks = blocks_of(reply)
    assert len(blocks) == 1 and blocks[0].path == "a.py" and "X = 1" in blocks[0].code


def test_a_python_file_whose_only_change_is_an_import_is_unchanged(tmp_path: Path) -> None:
    before = b"from a import b\n\n\ndef run():\n    return b()\n"
    files = {"imports.py": b"from a import b, c\nimport os\n\n\ndef run():\n    return b()\n",
             "body.py": b"from a import b\n\n\ndef run():\n    return b() + 1\n",
             "broken.py": b"def run(:\n", "notes.txt": b"x\n"}
    for rel, data in files.items():
        (tmp_path / rel).write_bytes(data)
    original = {"imports.py": before, "body.py": before, "broken.py": before, "notes.txt": b"x\n"}
    assert named.untouched(tmp_path, list(files), original) == ["imports.py", "notes.txt"]
