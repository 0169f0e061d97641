"""The steps of a task's life under the conductor, one module per step.

Each module is a small set of functions over the :class:`~foreman.flow.conductor.Conductor`
(its ``d`` daemon, ``settings`` and in-memory state); durable records are the core's typed flow
records (:mod:`foreman.core.records`, read and written through :mod:`.records`). The conductor schedules and dispatches; these modules move tasks:

* :mod:`.plan` - a goal becomes tasks (the lead's plan turn);
* :mod:`.work` - a ready task gets a worktree and a worker's turn; its end sends it to review;
* :mod:`.ci` - the task's test command; a failure goes back to the worker once;
* :mod:`.review` - the lead's review; it requests the merge or changes;
* :mod:`.merge` - the user's merge decision and what each answer does;
* :mod:`.handoff` - a task changing hands, leftovers of closed tasks, retired worktrees;
* :mod:`.restart` - reconciliation after a restart (resume turns, repair open states);
* :mod:`.turn` - running one turn and routing its end; :mod:`.processes` - processes of turns.

See ``docs/architecture.md`` ("The flow") for the states and which module moves a task.
"""
