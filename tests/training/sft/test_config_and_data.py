"""SFT config validation, turn examples and game selection (no model)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from games.llm.chat import guesser_messages
from games.types import Verdict
from tests.training.sft.helpers import trajectory
from training.common.data import read_trajectories, select_games, trajectory_from_row
from training.common.models import DeviceSetup
from training.sft.config import SFTJobConfig
from training.sft.data import recovery_examples, turn_examples

Y, N, F, INV = Verdict.YES, Verdict.NO, Verdict.FINISHED, Verdict.INVALID


def test_defaults_follow_the_paper_and_every_field_is_documented():
    c = SFTJobConfig()
    assert (c.epochs, c.lr_scheduler, c.learning_rate, c.warmup_ratio) == (2.0, "cosine", 1e-5, 0.1)
    assert (c.weight_decay, c.adam_beta1, c.adam_beta2, c.global_batch_size, c.max_tokens) == (
        0.01,
        0.9,
        0.95,
        256,
        650,
    )
    assert c.selection == "fastest" and c.source == "teacher"
    assert all(f.metadata.get("help") for f in dataclasses.fields(SFTJobConfig))
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.epochs = 3


@pytest.mark.parametrize(
    "field,value",
    [
        ("epochs", 0),
        ("learning_rate", 0.0),
        ("global_batch_size", 12),
        ("per_device_batch_size", 0),
        ("warmup_ratio", 1.0),
        ("lr_scheduler", "step"),
        ("precision", "int8"),
        ("source", "web"),
        ("selection", "best"),
        ("split", "train"),
        ("max_tokens", 8),
        ("lora_rank", 0),
        ("base_model", " "),
        ("teacher_samples", 0),
        ("max_turns", 0),
        ("recovery_per_game", -1),
        ("guesser_prompt", "long"),
    ],
)
def test_bad_values_are_refused_naming_the_field(field, value):
    with pytest.raises(ValueError) as err:
        SFTJobConfig(**{field: value})
    assert str(err.value).startswith(field)


def test_gradient_accumulation_makes_up_the_global_batch():
    cpu = DeviceSetup("cpu", "float32")
    four_gpus = DeviceSetup("cuda", "bfloat16", world_size=4)
    assert cpu.accumulation(256, 8) == 32
    assert four_gpus.accumulation(256, 8) == 8
    assert four_gpus.accumulation(256, 48) == 2  # rounded up: never fewer sequences than asked


def test_turn_examples_train_answered_questions_with_the_whole_history_as_context():
    game = trajectory(
        "dog", [("Is it an animal?", Y), ("blah", INV), ("Is it a cat?", N), ("Is it a dog?", F)]
    )
    rows = turn_examples([game])
    assert [r["completion"][0]["content"] for r in rows] == [
        "Is it an animal?",
        "Is it a cat?",
        "Is it a dog?",
    ]
    assert [r["turn"] for r in rows] == [0, 2, 3]
    assert all(r["completion"][0]["role"] == "assistant" for r in rows)
    # the invalid turn is never trained but stays in the context of later turns
    assert rows[1]["prompt"] == guesser_messages(game.turns[:2])
    assert rows[1]["prompt"][-2] == {"role": "assistant", "content": "blah"}
    assert rows[0]["prompt"] == guesser_messages([])


def test_fastest_selection_keeps_ties_and_drops_slower_and_lost_games():
    fast_a = trajectory("dog", [("Is it an animal?", Y), ("Is it a dog?", F)], seed=1)
    fast_b = trajectory("dog", [("Is it a pet?", Y), ("Is it a dog?", F)], seed=2)
    slow = trajectory("dog", [("Is it big?", N), ("Is it a pet?", Y), ("Is it a dog?", F)], seed=3)
    lost = trajectory("cat", [("Is it big?", N)], seed=4)
    cat = trajectory("cat", [("Is it big?", N), ("Is it a cat?", F)], seed=5)
    games = [fast_a, slow, fast_b, lost, cat]
    assert select_games(games, "fastest") == [fast_a, fast_b, cat]
    assert select_games(games, "won") == [fast_a, slow, fast_b, cat]
    assert select_games(games, "all") == games


def test_stored_games_read_from_an_export_or_to_dict(tmp_path):
    game = trajectory("dog", [("Is it an animal?", Y), ("Is it a dog?", F)], seed=7)
    export_row = {
        "id": 3,
        "secret": "dog",
        "seed": 7,
        "outcome": "won",
        "guesser_name": "infogain",
        "config": json.dumps({"max_turns": 20}),
        "turns": [
            {
                "game_id": 3,
                "index": t.index,
                "question": t.question,
                "verdict": t.verdict.value,
                "feedback": t.feedback,
                "total_reward": t.total_reward,
                "reward": t.reward,
                "judged_by_username": None,
            }
            for t in game.turns
        ],
    }
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(export_row) + "\n" + json.dumps(game.to_dict()) + "\n")
    a, b = read_trajectories(path)
    assert a.won and b.won and a.guesser == "infogain"
    assert (
        [t.question for t in a.turns]
        == [t.question for t in b.turns]
        == ["Is it an animal?", "Is it a dog?"]
    )
    assert a.turns[1].verdict is F and a.config.max_turns == 20
    assert trajectory_from_row({"secret": "x", "turns": []}).outcome.value == "playing"


def test_games_file_is_filtered_by_the_word_list(tmp_path):
    from training.common.data import gather_games
    from training.reporting import ConsoleReporter

    path = tmp_path / "games.jsonl"
    games = [trajectory(w, [(f"Is it a {w}?", F)]) for w in ("dog", "cat", "car")]
    path.write_text("".join(json.dumps(g.to_dict()) + "\n" for g in games))
    (tmp_path / "words.txt").write_text("dog\ncar\n")
    config = SFTJobConfig(
        source="games", games_file=str(path), word_list=str(tmp_path / "words.txt")
    )
    reporter = ConsoleReporter(tmp_path / "out", stream=__import__("io").StringIO())
    assert [t.secret for t in gather_games(config, reporter)] == ["dog", "car"]
    # stored games resolved by the web app arrive already selected: no second filter
    assert len(gather_games(config, reporter, trajectories=games)) == 3


def test_recovery_needs_a_teacher():
    with pytest.raises(ValueError, match="recovery_per_game needs source=teacher"):
        SFTJobConfig(source="games", recovery_per_game=1)


def test_recovery_rows_append_wrong_guesses_and_train_the_teachers_next_question():
    from games.guessers.infogain import InfoGainGuesser
    from games.judges.kb import KBJudge
    from games.kb.questions import phrase
    from training.common.data import play_teacher

    pool = [
        "dog",
        "cat",
        "horse",
        "apple",
        "pear",
        "car",
        "boat",
        "chair",
        "table",
        "hammer",
        "violin",
        "river",
    ]
    teacher = InfoGainGuesser(pool=pool)
    games = play_teacher(teacher, KBJudge(), pool[:6])
    rows = recovery_examples(games, teacher, per_game=2, seed=3)
    assert len(rows) == 12 and rows == recovery_examples(games, teacher, per_game=2, seed=3)
    guesses = {phrase("isa", w, guess=True): w for w in pool}
    for row in rows:
        chat = row["prompt"]
        asked = [m["content"] for m in chat if m["role"] == "assistant"]
        answers = [m["content"] for m in chat if m["role"] == "user"][1:]
        game = next(g for g in games if g.secret == row["secret"])
        cut = next(i for i, q in enumerate(asked) if q in guesses and guesses[q] != row["secret"])
        # the game's own first turns, then only wrong guesses answered No
        assert asked[:cut] == [t.question for t in game.turns[:cut]] and 1 <= cut < game.n_turns
        assert 1 <= len(asked) - cut <= 2 and all(
            guesses.get(q) not in (None, row["secret"]) for q in asked[cut:]
        )
        assert answers[cut:] == ["No."] * (len(asked) - cut)
        # the completion is what the teacher asks after observing that history
        state = teacher.start(seed=game.seed)
        for turn in recovery_turns(chat):
            teacher.observe(state, turn)
        assert row["completion"] == [{"role": "assistant", "content": teacher.ask(state).question}]
    assert recovery_examples(games, teacher, per_game=0) == []


def recovery_turns(chat):
    from games.types import Turn

    asked = [m["content"] for m in chat if m["role"] == "assistant"]
    answers = [m["content"] for m in chat if m["role"] == "user"][1:]
    verdicts = {"Yes.": Verdict.YES, "No.": Verdict.NO, "I don't know.": Verdict.UNKNOWN}
    return [
        Turn(index=i, question=q, verdict=verdicts[a], feedback=a)
        for i, (q, a) in enumerate(zip(asked, answers))
    ]


@pytest.mark.parametrize("enabled", [False, True])
def test_gradient_checkpointing_reaches_trl_under_the_name_every_supported_transformers_knows(
    enabled, tmp_path
):
    """GPU workers run transformers 5.18-5.20 (vLLM's pin), whose TrainingArguments have no
    activation_checkpointing; TRL's configs default gradient_checkpointing to True, so the
    config's value must be passed, off included."""
    from trl import SFTConfig

    from training.common.config import TrainConfig
    from training.common.trainer import trainer_arguments

    cpu = DeviceSetup("cpu", "float32")
    keywords = trainer_arguments(TrainConfig(gradient_checkpointing=enabled), cpu, tmp_path)
    assert "activation_checkpointing" not in keywords
    assert SFTConfig(**keywords).gradient_checkpointing is enabled
