"""Helpers the API views share."""

from __future__ import annotations

from typing import Any


def validated(serializer_class, data) -> dict[str, Any]:
    """`data` (a request's body or query) checked by `serializer_class`: its validated data, or a
    DRF ValidationError (answered as a 400 with the errors by field)."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
