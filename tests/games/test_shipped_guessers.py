"""The trained guessers shipped in games/data/models/ (issue 23): small fp16 folders with a model
card and play settings, loadable as `hf:PATH`, playing with the settings they were measured with,
and `python -m games eval` on them with their pool."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from games.__main__ import main
from games.guessers.llm import LLMGuesser
from games.llm.chat import MODEL_PLAY_SETTINGS, model_guesser_prompt, model_play_settings
from games.registry import build_guesser
from games.types import Trajectory, Turn, Verdict
from games.wordlists import read_words

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "games" / "data" / "models"
SHIPPED = sorted(p.parent for p in MODELS.glob("*/guesser.json"))
SFT = MODELS / "tiny-20q-sft"


def test_at_least_two_trained_guessers_are_shipped_small_in_fp16_with_a_card():
    from safetensors import safe_open

    assert len(SHIPPED) >= 2 and SFT in SHIPPED
    for folder in SHIPPED:
        files = {p.name for p in folder.iterdir()}
        assert {"model.safetensors", "config.json", "tokenizer.json", "MODEL_CARD.md"} <= files
        assert sum(p.stat().st_size for p in folder.iterdir()) < 5 * 2**20
        with safe_open(folder / "model.safetensors", "pt") as weights:
            dtypes = {str(weights.get_tensor(k).dtype) for k in weights.keys()}  # noqa: SIM118 (a safetensors handle)
        assert dtypes == {"torch.float16"}
        settings = model_play_settings(folder)
        provenance = settings["provenance"]
        assert len(provenance["bench_commit"]) == 40 and provenance["seed"] == 0
        assert settings["results"]["recorded"]["test"]["success"]["ci95"]
        card = (folder / "MODEL_CARD.md").read_text(encoding="utf-8")
        assert provenance["bench_commit"] in card and "knows only its pool" in card
        assert f"hf:games/data/models/{folder.name}" in card


def test_the_pool_and_held_out_words_are_shipped_with_the_splits():
    pool = set(read_words(str(MODELS / "pool" / "pool.txt")))
    test = read_words(str(MODELS / "pool" / "test.txt"))
    sft = set(read_words(str(MODELS / "pool" / "sft.txt")))
    assert len(pool) == 400 and len(test) == 150
    assert set(test) <= pool and not set(test) & sft


def test_a_shipped_folder_sets_how_its_guesser_plays(tmp_path, tiny_model_dir):
    folder = tmp_path / "shipped"
    shutil.copytree(tiny_model_dir, folder)
    assert model_guesser_prompt(folder) != "short"
    settings = {"guesser_prompt": "short", "sampling": {"temperature": 0.5, "max_new_tokens": 7}}
    (folder / MODEL_PLAY_SETTINGS).write_text(json.dumps(settings))
    guesser = build_guesser(f"hf:{folder}")
    assert (guesser.sampling.temperature, guesser.sampling.max_new_tokens) == (0.5, 7)
    assert guesser.chat_format.prompt == "Your question:"
    plain = build_guesser(f"hf:{tiny_model_dir}")
    assert plain.sampling.max_new_tokens == 48  # a folder without play settings: the defaults


def test_a_pool_guesser_reports_the_pool_words_the_answers_leave(tiny_backend):
    pool = ["dog", "cat", "horse", "apple", "banana", "car", "guitar", "hammer"]
    guesser = LLMGuesser(tiny_backend, candidate_pool=pool, top_k=3)
    state = guesser.start(seed=1)
    first = guesser.ask(state)
    assert len(first.top_candidates) == 3
    assert sum(p for _, p in first.top_candidates) == pytest.approx(3 / len(pool))
    guesser.observe(
        state,
        Turn(index=0, question="Is it a kind of fruit?", verdict=Verdict.YES, feedback="Yes."),
    )
    after = guesser.ask(state)
    assert {w for w, _ in after.top_candidates[:2]} == {"apple", "banana"}
    assert LLMGuesser(tiny_backend).ask(guesser.start(seed=1)).top_candidates is None


def test_eval_on_the_shipped_sft_guesser_with_its_pool_saves_its_games(tmp_path, capsys):
    words = tmp_path / "words.txt"
    words.write_text("anatomy\nrocket\nplatypus\n")  # held-out test words
    saved = tmp_path / "games.jsonl.gz"
    assert (
        main(
            [
                "eval",
                f"--guesser=hf:{SFT}",
                "--judge=kb:closed",
                f"--words={words}",
                f"--pool={MODELS / 'pool' / 'pool.txt'}",
                "--max-turns=4",
                "--json",
                f"--save-games={saved}",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["n_games"] == 3 and out["outside_pool"] == 0
    assert out["sampling"] == {**out["sampling"], "temperature": 1.0, "max_new_tokens": 24}
    with gzip.open(saved, "rt") as lines:
        games = [Trajectory.from_dict(json.loads(line)) for line in lines]
    assert [g.secret for g in games] == ["anatomy", "rocket", "platypus"]
    assert all(0 < g.n_turns <= 4 for g in games)
    assert "token_ids" not in games[0].turns[0].extra and "completion" in games[0].turns[0].extra
    # a word the guesser never saw is counted: it cannot win it
    words.write_text("anatomy\nzeppelin\n")
    main(
        [
            "eval",
            f"--guesser=hf:{SFT}",
            f"--words={words}",
            "--pool=" + str(MODELS / "pool" / "pool.txt"),
            "--max-turns=1",
            "--json",
        ]
    )
    assert json.loads(capsys.readouterr().out)["outside_pool"] == 1
