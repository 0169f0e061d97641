"""The base of every wire model: camelCase on the wire, snake_case in Python."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

PROTOCOL_VERSION = 1
"""The protocol's major version. Within v1, changes are additive only."""


class WireModel(BaseModel):
    """A pydantic model that speaks camelCase JSON and ignores unknown fields.

    Unknown fields are ignored (not rejected) so that a newer client or server that adds an
    optional field within v1 still talks to an older peer.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        use_attribute_docstrings=True,
        extra="ignore",
        validate_assignment=False,
    )

    def wire(self) -> dict[str, Any]:
        """Return the JSON-ready dict of this model (camelCase keys, no ``None`` pruning)."""
        return self.model_dump(mode="json", by_alias=True)
