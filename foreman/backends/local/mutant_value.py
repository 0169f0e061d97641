"""The ``value`` mutant's helpers (:mod:`.mutants`), whose source is put into the broken module.

Only their source is used: :func:`_foreman_other` wraps each ``return X`` of the broken function
(``return _foreman_other(X)``), so they import what they use inside themselves and keep the
``_foreman_`` prefix (no name of the module they go into). ``FOREMAN_MUTANT_NOTES`` names the file
the calls note ``changed`` or ``same`` in, each once per process (a run where no return changed
proves nothing). No annotations: the module they go into may not import what they would name.
"""

def _foreman_other(value):
    """Another value of the same type (a mutant's); each call noted, ``same`` when it had none."""
    import os  # (inside: only this function's source goes into the broken module, see the module doc)

    other = _foreman_changed(value)
    try:
        same = other is value or bool(other == value)
    except Exception:
        same = False
    noted = _foreman_other.__dict__.setdefault("noted", set())  # each outcome once: a loop stays fast
    if os.environ.get("FOREMAN_MUTANT_NOTES") and same not in noted:
        noted.add(same)
        with open(os.environ["FOREMAN_MUTANT_NOTES"], "a", encoding="utf-8") as notes:
            notes.write("same\n" if same else "changed\n")
    return other


def _foreman_changed(value):
    """Another value of ``value``'s type; ``value`` itself when it knows none."""
    # (inside: only this function's source goes into the broken module, see the module doc)
    import dataclasses
    import datetime
    import enum
    import numbers
    import pathlib

    try:
        if isinstance(value, bool):
            return not value
        if isinstance(value, enum.Enum):
            return next((m for m in type(value) if m is not value), value)
        if isinstance(value, float):
            return value + 1 if value + 1 != value and value == value else (0.0 if value else 1.0)
        if isinstance(value, numbers.Number):
            return value + 1
        if isinstance(value, str):
            return value + "~"
        if isinstance(value, (bytes, bytearray)):
            return value + b"~"
        if isinstance(value, (list, tuple)):
            return value[1:] if value else type(value)([None])
        if isinstance(value, dict):
            return dict(list(value.items())[1:]) if value else {None: None}
        if isinstance(value, (set, frozenset)):
            return type(value)(list(value)[1:]) if value else type(value)([None])
        if isinstance(value, (datetime.date, datetime.timedelta)):
            return value + datetime.timedelta(days=1)
        if isinstance(value, pathlib.PurePath):
            return value.with_name(value.name + "~") if value.name else value / "~"
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            for field in dataclasses.fields(value):
                old = getattr(value, field.name)
                new = _foreman_changed(old)
                if field.init and new is not old:
                    return dataclasses.replace(value, **{field.name: new})
    except Exception:
        pass
    return value
