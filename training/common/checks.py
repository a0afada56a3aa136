"""How the training configs are checked: each check of one field (its metadata's bounds and
choices, a name, a precision) and `build_checked`, which collects every failed check of a config
instead of raising the first (ConfigErrors). training.common.config re-exports them."""

from __future__ import annotations

import dataclasses
from contextvars import ContextVar
from typing import Any

from games import precision as precision_policy

# While a config is built by `build_checked`, failed checks are collected here instead of raised:
# (the field the check names, when it knows it; the message).
_collected: ContextVar[list[tuple[str | None, str]] | None] = ContextVar(
    "config_errors", default=None
)


class ConfigErrors(ValueError):
    """Every failed check of one config, in check order: `messages`, and `fields` (the field each
    check named, or None); str() joins the messages."""

    def __init__(self, failures: list[tuple[str | None, str]]):
        super().__init__("; ".join(message for _, message in failures))
        self.fields = [name for name, _ in failures]
        self.messages = [message for _, message in failures]


def _check(condition: bool, message: str, field_name: str | None = None) -> None:
    if condition:
        return
    collected = _collected.get()
    if collected is None:
        raise ValueError(message)
    collected.append((field_name, message))


def build_checked(cls: type, **values: Any) -> Any:
    """`cls(**values)` reporting every failed check at once (ConfigErrors); built directly, as on
    the command line, a config raises a ValueError at its first failed check."""
    collected: list[tuple[str | None, str]] = []
    token = _collected.set(collected)
    try:
        config = cls(**values)
    except ValueError as exc:  # a check that raises itself ends the checks: keep it with the rest
        known = {message for _, message in collected}
        raised = getattr(exc, "messages", None) or [str(exc)]
        raise ConfigErrors(collected + [(None, m) for m in raised if m not in known]) from exc
    except (TypeError, ArithmeticError, AttributeError) as exc:
        if not collected:
            raise
        raise ConfigErrors(collected) from exc  # a later check broken by an earlier failure
    finally:
        _collected.reset(token)
    if collected:
        raise ConfigErrors(collected)
    return config


def field_metadata(config: Any, name: str) -> Any:
    """The metadata of the dataclass field `name` (of an instance or a class)."""
    return next(f.metadata for f in dataclasses.fields(config) if f.name == name)


def check_between(
    config: Any,
    name: str,
    low: float | None = None,
    high: float | None = None,
    message: str = "",
    *,
    why: str = "",
) -> None:
    """The field `name` of `config` lies in [low, high], else a ValueError saying so (or
    `message`; `why`, if given, follows the default one in brackets). Without low and high, the
    bounds are the field's metadata "min" and "max" (either may be absent; "min_open"/"max_open"
    exclude them), the same the launch form's number inputs get."""
    meta = field_metadata(config, name) if low is None and high is None else {}
    if meta:
        low, high = meta.get("min"), meta.get("max")
    value = getattr(config, name)
    above = low is None or (low < value if meta.get("min_open") else low <= value)
    below = high is None or (value < high if meta.get("max_open") else value <= high)
    default = f"{name} must be between {low} and {high}" + (f" ({why})" if why else "")
    _check(above and below, message or default, name)


def _bound(value: float) -> str:
    """A bound as a message writes it: 100.0 as 100, 0.5 as 0.5."""
    return str(int(value)) if float(value).is_integer() else str(value)


def bounds_text(config: Any, name: str) -> str:
    """The field's metadata bounds in a message's words: an interval, "in (0, 1]" or
    "in [0, 100]", where it has both; else the one bound, ">= 0", "> 1" or "<= 10"."""
    meta = field_metadata(config, name)
    low, high = meta.get("min"), meta.get("max")
    if low is not None and high is not None:
        left, right = "(" if meta.get("min_open") else "[", ")" if meta.get("max_open") else "]"
        return f"in {left}{_bound(low)}, {_bound(high)}{right}"
    if low is not None:
        return f"{'>' if meta.get('min_open') else '>='} {_bound(low)}"
    if high is not None:
        return f"{'<' if meta.get('max_open') else '<='} {_bound(high)}"
    raise KeyError(f"{name}: its metadata has no min or max")


def check_interval(config: Any, name: str, why: str = "") -> None:
    """check_between on the field's metadata bounds, the message in bounds_text's words
    ("epsilon must be in [0, 1)", "save_steps must be >= 1", then `why` in brackets): it says
    which bounds are open, and a lone minimum, where check_between's "between 1 and 64" does not."""
    message = f"{name} must be {bounds_text(config, name)}"
    check_between(config, name, message=f"{message} ({why})" if why else message)


def check_choice(config: Any, name: str, choices: tuple[str, ...] | None = None) -> None:
    """The field `name` of `config` is one of `choices` (default: the field's metadata "choices",
    the launch form's select box), else a ValueError listing them."""
    if choices is None:
        choices = tuple(field_metadata(config, name)["choices"])
    _check(getattr(config, name) in choices, f"{name} must be one of {', '.join(choices)}", name)


def check_precision(config: Any, name: str = "precision") -> None:
    """The field `name` is a precision (its spelling normalised: bf16 → bfloat16), else a
    ValueError listing them."""
    try:
        value = precision_policy.normalise(getattr(config, name))
    except precision_policy.PrecisionError as err:
        _check(False, f"{name}: {err}", name)
        return
    object.__setattr__(config, name, value)  # frozen dataclasses: the one normalising write


def check_named(config: Any, name: str, what: str) -> None:
    """The field `name` of `config` names something (is not blank), else a ValueError
    "`name`: name `what`"."""
    _check(bool(getattr(config, name).strip()), f"{name}: name {what}", name)
