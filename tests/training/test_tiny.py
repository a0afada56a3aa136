"""The tiny local model: built offline in seconds, loadable with the Auto classes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from training.tiny import TinyConfig, build_tiny_model, corpus, load_words

ROOT = Path(__file__).resolve().parents[2]
SMALL = {
    "vocab_size": 1024,
    "hidden": 32,
    "layers": 1,
    "heads": 2,
    "kv_heads": 1,
    "intermediate": 64,
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny") / "cli"
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in SMALL.items()]
    run = subprocess.run(
        [sys.executable, "-m", "training.tiny", "build", str(out), *flags, "--seed=3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"HF_HUB_OFFLINE": "1", "PATH": ""},
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1])["dir"] == str(out)
    return out


def test_cli_build_loads_with_auto_classes(built):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(built, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(built, local_files_only=True)
    assert model.config.model_type == "llama" and model.config.hidden_size == 32
    assert model.config.num_hidden_layers == 1 and model.config.num_key_value_heads == 1
    assert model.config.vocab_size == len(tok) <= 1024
    assert sum(p.numel() for p in model.parameters()) < 5_000_000
    assert (tok.eos_token, tok.pad_token, tok.bos_token) == ("<|end|>", "<|pad|>", "<|bos|>")
    assert model.config.eos_token_id == tok.eos_token_id and tok.padding_side == "left"
    assert json.loads((built / "tiny_config.json").read_text())["seed"] == 3


def test_tokenizer_encodes_any_text_and_keeps_20q_words_whole(built):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(built)
    for text in ["Is it a kind of animal?", "naïve café 😀 — 漢字", "Is it 'ice cream'?"]:
        assert tok.decode(tok(text, add_special_tokens=False)["input_ids"]) == text
    # punctuation splits off, so a quoted secret is tokenised exactly as the bare word
    quoted = tok("Is it 'snake'?", add_special_tokens=False)["input_ids"]
    bare = tok("snake", add_special_tokens=False)["input_ids"]
    assert any(quoted[i : i + len(bare)] == bare for i in range(len(quoted)))
    assert (
        len(tok("Is it an animal?", add_special_tokens=False)["input_ids"]) <= 8
    )  # learned 20Q phrasing


def test_chat_template_roles_generation_prompt_and_assistant_mask(built):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(built)
    chat = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "U"},
        {"role": "assistant", "content": "Is it?"},
    ]
    text = tok.apply_chat_template(chat, tokenize=False)
    assert text == "<|bos|><|system|>\nS<|end|>\n<|user|>\nU<|end|>\n<|assistant|>\nIs it?<|end|>\n"
    prompt = tok.apply_chat_template(chat[:2], tokenize=False, add_generation_prompt=True)
    assert prompt.endswith("<|user|>\nU<|end|>\n<|assistant|>\n") and text.startswith(prompt)
    enc = tok.apply_chat_template(chat, return_dict=True, return_assistant_tokens_mask=True)
    masked = [t for t, m in zip(enc["input_ids"], enc["assistant_masks"]) if m]
    assert tok.decode(masked) == "Is it?<|end|>"
    with pytest.raises(Exception, match="unknown role"):
        tok.apply_chat_template([{"role": "tool", "content": "x"}], tokenize=False)


def test_build_is_deterministic_and_seeded(tmp_path):
    a = build_tiny_model(tmp_path / "a", **SMALL, seed=1)
    b = build_tiny_model(tmp_path / "b", **SMALL, seed=1)
    c = build_tiny_model(tmp_path / "c", **SMALL, seed=2)
    weights = lambda p: (p / "model.safetensors").read_bytes()  # noqa: E731
    assert weights(a) == weights(b) != weights(c)
    assert (a / "tokenizer.json").read_text() == (c / "tokenizer.json").read_text()


def test_corpus_and_config_validation():
    words = load_words()
    assert len(words) > 8000 and "apple" in words and words == sorted(set(words))
    lines = corpus(words[:50])
    assert (
        any(line.startswith("Is it") and line.endswith("?") for line in lines) and "Yes." in lines
    )
    with pytest.raises(ValueError):
        TinyConfig(hidden=30, heads=4)
    with pytest.raises(ValueError):
        TinyConfig(vocab_size=100)
