"""The flow: a task's life from the lead's plan to the merge, for every backend's turns.

One pure function, :func:`.step.step`, applies one input (:mod:`.model`) to the world through the
core and returns effects; one runner (:mod:`.runner`) carries the effects out with executors
(:mod:`.turnwork`, :mod:`.gitwork`, :mod:`.checks`, :mod:`.merging`) and feeds what came of them
back as inputs. The rules: :mod:`.turnrules` (starting and queueing turns), :mod:`.taskrules`
(plan, schedule, work, CI, review), :mod:`.mergerules` (the merge decision, hand-offs,
retirement), :mod:`.endrules` (a turn's end), :mod:`.restartrules` (a restart: the same step on
the stored state). :mod:`.conductor` is the backend that wires them to the daemon
(:class:`.host.FlowHost`); :mod:`.assemble` builds it from the settings.

See ``docs/architecture.md`` ("The flow") for the states, inputs and effects.
"""
