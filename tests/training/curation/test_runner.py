import io
import json

import pytest

from games.guessers.infogain import InfoGainGuesser
from games.judges.base import JudgeRequest
from games.judges.kb import KBJudge
from games.llm.base import Generation
from games.types import Verdict
from training.curation import CurationConfig, Inputs, run
from training.curation.stages import NoisyJudge, WordGames, difficulties
from training.reporting import ConsoleReporter, StopRequested

# fmt: off
NOUNS = [
    "dog", "cat", "horse", "apple", "banana", "car", "bicycle", "chair", "table", "guitar",
    "piano", "hammer", "kite", "moon", "river", "mountain", "shoe", "hat", "bread", "cheese",
    "elephant", "spoon", "bottle", "book",
]
# fmt: on


def inputs(**kw):
    judge = KBJudge()
    return Inputs(
        judge=judge,
        kb=judge.kb,
        make_guesser=lambda pool: InfoGainGuesser(kb=judge.kb, pool=pool),
        **kw,
    )


def reporter(tmp_path, **kw):
    return ConsoleReporter(tmp_path, stream=io.StringIO(), **kw)


def logged(rep):
    return "\n".join(r["message"] for r in rep.records if r["event"] == "log")


def test_funnel_accounts_for_every_uploaded_entry_and_logs_each_drop(tmp_path):
    text = (
        "\n".join(NOUNS).replace("cheese", "  Cheese")
        + "\nDog\n\nxqzzyplonk\ndogs\n42 apples\nlove\ngroup\n"
    )
    config = CurationConfig(
        source="text", words=text, samples=2, exclude_lexnames=("noun.feeling",), seed=1
    )
    rep = reporter(tmp_path)
    result = run(config, rep, inputs=inputs())
    funnel = {s["stage"]: s for s in result.funnel}
    assert [s["stage"] for s in result.funnel] == [
        "source",
        "judge filter",
        "solvability",
        "difficulty",
        "splits",
        "training subsets",
    ]
    for stage in result.funnel:
        assert stage["in"] == stage["out"] + sum(stage["dropped"].values())
    for before, after in zip(result.funnel, result.funnel[1:]):
        assert after["in"] == before["out"]
    assert funnel["source"]["in"] == len(NOUNS) + 7
    assert funnel["source"]["dropped"] == {
        "duplicate of an earlier entry": 1,
        "blank entry": 1,
        "not a word (letters, spaces, hyphens, apostrophes only)": 1,
    }
    judge = funnel["judge filter"]["dropped"]
    assert judge == {
        "not a knowledge-base noun": 1,
        "same knowledge-base noun as another word": 1,
        "lexical file noun.feeling": 1,
        "fewer than 10 knowledge-base features": 1,
    }
    assert funnel["judge filter"]["examples"]["same knowledge-base noun as another word"] == [
        "dogs (= dog)"
    ]
    log = logged(rep)
    for word in ("xqzzyplonk", "42 apples", "love", "group", "dogs (= dog)"):
        assert word in log
    dropped = [json.loads(line) for line in (tmp_path / "dropped.jsonl").read_text().splitlines()]
    assert len(dropped) == funnel["source"]["in"] - len(result.entries)
    assert {d["word"] for d in dropped} >= {"xqzzyplonk", "love", "group"}
    assert sorted(e["word"] for e in result.entries) == sorted(NOUNS)
    assert (
        next(e for e in result.entries if e["word"] == "cheese")["stats"]["given_as"] == "  Cheese"
    )
    entry = next(e for e in result.entries if e["word"] == "dog")
    assert "given_as" not in entry["stats"] and entry["category"] == "animal"
    assert (
        entry["stats"]["games"] == 2
        and entry["stats"]["features"] >= 10
        and entry["stats"]["lexname"]
    )
    assert json.loads((tmp_path / "funnel.json").read_text())["stages"] == result.funnel
    assert (
        result.summary["knowledge_base"]["nouns"] > 10_000
        and "WordNet" in result.summary["knowledge_base"]["source"]
    )


def test_solvability_threshold_and_difficulty_order(tmp_path):
    config = CurationConfig(
        source="text",
        words="\n".join(NOUNS),
        samples=6,
        min_solved=2,
        max_turns=5,
        answer_noise=0.3,
        difficulty="logit",
        val=0,
        test=0,
        sft=0,
        rl=1.0,
        rl_band_low=0.3,
        rl_band_high=0.7,
        curriculum=(0.5,),
    )
    result = run(config, reporter(tmp_path), inputs=inputs())
    stage = next(s for s in result.funnel if s["stage"] == "solvability")
    reason = "solved fewer than 2 of 6 games"
    assert stage["dropped"].get(reason, 0) > 0 and stage["out"] == len(result.entries)
    assert all(
        e["stats"]["solved"] >= 2 and e["solve_rate"] == e["stats"]["solved"] / 6
        for e in result.entries
    )
    by_rate = sorted(result.entries, key=lambda e: e["solve_rate"])
    assert all(
        a["difficulty"] >= b["difficulty"] for a, b in zip(by_rate, by_rate[1:])
    )  # easier = lower
    assert all(e["mean_questions"] <= 5 for e in result.entries)
    for e in result.entries:
        assert ("rl_band" in e["stats"]["subsets"]) == (0.3 <= e["solve_rate"] <= 0.7)
        assert ("curriculum_50" in e["stats"]["subsets"]) == (e["solve_rate"] >= 0.5)


def test_rasch_difficulty_is_centred_and_decreases_with_solve_rate():
    games = {"a": WordGames(8, 8), "b": WordGames(8, 4), "c": WordGames(8, 1), "d": WordGames(8, 0)}
    b = difficulties(games, "rasch")
    assert b["a"] < b["b"] < b["c"] < b["d"]
    assert abs(sum(b.values())) < 1e-6


def test_stopped_run_resumes_from_its_checkpoint_with_the_same_result(tmp_path):
    config = CurationConfig(
        source="text",
        words="\n".join(NOUNS),
        samples=4,
        batch_size=16,
        answer_noise=0.2,
        max_turns=8,
    )
    whole = run(config, reporter(tmp_path / "whole"), inputs=inputs())
    rep = reporter(tmp_path / "parts", stop_after_progress=0.3)
    with pytest.raises(StopRequested):
        run(config, rep, inputs=inputs())
    assert rep.last_checkpoint()["step"] > 0
    rep.stop_after_progress = None
    resumed = run(config, rep, inputs=inputs())
    assert "resuming after" in logged(rep)
    assert resumed.entries == whole.entries and resumed.funnel == whole.funnel


class FakeBackend:
    name = "fake"

    def generate(self, chats, sampling, seeds=None):
        out = []
        for chat in chats:
            prompt = chat[-1]["content"]
            text = (
                "<answer>No</answer>"
                if "'kite'" in prompt
                else "I cannot say."
                if "'moon'" in prompt
                else "Concrete enough. <answer>Yes</answer>"
            )
            out.append(Generation(text=text))
        return out


def test_optional_llm_fairness_judge_drops_unfair_and_unanswered_words(tmp_path):
    config = CurationConfig(source="text", words="\n".join(NOUNS), samples=1)
    result = run(config, reporter(tmp_path), inputs=inputs(fairness=FakeBackend()))
    judge = next(s for s in result.funnel if s["stage"] == "judge filter")
    assert judge["examples"] == {
        "LLM judge: no yes/no answer": ["moon"],
        "LLM judge: not a fair secret": ["kite"],
    }
    assert {"kite", "moon"}.isdisjoint(e["word"] for e in result.entries)


def test_count_splits_larger_than_the_filtered_pool_fail_before_any_game(tmp_path):
    config = CurationConfig(
        source="text",
        words="\n".join(NOUNS) + "\nxqzzy",
        split_by="count",
        val=10,
        test=10,
        sft=5,
        rl=0,
    )
    rep = reporter(tmp_path)
    with pytest.raises(ValueError, match="need 25 words but only 24 passed"):
        run(config, rep, inputs=inputs())
    assert not any(r["event"] == "metrics" for r in rep.records)


def test_noisy_judge_flips_yes_no_answers_deterministically():
    inner = KBJudge()
    noisy = NoisyJudge(inner, 0.5)
    requests = [JudgeRequest("dog", "Is it an animal?", seed=s) for s in range(200)]
    first = [a.verdict for a in noisy.judge_batch(requests)]
    assert first == [a.verdict for a in noisy.judge_batch(requests)]
    flipped = sum(v is Verdict.NO for v in first)
    assert 60 < flipped < 140
    assert all(a.verdict is Verdict.YES for a in NoisyJudge(inner, 0.0).judge_batch(requests))


def test_top_nouns_source_takes_frequent_kb_nouns_and_says_why_it_skips_others():
    from games.kb import load_kb
    from games.kb.questions import FUNCTION_WORDS
    from training.curation.stages import source_top_nouns

    kb = load_kb()
    stage = source_top_nouns(kb, 60)
    words = [c.word for c in stage.kept]
    assert len(words) == 60 and stage.n_in == 60 + stage.n_dropped
    assert all(kb.lookup(w) is not None and w not in FUNCTION_WORDS and w.isalpha() for w in words)
    assert {"function word", "shorter than 3 letters"} <= set(stage.dropped)
    zipf = [float(kb.noun_zipf[kb.noun_index[w]]) for w in words]
    assert zipf == sorted(zipf, reverse=True)


def test_command_line_reads_a_words_file_and_writes_the_outputs(tmp_path, capsys):
    from training.curation.__main__ import main

    (tmp_path / "words.txt").write_text("\n".join(NOUNS[:8]) + "\nnotaword123\n")
    assert (
        main(
            [
                "--words-file",
                str(tmp_path / "words.txt"),
                "--samples",
                "1",
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["kept"] == 8 and report["funnel"][0]["dropped"] == {
        "not a word (letters, spaces, hyphens, apostrophes only)": 1
    }
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {
        "curated.jsonl",
        "dropped.jsonl",
        "funnel.json",
    }
    assert main(["--source", "text", "--val", "0.9", "--test", "0.9"]) == 2
