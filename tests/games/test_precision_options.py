"""Where jobs and the command line pass a precision, and where a person's game asks for one-row
decoding: only to the specs that run a model here."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from games.registry import build_guesser, one_row_options, precision_options, precision_record


def test_precision_goes_only_to_specs_that_run_a_model_here():
    for spec in ("hf:/m", "vllm:/m", "pretrained", "pretrained:/j", "hf:/m?precision=bf16"):
        assert precision_options(spec, "bfloat16") == {"precision": "bfloat16"}
    for spec in ("kb", "kb:any", "infogain", "natural", "learned", "openai:http://x#m"):
        assert precision_options(spec, "bfloat16") == {}
    assert precision_options("hf:/m", None) == precision_options("hf:/m", "auto") == {}


def test_one_row_decoding_is_asked_of_local_transformers_models_only():
    assert one_row_options("hf:/m") == {"one_row": True}
    assert one_row_options("hf:/m?precision=float32") == {"one_row": True}
    assert (
        one_row_options("vllm:/m") == one_row_options("kb") == one_row_options("openai:u#m") == {}
    )


def test_a_persons_game_keeps_float32_where_batches_get_bf16(tiny_model_dir, monkeypatch):
    monkeypatch.setenv("TWENTYQ_CPU_BF16", "1")
    spec = f"hf:{tiny_model_dir}"
    batched = build_guesser(spec, device="cpu")
    person = build_guesser(spec, device="cpu", **one_row_options(spec))
    assert (batched.backend.precision, person.backend.precision) == ("bfloat16", "float32")
    assert precision_record("auto", guesser=person, judge=None) == {
        "asked": "auto",
        "guesser": "float32",
        "judge": None,
    }


def _eval(tiny_model_dir, tmp_path, *extra):
    from games.__main__ import main

    words = tmp_path / "words.txt"
    words.write_text("dog\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            [
                "eval",
                f"--guesser=hf:{tiny_model_dir}",
                f"--words={words}",
                "--max-turns=1",
                "--json",
                *extra,
            ]
        )
    assert code == 0
    return json.loads(out.getvalue())["precision"]


def test_games_eval_takes_a_precision_and_reports_what_the_models_ran_at(
    tiny_model_dir, tmp_path, capsys
):
    assert _eval(tiny_model_dir, tmp_path, "--precision=bf16") == {
        "asked": "bfloat16",
        "guesser": "bfloat16",
        "judge": None,  # the knowledge base runs no model
    }
    assert _eval(tiny_model_dir, tmp_path, "--precision", "float32")["guesser"] == "float32"
    with pytest.raises(SystemExit) as exit_:
        _eval(tiny_model_dir, tmp_path, "--precision=half")
    assert exit_.value.code == 2 and "unknown precision 'half'" in capsys.readouterr().err
