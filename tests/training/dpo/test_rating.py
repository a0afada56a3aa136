"""The `rating` proxy reward (CollabLLM's judge rating): the expected digit 1–5 under a judge
model's span scores, checked by hand and against the tiny model's next-token probabilities; the
prompt; the text fallback of a backend that cannot score; the config; a whole run."""

from __future__ import annotations

import io
import json
import math
import shutil

import pytest

from games.judges.kb import KBJudge
from games.llm.base import LLMBackend
from games.llm.chat import GuesserFormat
from games.llm.openai_backend import OpenAIBackend, OpenAIConfig
from games.types import Verdict
from tests.training.dpo.test_pairs import ANIMAL, VEHICLE, Scripted
from tests.training.sft.helpers import trajectory, turn
from training.dpo import pairs as P
from training.dpo.config import DPOJobConfig

Y, N, F = Verdict.YES, Verdict.NO, Verdict.FINISHED
DOG, GIBBERISH = "Is it a dog?", "dog dog dog"
ENGINE = {DOG: 1.95, VEHICLE: -0.05, ANIMAL: -1.05, GIBBERISH: -5.05}  # win, no, repeated, invalid


@pytest.fixture
def branch():
    """After "animal? yes" for the secret dog: a win, a no, a repeat and an invalid candidate."""
    game = trajectory("dog", [(ANIMAL, Y), ("Is it a cat?", N), (DOG, F)])
    policy = Scripted([DOG, VEHICLE, ANIMAL, GIBBERISH])
    (b,) = P.sample_candidates(policy, KBJudge(), [(game, 1)], n=4, max_turns=20, seed=0)
    assert [c.turn.total_reward for c in b.candidates] == pytest.approx(
        [ENGINE[c.text] for c in b.candidates]
    )
    return b


def logs(*probs: float, shift: float = -3.0) -> list[float]:
    """Log-probs of "1".."5" (shifted: the judge gives other replies mass too)."""
    return [(math.log(p) if p > 0 else -60.0) + shift for p in probs]


class SpanBackend(LLMBackend):
    """Scores reply k of the rating chat of candidate c as `table[c][k - 1]`; records its calls."""

    def __init__(self, history, table: dict[str, list[float]]):
        self.table = {P.rating_messages(history, c)[-1]["content"]: v for c, v in table.items()}
        self.calls: list[tuple[list, list, list]] = []

    def generate(self, chats, sampling, *, seeds=None):  # pragma: no cover - must not be used
        raise AssertionError("a backend that scores spans is not asked for text")

    def score_spans(self, chats, replies, spans):
        self.calls.append((list(chats), list(replies), list(spans)))
        return [
            self.table[chat[-1]["content"]][int(reply) - 1] for chat, reply in zip(chats, replies)
        ]


TABLE = {
    DOG: logs(0.1, 0.2, 0.4, 0.2, 0.1),  # 0.1 + 0.4 + 1.2 + 0.8 + 0.5 = 3.0
    VEHICLE: logs(0.1, 0.1, 0.1, 0.2, 0.5, shift=-1.0),  # 0.1 + 0.2 + 0.3 + 0.8 + 2.5 = 3.9
    ANIMAL: logs(0.5, 0.2, 0.1, 0.1, 0.1, shift=-9.0),  # 0.5 + 0.4 + 0.3 + 0.4 + 0.5 = 2.1
    GIBBERISH: logs(1.0, 0, 0, 0, 0),  # 1
}
RATINGS = {DOG: 3.0, VEHICLE: 3.9, ANIMAL: 2.1, GIBBERISH: 1.0}


def test_expected_rating_by_hand():
    assert P.expected_rating(logs(0.1, 0.2, 0.4, 0.2, 0.1)) == pytest.approx(3.0)
    assert P.expected_rating(logs(0.1, 0.1, 0.1, 0.2, 0.5, shift=-20)) == pytest.approx(3.9)
    assert P.expected_rating([0.0] * 5) == pytest.approx(3.0)  # uniform
    assert P.expected_rating([-1000.0, -1000.0, -1000.0, -1000.0, -1.0]) == pytest.approx(5.0)


def test_rating_reward_is_the_centred_rating_plus_the_engine_reward(branch):
    backend = SpanBackend(branch.history, TABLE)
    P.score_rating([branch], backend)
    assert [c.rating for c in branch.candidates] == pytest.approx(
        [RATINGS[c.text] for c in branch.candidates]
    )
    # (rating - 3) / 2 + engine reward: 0 + 1.95, 0.45 - 0.05, -0.45 - 1.05, -1 - 5.05
    assert [c.reward for c in branch.candidates] == pytest.approx([1.95, 0.40, -1.50, -6.05])
    (call,) = backend.calls  # every candidate in one call, the five digits as one-character replies
    chats, replies, spans = call
    assert replies == ["1", "2", "3", "4", "5"] * 4 and spans == [(0, 1)] * 20
    assert [c[-1]["content"] for c in chats[::5]] == [
        P.rating_messages(branch.history, c.text)[-1]["content"] for c in branch.candidates
    ]
    (pair,) = P.make_pairs([branch], GuesserFormat(), min_reward_gap=0.25)
    assert (pair["chosen"][0]["content"], pair["rejected"][0]["content"]) == (DOG, GIBBERISH)
    stats = P.candidate_stats([branch])
    assert stats["candidates/rating_mean"] == pytest.approx((3.0 + 3.9 + 2.1 + 1.0) / 4)
    assert stats["candidates/rating_unparsed_rate"] == 0.0


def test_rating_is_batched_in_chunks_across_branches(branch):
    other = P.Branch(
        branch.trajectory, branch.t, [P.Candidate(c.text, c.turn) for c in branch.candidates]
    )
    backend = SpanBackend(branch.history, TABLE)
    P.score_rating([branch, other], backend, batch_size=3)
    assert [len(chats) for chats, _, _ in backend.calls] == [15, 15, 10]  # 8 candidates × 5 digits
    assert [c.reward for c in other.candidates] == pytest.approx(
        [c.reward for c in branch.candidates]
    )
    assert "candidates/rating_mean" not in P.candidate_stats(
        [P.Branch(branch.trajectory, 1, [P.Candidate("x", branch.candidates[0].turn)])]
    )  # only rated candidates report ratings


def test_the_prompt_has_the_rubric_the_history_and_the_candidate():
    history = [turn(0, ANIMAL, Y), turn(1, VEHICLE, N), turn(2, "dog dog", Verdict.INVALID)]
    system, user = P.rating_messages(history, "Is it a pet?", max_turns=12)
    assert system["role"] == "system" and user["role"] == "user"
    for words in ("yes/no", "not asked before", "splits the possibilities", "guess", "1 to 5"):
        assert words in system["content"]
    text = user["content"]
    assert f"Q: {ANIMAL}\nA: Yes\nQ: {VEHICLE}\nA: No\nQ: dog dog\nA: (invalid" in text
    assert text.index("dog dog") < text.index("Is it a pet?") and "(4 of 12)" in text
    assert text.rstrip().endswith("Rating (1-5):")
    first = P.rating_messages([], "Is it alive?")[-1]["content"]
    assert "Q:" not in first and "first question" in first and "Is it alive?" in first


class ScriptedServer(OpenAIBackend):
    """An OpenAI-compatible server (no span scoring) whose replies are scripted per candidate."""

    def __init__(self, replies: dict[str, str]):
        super().__init__(OpenAIConfig(base_url="http://127.0.0.1:9/v1", model="rater"))
        self.replies, self.bodies = replies, []

    def _post(self, body):
        self.bodies.append(body)
        user = body["messages"][-1]["content"]
        text = next(r for c, r in self.replies.items() if f"): {c}\n" in user)
        return {"choices": [{"message": {"content": text}, "finish_reason": "stop"}]}


def test_a_backend_that_cannot_score_spans_is_asked_for_a_digit(branch):
    server = ScriptedServer(
        {
            DOG: "4",
            VEHICLE: "Rating: 2 out of 5.",
            ANIMAL: "<think>5? no.</think> 1",
            GIBBERISH: "I cannot rate this (10/10).",
        }
    )
    with pytest.raises(NotImplementedError):
        server.score_spans([[]], ["1"], [(0, 1)])
    P.score_rating([branch], server)
    assert [(c.rating, c.rating_parsed) for c in branch.candidates] == [
        (4.0, True),
        (2.0, True),
        (1.0, True),
        (3.0, False),
    ]  # no digit 1–5: a neutral 3
    assert [c.reward for c in branch.candidates] == pytest.approx(
        [0.5 + 1.95, -0.5 - 0.05, -1 - 1.05, 0 - 5.05]
    )
    assert len(server.bodies) == 4 and all(b["temperature"] == 0.0 for b in server.bodies)
    assert P.candidate_stats([branch])["candidates/rating_unparsed_rate"] == 0.25
    assert [
        P.parse_rating(t) for t in ("5", " 3.", "3/5", "12", "0", "", "<think>4", "rate: 2, not 4")
    ] == [5, 3, 3, None, None, None, None, 2]


def test_config_needs_a_rating_model_spec():
    with pytest.raises(ValueError, match="^rating_model: reward=rating needs"):
        DPOJobConfig(reward="rating")
    with pytest.raises(ValueError, match="^rating_model: reward=rating needs"):
        DPOJobConfig(reward="rating", rating_model="   ")
    for bad in ("qwen3-1.7b", "hf:", "kb", "gpt:x"):  # a model spec name, no target, not an LLM
        with pytest.raises(ValueError, match="^rating_model must be a model spec"):
            DPOJobConfig(reward="rating", rating_model=bad)
    for good in (
        "hf:var/models/tiny",
        "transformers:/m",
        "vllm:/m",
        "openai:http://h:8000/v1#qwen",
    ):
        assert DPOJobConfig(reward="rating", rating_model=good).rating_model == good
    assert DPOJobConfig(reward="infogain").rating_model == ""


def test_rating_backend_reuses_the_policy_only_for_its_own_folder(tiny_dir, tmp_path):
    from games.llm.transformers_backend import TransformersBackend
    from training.dpo.trainer import rating_backend

    policy = object()
    assert rating_backend(f"hf:{tiny_dir}/", policy, str(tiny_dir)) == (policy, True)
    assert rating_backend(f"transformers:{tiny_dir}", policy, str(tiny_dir)) == (policy, True)
    copy = shutil.copytree(tiny_dir, tmp_path / "rater")
    other, shared = rating_backend(f"hf:{copy}", policy, str(tiny_dir))
    assert isinstance(other, TransformersBackend) and not shared and other.config.model == str(copy)
    merged, shared = rating_backend(
        f"hf:{tiny_dir}", policy, None
    )  # the policy had an adapter merged in
    assert isinstance(merged, TransformersBackend) and not shared
    server, shared = rating_backend("openai:http://127.0.0.1:9/v1#rater", policy, str(tiny_dir))
    assert isinstance(server, OpenAIBackend) and server.config.model == "rater" and not shared


def test_span_rating_is_the_next_token_distribution_over_the_digits(tiny_dir, branch):
    """On the tiny model: the same expectation as reading the logits of the token after the
    prompt directly."""
    import torch

    from games.llm.transformers_backend import TransformersBackend

    backend = TransformersBackend(str(tiny_dir), prefix_cache_mb=0, precision="float32")
    P.score_rating([branch], backend)
    tok, model = backend.tokenizer, backend.model
    digits = [tok.convert_tokens_to_ids(d) for d in "12345"]
    for c in branch.candidates:
        ids = tok.apply_chat_template(
            P.rating_messages(branch.history, c.text),
            add_generation_prompt=True,
            tokenize=True,
            return_dict=False,
        )
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0, -1]
        p = torch.softmax(logits[digits], dim=-1)
        expected = float((p * torch.arange(1, 6)).sum())
        assert c.rating == pytest.approx(expected, abs=1e-4)
        assert c.reward == pytest.approx((expected - 3) / 2 + ENGINE[c.text], abs=1e-4)
    assert len({round(c.rating, 6) for c in branch.candidates}) == 4  # the candidate matters


def test_run_with_the_rating_reward_on_the_tiny_model(tiny_dir, tmp_path, monkeypatch):
    import games.registry
    from games.engine import reward_parts
    from games.types import GameConfig
    from tests.training.dpo.test_trainer import config
    from training.dpo.trainer import PAIRS_FILE, run
    from training.reporting import ConsoleReporter

    def no_second_model(*args, **kwargs):
        raise AssertionError("the policy's own folder is rated by the policy backend")

    monkeypatch.setattr(games.registry, "_backend", no_second_model)
    reporter = ConsoleReporter(tmp_path, stream=io.StringIO())
    c = config(
        reward="rating",
        rating_model=f"hf:{tiny_dir}",
        min_reward_gap=0.0,
        candidates=3,
        prefixes_per_game=2,
        max_new_tokens=8,
        max_steps=1,
    )
    result = run(
        c,
        reporter,
        model_path=str(tiny_dir),
        words=["dog", "car"],
        pool=["dog", "cat", "car", "bus"],
    )
    pairs = [json.loads(line) for line in (tmp_path / PAIRS_FILE).read_text().splitlines()]
    assert result["pairs"] == len(pairs) >= 2 and result["global_step"] == 1
    for p in pairs:
        assert p["chosen_reward"] > p["rejected_reward"]
        for side in ("chosen", "rejected"):  # the rating part of the reward lies in [-1, 1]
            engine = sum(reward_parts(Verdict(p[f"{side}_verdict"]), GameConfig()).values())
            assert -1 <= p[f"{side}_reward"] - engine <= 1
    stats = next(r for r in reporter.records if r["event"] == "metrics")
    assert (
        1 <= stats["candidates/rating_mean"] <= 5
        and stats["candidates/rating_unparsed_rate"] == 0.0
    )
    assert any(
        "with the policy" in r.get("message", "") for r in reporter.records if r["event"] == "log"
    )
