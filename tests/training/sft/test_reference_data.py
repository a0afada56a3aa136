"""The paper's SFT turns (games/data/reference-sft): read into the project's turn examples with
the chats its rollouts show, held-out secrets refused, subsampled with the seed, and trained
(issue 32)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from games.guessers.llm import LLMGuesser
from games.judges.base import Judge
from games.llm.base import Generation, LLMBackend
from games.llm.chat import GUESSER_PROMPT, GUESSER_SYSTEM_PROMPT, GuesserFormat
from games.rollout import rollout
from games.types import GameConfig, JudgeAnswer, Verdict
from games.wordlists import read_words
from training.reporting import ConsoleReporter
from training.sft.config import SFT_PRESETS, SFTJobConfig
from training.sft.reference_data import (
    SHIPPED_DIR,
    SHIPPED_FILE,
    read_reference,
    reference_examples,
    repeats_a_question,
    sample_turns,
)


@pytest.fixture(scope="module")
def turns():
    return read_reference()


def test_the_shipped_file_has_the_papers_rows_with_attribution(turns):
    assert len(turns) == 48_335
    secrets = {t.secret for t in turns}
    assert len(secrets) == 3_021
    assert secrets - set(read_words("dbrl/train_rl")) == {"secret"}  # in no shipped list
    for held_out in ("paper_test", "paper_val", "val", "test", "train_sft"):
        assert not secrets & set(read_words(f"dbrl/{held_out}")), held_out
    assert max(len(t.history) for t in turns) == 18 and min(len(t.history) for t in turns) == 0
    sources = (SHIPPED_DIR / "SOURCES.md").read_text()
    assert "bethgelab/delta-belief-rl" in sources and SHIPPED_FILE in sources
    assert "MIT License" in (SHIPPED_DIR / "LICENSE").read_text()


def test_games_group_rows_whose_histories_extend_one_another(turns):
    by_game: dict[int, list] = {}
    for t in turns:
        by_game.setdefault(t.game, []).append(t)
    assert 40_000 < len(by_game) < len(turns)  # mostly one sampled turn per game
    for rows in by_game.values():
        assert len({t.secret for t in rows}) == 1
        longest = max(rows, key=lambda t: len(t.history)).path
        assert all(longest[: len(t.path)] == t.path for t in rows)
    assert sorted(by_game) == list(range(len(by_game)))


class ReplayBackend(LLMBackend):
    """Writes the row's questions in order."""

    name = "replay"

    def __init__(self, questions):
        self.questions = questions

    def generate(self, chats, sampling, *, seeds=None):
        return [Generation(self.questions[(len(c) - 2) // 2], finish_reason="stop") for c in chats]

    def score_spans(self, chats, replies, spans):
        return [0.0 for _ in chats]


class ReplayJudge(Judge):
    name = "replay"

    def __init__(self, verdicts):
        self.verdicts = verdicts

    def judge_batch(self, requests):
        return [JudgeAnswer(self.verdicts[len(r.history)]) for r in requests]


def test_a_rows_chat_is_what_the_rollout_shows_the_guesser_at_that_turn(turns):
    """The row's own chat differs (no max-turns sentence, bare "yes"/"no"/"repeated"); the rebuilt
    one is what games.rollout gives an LLM guesser that asked the row's questions and got the
    row's answers, in both of the project's prompts."""
    row = next(
        t
        for t in turns
        if len(t.history) >= 6
        and {Verdict.YES, Verdict.NO, Verdict.REPEATED} <= {v for _, v in t.history}
    )
    questions = [q for q, _ in row.history] + [row.question]
    for chat_format in (GuesserFormat(), GuesserFormat.named("short")):
        example = reference_examples([row], chat_format)[0]
        guesser = LLMGuesser(ReplayBackend(questions), chat_format=chat_format)
        judge = ReplayJudge([v for _, v in row.history] + [Verdict.NO])
        played = GameConfig(max_turns=len(questions))  # (the prompt says 20: chat_format's)
        (game,) = rollout(guesser, judge, [row.secret], config=played)
        assert [(t.question, t.verdict) for t in game.turns[: len(row.history)]] == list(
            row.history
        )
        seen = game.turns[len(row.history)]
        assert seen.extra["messages"] == example["prompt"]
        assert example["completion"] == [{"role": "assistant", "content": seen.question}]
    paper = reference_examples([row])[0]["prompt"]
    assert paper[0]["content"] == GUESSER_SYSTEM_PROMPT.replace("{max_turns}", "20")
    assert paper[1]["content"] == GUESSER_PROMPT and paper[3]["content"] in ("Yes.", "No.")


def write_rows(path: Path, rows: list[tuple[str, list[dict], str]]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    secrets, prompts, responses = zip(*rows)
    table = pa.table(
        {"golden_answers": list(secrets), "prompt": list(prompts), "response": list(responses)}
    )
    pq.write_table(table, path)
    return path


INSTRUCTION = {"role": "user", "content": GUESSER_PROMPT.strip()}


def test_a_held_out_secret_or_a_foreign_row_is_refused(tmp_path):
    test_word = read_words("dbrl/paper_test")[0]
    asked = [INSTRUCTION, {"role": "assistant", "content": "Is it alive?"}]
    ok = write_rows(tmp_path / "ok.parquet", [("revolution", [INSTRUCTION], "Is it alive?")])
    assert [t.secret for t in read_reference(str(ok))] == ["revolution"]
    leak = write_rows(tmp_path / "leak.parquet", [(test_word, [INSTRUCTION], "Is it alive?")])
    with pytest.raises(ValueError, match=f"held out for evaluation.*{test_word}"):
        read_reference(str(leak))
    for name, prompt in {
        "unanswered": asked,
        "answer": [*asked, {"role": "user", "content": "maybe"}],
        "instruction": [{"role": "user", "content": "Guess."}],
    }.items():
        bad = write_rows(tmp_path / f"{name}.parquet", [("revolution", prompt, "Is it big?")])
        with pytest.raises(ValueError):
            read_reference(str(bad))
    with pytest.raises(FileNotFoundError):
        read_reference(str(tmp_path / "missing.parquet"))


def test_subsamples_are_seeded(turns):
    one = sample_turns(turns, words=20, rows=50, seed=1)
    assert one == sample_turns(turns, words=20, rows=50, seed=1)
    assert len(one) == 50 and len({t.secret for t in one}) <= 20
    assert one != sample_turns(turns, words=20, rows=50, seed=2)
    words = sample_turns(turns, words=3, seed=4)
    assert len({t.secret for t in words}) == 3
    chosen = {w.secret for w in words}
    assert len(words) == sum(t.secret in chosen for t in turns)  # all their turns
    rows = sample_turns(turns, rows=100, seed=0)
    position = {id(t): i for i, t in enumerate(turns)}
    at = [position[id(t)] for t in rows]
    assert len(set(at)) == 100 and at == sorted(at)  # distinct rows, in file order
    assert sample_turns(turns) == list(turns)  # the defaults: every row, the paper's


def test_config_offers_reference_to_sft_only_and_refuses_what_it_cannot_use():
    assert SFTJobConfig().max_turn_examples == 0 and SFTJobConfig().reference_file == ""
    SFTJobConfig(source="reference", limit_words=5, max_turn_examples=10)
    for bad, message in (
        ({"reference_file": "x.parquet"}, "reference_file needs source=reference"),
        ({"max_turn_examples": 5}, "max_turn_examples needs source=reference"),
        ({"source": "reference", "max_turns": 10}, "max_turns must be at least 20"),
        ({"source": "reference", "max_turn_examples": -1}, "max_turn_examples must be 0"),
        ({"source": "reference", "recovery_per_game": 1}, "recovery_per_game needs"),
        ({"skip_repeat_targets": True}, "skip_repeat_targets needs source=reference"),
    ):
        with pytest.raises(ValueError, match=message):
            SFTJobConfig(**bad)
    from training.dpo.config import DPOJobConfig

    with pytest.raises(ValueError, match="source must be one of teacher, games$"):
        DPOJobConfig(source="reference")  # its prefixes: teacher or stored games


def test_the_named_setting_is_smollm2_with_lora_on_the_reference_turns():
    config = SFTJobConfig.from_preset("smol-20q-sft", max_turn_examples=8)
    assert (config.base_model, config.source, config.guesser_prompt) == (
        "smollm2-135m-instruct",
        "reference",
        "paper",
    )
    assert config.lora and config.max_turn_examples == 8 and config.epochs == 2.0
    with pytest.raises(ValueError, match="no SFT preset"):
        SFTJobConfig.from_preset("nope")
    assert set(SFT_PRESETS) == {"smol-20q-sft"}


def test_smollm2_trains_only_the_question_and_its_end_of_turn(turns):
    """SmolLM2's ChatML template has no {% generation %} markers: TRL's completion-only loss
    trains what the template adds after the prompt, the question, <|im_end|> and the newline the
    template writes after it (training.common.chat gives TRL's labels: test_masking)."""
    from transformers import AutoTokenizer

    from games.base_models import resolve_model
    from training.common.chat import IGNORE, encode_prompt_completion
    from training.common.models import has_generation_markers

    tokenizer = AutoTokenizer.from_pretrained(resolve_model("smollm2-135m-instruct"))
    assert not has_generation_markers(tokenizer)
    row = next(t for t in turns if len(t.history) == 3)
    example = reference_examples([row])[0]
    encoded = encode_prompt_completion(tokenizer, example["prompt"], example["completion"])
    trained = [i for i, label in zip(encoded.input_ids, encoded.labels) if label != IGNORE]
    question = tokenizer(row.question, add_special_tokens=False)["input_ids"]
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert trained == [*question, end, *tokenizer("\n", add_special_tokens=False)["input_ids"]]
    start = encoded.labels.index(question[0])
    assert all(label == IGNORE for label in encoded.labels[:start])  # the whole chat before
    assert (
        encoded.input_ids[:start]
        == tokenizer.apply_chat_template(
            example["prompt"], add_generation_prompt=True, tokenize=True, return_dict=True
        )["input_ids"]
    )  # ... is what the guesser is prompted with in play


def test_one_sft_run_on_reference_turns(tiny_dir, tmp_path, capsys):
    from training.sft.__main__ import main

    out = tmp_path / "ref"
    flags = ["--preset", "smol-20q-sft", "--base", str(tiny_dir), "--out", str(out)]
    flags += ["--max-turn-examples", "6", "--max-steps", "1", "--learning-rate", "1e-3"]
    flags += ["--global-batch-size", "4", "--per-device-batch-size", "2", "--lora-rank", "4"]
    assert main(flags) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["global_step"] == 1 and result["examples"] == 6 and result["is_adapter"]
    stored = [json.loads(line) for line in (out / "sft_examples.jsonl").read_text().splitlines()]
    config = SFTJobConfig.from_preset("smol-20q-sft", max_turn_examples=6)
    expected = sample_turns(read_reference(), rows=6, seed=0)
    assert stored == reference_examples(expected, GuesserFormat.named("paper"))
    assert result["words"] == len({t.secret for t in expected}) and config.seed == 0
    assert main(["--preset", "nope", "--out", str(out)]) == 2
    assert "no preset 'nope'" in capsys.readouterr().err


def test_the_run_refuses_an_empty_sample(tiny_dir, tmp_path):
    from training.sft.trainer import run

    empty = write_rows(tmp_path / "x.parquet", [("revolution", [INSTRUCTION], "Is it alive?")])
    config = SFTJobConfig(
        base_model=str(tiny_dir), source="reference", reference_file=str(empty), max_steps=1
    )
    reporter = ConsoleReporter(tmp_path / "out", stream=io.StringIO())
    with pytest.raises(ValueError, match="no training example fits"):
        run(config.__class__(**{**config.to_dict(), "max_tokens": 16}), reporter)


def test_skip_repeat_targets_leaves_out_the_rows_that_ask_again(turns, tmp_path):
    from training.sft.trainer import reference_rows

    repeats = [t for t in turns if repeats_a_question(t)]
    assert 0.015 < len(repeats) / len(turns) < 0.025  # 926 of the paper's 48,335 rows
    assert not SFTJobConfig().skip_repeat_targets  # the paper trains on every row

    def rows(**fields):
        config = SFTJobConfig(source="reference", limit_words=60, **fields)
        reporter = ConsoleReporter(tmp_path / "log", stream=io.StringIO())
        return reference_rows(config, reporter, GuesserFormat.named("paper"))

    def asks_again(row) -> bool:
        asked = {m["content"].strip().lower() for m in row["prompt"] if m["role"] == "assistant"}
        return row["completion"][0]["content"].strip().lower() in asked

    every, kept = rows(), rows(skip_repeat_targets=True)
    assert any(map(asks_again, every)) and not any(map(asks_again, kept))
    assert len(kept) < len(every)
