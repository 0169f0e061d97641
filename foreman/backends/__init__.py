"""Backends run the agents' turns: ``sim`` (scripted team, default), ``claude`` and ``local``.

Each supplies :class:`~foreman.backends.turns.TurnRunner` s through the turn contract
(:mod:`.turns`); the flow (:mod:`foreman.flow`) decides which turns run and does everything
else (worktrees, CI, review, merge, hand-off). :func:`foreman.flow.assemble.make_backend`
builds the team's backend from the settings.
"""
