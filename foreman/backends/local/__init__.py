"""The local backend: agents on any OpenAI-compatible endpoint, built for small models.

This package is imported lazily by the daemon; its ``__init__`` stays free of heavy imports.
The decoding half lives in:

- :mod:`~foreman.backends.local.actions`: every agent action, a frozen pydantic model.
- :mod:`~foreman.backends.local.registry`: the one tool registry (prompt text, native schema).
- :mod:`~foreman.backends.local.calls`: tool name + arguments -> action (both codecs end here).
- :mod:`~foreman.backends.local.textcodec`: the text protocol's incremental decoder
  (line reading in ``textlines``, SEARCH/REPLACE blocks in ``textblocks``, tool calls written
  as text in ``textcalls``, the reply's bookkeeping in ``textreply``, canonical rendering in
  ``textrender``).
- :mod:`~foreman.backends.local.nativecodec`: OpenAI tool calls (streamed deltas included).
- :mod:`~foreman.backends.local.repairs`: tolerant JSON, loops, bad-turn classification.
- :mod:`~foreman.backends.local.result`: ``DecodeResult`` and the stable repair/drop/reason ids.
- :mod:`~foreman.backends.local.trace`: the reply recorder read by ``foreman replay``.
- :mod:`~foreman.backends.local.cli`: ``foreman decode`` and ``foreman replay``.
"""
