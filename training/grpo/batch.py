"""Multi-turn training sequences from played trajectories, with action masks and advantages.

`games.rollout` stores per turn the prompt token ids the guesser saw and the token ids it
generated (with their log-probs) in `turn.extra`. A game becomes one sequence
`prompt_1 · actions_1 · env_2 · actions_2 · …` when every turn's prompt extends the previous
prompt + actions token for token (the usual case: the reply was one question ending in the
end-of-turn token); `env_t` are the judge's feedback and chat tokens, masked from the loss. Where
a prompt does not extend the sequence (a reply cut at its first question mark, a reply without an
end-of-turn token, a non-canonical tokenisation), a new row starts from that turn's own prompt,
so every generated token is scored in exactly the context it was sampled in.

The end-of-turn token that closes a question (`<|im_end|>` in ChatML) stays in the sequence but
out of the loss where `end_of_turn` names it (config.mask_end_of_turn, the reference's mask: its
generation.py trains the tokens strictly inside each assistant segment).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from games.types import Trajectory


@dataclass
class Row:
    game: int  # index of the trajectory (the "sequence" of seq-mean-token-mean)
    input_ids: list[int] = field(default_factory=list)
    action_mask: list[int] = field(default_factory=list)  # 1 on the guesser's generated tokens
    advantages: list[float] = field(default_factory=list)  # per token (0 off the mask)
    rollout_logps: list[float] = field(default_factory=list)  # sampler's log-probs (0 off the mask)
    turn_index: list[int] = field(
        default_factory=list
    )  # the turn a token belongs to (-1 for context)

    def extend(
        self,
        ids: Sequence[int],
        *,
        action: bool,
        advantage: float = 0.0,
        logps: Sequence[float] | None = None,
        turn: int = -1,
    ) -> None:
        self.input_ids += [int(t) for t in ids]
        self.action_mask += [int(action)] * len(ids)
        self.advantages += [float(advantage) if action else 0.0] * len(ids)
        self.rollout_logps += [float(p) for p in logps] if logps is not None else [0.0] * len(ids)
        self.turn_index += [turn if action else -1] * len(ids)

    def __len__(self) -> int:
        return len(self.input_ids)


def turn_tokens(turn) -> tuple[list[int], list[int], list[float]]:
    extra = turn.extra or {}
    prompt, actions, logps = (
        extra.get("prompt_token_ids"),
        extra.get("token_ids"),
        extra.get("logprobs"),
    )
    if not prompt or actions is None:
        raise ValueError(
            f"turn {turn.index} has no prompt/generated token ids "
            "(roll out with a local LLM guesser)"
        )
    logps = list(logps or [])
    if len(logps) != len(actions):
        logps = [0.0] * len(
            actions
        )  # remote backends may not report them; only a diagnostic uses them
    return list(prompt), list(actions), logps


def end_of_turn_ids(tokenizer: Any, model: Any = None) -> frozenset[int]:
    """The ids that end a generated turn: the tokenizer's end-of-sequence token, ChatML's
    `<|im_end|>` where the vocabulary has it, and the model's generation config's ones."""
    ids = {tokenizer.eos_token_id}
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    ids.add(im_end if im_end != tokenizer.unk_token_id else None)
    extra = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids.update(extra if isinstance(extra, (list, tuple)) else [extra])
    return frozenset(int(i) for i in ids if i is not None)


def build_rows(
    trajectories: Sequence[Trajectory],
    advantages: Sequence[Sequence[float]],
    end_of_turn: Collection[int] = (),
) -> list[Row]:
    """Rows for the games; `advantages[g][t]` is the advantage of turn t of game g (per-turn), or
    the same value for every turn (trajectory level). Turns without generated tokens are skipped.
    A turn's last generated token in `end_of_turn` is context, not trained."""
    if len(trajectories) != len(advantages):
        raise ValueError("one advantage list per trajectory")
    rows: list[Row] = []
    for g, (traj, adv) in enumerate(zip(trajectories, advantages)):
        if len(adv) != len(traj.turns):
            raise ValueError(f"game {g}: {len(adv)} advantages for {len(traj.turns)} turns")
        row: Row | None = None
        for t, turn in enumerate(traj.turns):
            prompt, actions, logps = turn_tokens(turn)
            if not actions:
                continue
            if row is not None and len(prompt) >= len(row) and prompt[: len(row)] == row.input_ids:
                row.extend(prompt[len(row) :], action=False)
            else:
                row = Row(game=g)
                rows.append(row)
                row.extend(prompt, action=False)
            closing = 1 if actions[-1] in end_of_turn else 0
            body = len(actions) - closing
            row.extend(actions[:body], action=True, advantage=adv[t], logps=logps[:body], turn=t)
            if closing:
                row.extend(actions[body:], action=False)
    return rows


def collate(rows: Sequence[Row], pad_id: int):
    """Right-padded tensors: input_ids, attention_mask, and (shifted to the targets, i.e. aligned
    with `input_ids[:, 1:]`) action mask, advantages, rollout log-probs; plus each row's game."""
    import torch

    width = max(len(r) for r in rows)
    n = len(rows)
    ids = torch.full((n, width), pad_id, dtype=torch.long)
    attention = torch.zeros((n, width), dtype=torch.long)
    action = torch.zeros((n, width), dtype=torch.long)
    adv = torch.zeros((n, width), dtype=torch.float32)
    logps = torch.zeros((n, width), dtype=torch.float32)
    for i, r in enumerate(rows):
        k = len(r)
        ids[i, :k] = torch.tensor(r.input_ids)
        attention[i, :k] = 1
        action[i, :k] = torch.tensor(r.action_mask)
        adv[i, :k] = torch.tensor(r.advantages)
        logps[i, :k] = torch.tensor(r.rollout_logps)
    return {
        "input_ids": ids,
        "attention_mask": attention,
        "action_mask": action,
        "mask": action[:, 1:],
        "advantages": adv[:, 1:],
        "rollout_logps": logps[:, 1:],
        "games": torch.tensor([r.game for r in rows], dtype=torch.long),
    }
