"""The banner's backend credential status is labelled ``credentials``, never read as "auth none".

The wire field ``status.auth`` is the backend's credential status (``Backend.status()``), not
whether clients must present the daemon's token; the client's text must not say "auth none".
"""

from __future__ import annotations

import io

import protocol as p
from foreman.tui import views
from foreman.tui.mirror import Mirror, Outcome
from foreman.tui.transcript import Transcript


def _mirror(auth: str, backend: str = "sim") -> Mirror:
    m = Mirror()
    m.apply(p.Snapshot(seq=3, status=p.Status(backend=backend, auth=auth, version="1", profile="sim", user_name="bo")))
    return m


def test_status_view_says_credentials_not_auth():
    line = views.status_view(_mirror("none"))[0]
    assert "backend sim (credentials: none needed)" in line and "auth" not in line
    line = views.status_view(_mirror("missing: set ANTHROPIC_API_KEY", "claude"))[0]
    assert "backend claude (credentials: missing: set ANTHROPIC_API_KEY)" in line and "auth" not in line


def test_transcript_connect_and_status_lines_say_credentials():
    out = io.StringIO()
    transcript = Transcript([out], lambda: 0.0)
    m = _mirror("none")
    transcript.on_message(p.Snapshot(seq=3, status=m.status), Outcome.APPLIED, m)
    msg = p.StatusMessage(seq=4, backend="claude", auth="api-key", version="1", user_name="bo")
    m.apply(msg)
    transcript.on_message(msg, Outcome.APPLIED, m)
    text = out.getvalue()
    assert "backend sim (credentials: none needed)" in text
    assert "status: backend claude, credentials: api-key" in text
    assert "auth" not in text
