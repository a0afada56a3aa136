"""Named settings of a job config (a plain mixin: it adds no fields)."""

from __future__ import annotations

from typing import Any, ClassVar


class Presets:
    """Named settings of a config (`PRESETS`: name → the fields it sets), as the command line's
    `--preset NAME` and the launch form's `?preset=NAME` start from them (a plain mixin)."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}
    PRESET_KIND: ClassVar[str] = ""

    @classmethod
    def from_preset(cls, name: str, **overrides: Any) -> Any:
        """The config of the named setting `name` with `overrides`."""
        if name not in cls.PRESETS:
            raise ValueError(
                f"no {cls.PRESET_KIND} preset {name!r} (presets: {', '.join(cls.PRESETS)})"
            )
        return cls(**{**cls.PRESETS[name], **overrides})
