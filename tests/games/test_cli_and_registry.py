import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from games.__main__ import run_play
from games.registry import SpecError, build_guesser, build_judge

ROOT = Path(__file__).resolve().parents[2]


def run(*args, timeout=300):
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def test_games_and_training_import_without_django_torch_or_vllm():
    code = (
        "import sys, games, games.engine, games.rollout, games.belief, games.registry, "
        "games.metrics, "
        "games.judges.kb, games.judges.learned, games.judges.hybrid, games.judge_eval, "
        "games.guessers.infogain, "
        "games.llm, games.llm.chat, training.reporting, training.smoke, training.judge;"
        "from games.registry import build_judge; "
        "build_judge('kb+learned').judge('dog', 'Is it big?');"
        "bad=[m for m in ('django','torch','vllm','transformers') if m in sys.modules]; print(bad)"
    )
    out = run("-c", code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_eval_prints_one_json_object_with_the_metrics():
    out = run(
        "-m",
        "games",
        "eval",
        "--guesser",
        "infogain",
        "--judge",
        "kb",
        "--words",
        "dbrl/paper_test",
        "--pool",
        "dbrl/solved",
        "--samples",
        "2",
        "--max-turns",
        "20",
        "--seed",
        "1",
        "--limit",
        "12",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    for key in (
        "success_rate",
        "success_ci95",
        "strict_success_rate",
        "strict_success_ci95",
        "pass_at_k",
        "mean_turns",
        "n_games",
        "invalid_rate",
    ):
        assert key in result
    assert (
        result["win_rule"] == "reference"
        and result["strict_success_rate"] <= result["success_rate"]
    )
    assert result["n_games"] == 2 * (12 - result["skipped_words"])
    assert result["success_rate"] >= 0.7 and result["invalid_rate"] == 0.0
    assert result["success_ci95"][0] <= result["success_rate"] <= result["success_ci95"][1]


def test_eval_is_deterministic_for_a_seed():
    args = [
        "-m",
        "games",
        "eval",
        "--guesser",
        "random",
        "--judge",
        "kb",
        "--words",
        "lmrl/objects",
        "--samples",
        "1",
        "--max-turns",
        "5",
        "--seed",
        "3",
        "--limit",
        "8",
        "--json",
    ]
    a, b = json.loads(run(*args).stdout), json.loads(run(*args).stdout)
    a.pop("seconds"), b.pop("seconds")
    assert a == b


def test_bad_specs_and_files_fail_with_clear_messages():
    out = run(
        "-m", "games", "eval", "--guesser", "telepathy", "--words", "dbrl/paper_test", "--json"
    )
    assert out.returncode == 2 and "unknown guesser spec 'telepathy'" in out.stderr
    out = run(
        "-m", "games", "eval", "--guesser", "infogain", "--words", "/nope/words.txt", "--json"
    )
    assert out.returncode == 2 and "/nope/words.txt" in out.stderr
    out = run(
        "-m", "games", "eval", "--guesser", "hf:/nope/model", "--words", "dbrl/paper_test", "--json"
    )
    assert out.returncode != 0 and "/nope/model" in out.stderr
    with pytest.raises(SpecError):
        build_judge("ensemble:kb")
    with pytest.raises(SpecError):
        build_guesser("hf:")


def test_registry_builds_kb_judges_in_each_sense_mode():
    assert build_judge("kb").name != build_judge("kb:any").name
    ensemble = build_judge("ensemble:kb,kb:any")
    answer = ensemble.judge("bank", "Is it a kind of slope?")
    assert answer.votes is not None and len(answer.votes) == 2


def test_terminal_play_as_guesser_reaches_the_end():
    stdin = io.StringIO("Is it an animal?\nIs it related to dogs?\nIs it a dog?\n")
    out = io.StringIO()
    args = SimpleNamespace(
        role="guesser",
        judge="kb",
        guesser="infogain",
        secret="dog",
        words="dbrl/paper_test",
        max_turns=20,
        seed=0,
        win_rule="strict",
    )
    assert run_play(args, stdin=stdin, out=out) == 0
    text = out.getvalue()
    assert "yes:" in text and "finished:" in text and "The word was: dog (won)" in text
    assert text.count("finished:") == 1  # under the strict rule a mention is not a guess


def test_terminal_play_as_answerer_asks_questions():
    stdin = io.StringIO("y\nn\nmaybe\ny\nwon\n")
    out = io.StringIO()
    args = SimpleNamespace(
        role="answerer",
        judge="kb",
        guesser="infogain",
        secret=None,
        words="dbrl/paper_test",
        max_turns=20,
        seed=0,
        win_rule="reference",
    )
    assert run_play(args, stdin=stdin, out=out) == 0
    assert out.getvalue().count("?") >= 4 and "Solved!" in out.getvalue()


def test_eval_samples_a_model_guesser_as_the_paper_validates_when_asked(tiny_model_dir, tmp_path):
    """--sampling paper: T 0.7, top-p 0.8, top-k 20 (the reference's val_kwargs), the guesser's
    own token budget kept; the JSON says which sampling the table used."""
    from games.__main__ import main

    words = tmp_path / "words.txt"
    words.write_text("dog\n")

    def sampling(*extra):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(
                [
                    "eval",
                    f"--guesser=hf:{tiny_model_dir}",
                    f"--words={words}",
                    "--max-turns=1",
                    "--json",
                    *extra,
                ]
            )
        return json.loads(out.getvalue())["sampling"]

    default, paper = sampling(), sampling("--sampling=paper")
    assert (default["temperature"], default["top_p"], default["top_k"]) == (1.0, 1.0, 0)
    assert (paper["temperature"], paper["top_p"], paper["top_k"]) == (0.7, 0.8, 20)
    assert paper["max_new_tokens"] == default["max_new_tokens"]
