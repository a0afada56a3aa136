"""ΔBelief against log-probs computed by hand with the tiny model."""

from __future__ import annotations

import pytest

from games.belief import annotate_beliefs, delta_beliefs, log_beliefs
from games.llm.chat import GuesserFormat
from games.types import Outcome, Trajectory, Turn, Verdict

TURNS = [
    Turn(0, "Is it an animal?", Verdict.YES, "Yes."),
    Turn(1, "Does it have fur?", Verdict.NO, "No."),
    Turn(2, "Is it a snake?", Verdict.FINISHED, "Correct! You guessed the secret."),
]


def belief_by_hand(backend, history, secret: str) -> float:
    """log p(secret tokens | chat after `history` + "Is it '"), straight from the model."""
    import torch

    tok = backend.tokenizer
    messages = GuesserFormat().messages(history) + [
        {"role": "assistant", "content": f"Is it '{secret}'?"}
    ]
    ids = tok(tok.apply_chat_template(messages, tokenize=False), add_special_tokens=False)[
        "input_ids"
    ]
    secret_ids = tok(secret, add_special_tokens=False)["input_ids"]
    tail = tok("'?<|end|>\n", add_special_tokens=False)["input_ids"]
    start = len(ids) - len(tail) - len(secret_ids)
    assert ids[start:] == secret_ids + tail  # the secret is tokenised on its own inside the quotes
    with torch.no_grad():
        logp = torch.log_softmax(
            backend.model(input_ids=torch.tensor([ids])).logits[0].double(), dim=-1
        )
    return float(sum(logp[start + k - 1, t] for k, t in enumerate(secret_ids)))


def test_delta_belief_matches_the_model_by_hand(tiny_backend):
    tiny_backend.clear_cache()
    traj_a = Trajectory(
        secret="snake", seed=0, turns=[Turn(**vars(t)) for t in TURNS], outcome=Outcome.WON
    )
    traj_b = Trajectory(secret="ice cream", seed=1, turns=[Turn(**vars(t)) for t in TURNS[:2]])
    annotate_beliefs(tiny_backend, [traj_a, traj_b])
    for traj in (traj_a, traj_b):
        by_hand = [
            belief_by_hand(tiny_backend, traj.turns[:t], traj.secret)
            for t in range(len(traj.turns) + 1)
        ]
        assert traj.initial_belief == pytest.approx(by_hand[0], abs=1e-4)
        assert [t.belief for t in traj.turns] == pytest.approx(by_hand[1:], abs=1e-4)
        expected_delta = [b - a for a, b in zip(by_hand, by_hand[1:])]
        assert [t.delta_belief for t in traj.turns] == pytest.approx(expected_delta, abs=1e-4)
    assert len({t.belief for t in traj_a.turns}) == 3  # the history changes the belief


def test_log_beliefs_batch_equals_one_by_one(tiny_backend):
    items = [(TURNS[:1], "snake"), ([], "apple"), (TURNS[:2], "rain")]
    batched = log_beliefs(tiny_backend, items)
    tiny_backend.clear_cache()
    single = [log_beliefs(tiny_backend, [item])[0] for item in items]
    assert batched == pytest.approx(single, abs=1e-4)
    assert all(b < 0 for b in batched) and log_beliefs(tiny_backend, []) == []


def test_the_chat_format_is_the_policys(scripted_backend):
    backend = scripted_backend(lambda chat, seed: "")
    calls = []
    backend.score_spans = lambda chats, replies, spans: (
        calls.append((chats, replies, spans)) or [0.0] * len(chats)
    )
    log_beliefs(
        backend,
        [(TURNS[:1], "snake")],
        chat_format=GuesserFormat(system_prompt="S", repeat_prompt=True),
    )
    chats, replies, spans = calls[0]
    assert chats[0][0] == {"role": "system", "content": "S"} and chats[0][-1]["content"].startswith(
        "Yes. Ask"
    )
    assert replies == ["Is it 'snake'?"] and replies[0][slice(*spans[0])] == "snake"


def test_delta_beliefs():
    assert delta_beliefs([-5.0, -4.0, -4.5]) == [1.0, -0.5]
    assert delta_beliefs([-1.0]) == []
