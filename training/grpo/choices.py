"""The GRPO config's choices, the paper's values that depend on the advantage, the named
presets and the rollout server's URL check (training.grpo.config imports them from here)."""

from __future__ import annotations

from typing import Any

ADVANTAGES = ("turn", "trajectory")
LOSS_AGG_MODES = ("token-mean", "seq-mean-token-mean")
PAPER_LOSS_AGG = {
    "turn": "token-mean",
    "trajectory": "seq-mean-token-mean",
}  # the reference's scripts
PAPER_LEARNING_RATE = {"turn": 3e-5, "trajectory": 1e-5}  # the reference's scripts' optim.lr
# λ of the reference's scripts: its CIA run weights ΔBelief 0.1 (weight_elicit), StarPO has none
PAPER_BELIEF_COEF = {"turn": 0.1, "trajectory": 0.0}
VAL_SAMPLINGS = ("paper", "greedy")
PENALTY_AT = ("end", "turn")
TURN_NORMALISATIONS = ("padded", "reached")
SCALE_REWARDS = ("group", "none")
ROLLOUT_BACKENDS = ("transformers", "vllm", "server")
ALL_SECRETS = -1  # val_secrets: every word of the validation list (verl's sample_count -1)

# Named settings the command line (`--preset NAME`) and the launch form (`?preset=NAME`) start
# from; every field not named keeps its default (the paper's), and any field can still be changed.
GRPO_PRESETS: dict[str, dict[str, Any]] = {
    # a step a CPU plays in minutes: 8 secrets × 8 games of at most 32 tokens a question, and no
    # validation games (the paper's 240 × 16 and 198 × 4 validation games are GPU-sized)
    "cpu": {
        "secrets_per_step": 8,
        "num_generations": 8,
        "max_completion_length": 32,
        "val_secrets": 0,
    },
}


def is_http_url(url: str) -> bool:
    """An http(s) URL with a host (and nothing after the path: no query or fragment)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return False
    return (
        parts.scheme in ("http", "https")
        and bool(parts.hostname)
        and not parts.query
        and not parts.fragment
        and url == url.strip()
    )
