"""The local backend: agents on any OpenAI-compatible endpoint, built for small models.

This package is imported lazily by the daemon; its ``__init__`` stays free of heavy imports.
The decoding half lives in:

- :mod:`~foreman.backends.local.registry`: every agent action, defined once.
- :mod:`~foreman.backends.local.textcodec`: the text protocol (incremental decoder, renderer).
- :mod:`~foreman.backends.local.nativecodec`: OpenAI tool calls (streamed deltas included).
- :mod:`~foreman.backends.local.repairs`: tolerant JSON, repair ids, bad-turn classification.
- :mod:`~foreman.backends.local.trace`: the reply recorder read by ``foreman replay``.
- :mod:`~foreman.backends.local.cli`: ``foreman decode`` and ``foreman replay``.
"""
