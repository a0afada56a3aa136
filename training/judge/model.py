"""The learned judge's network in torch (training only) and its export to the numpy weights file
that games.judges.learned reads. The two forward passes are the same function; a test checks it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from games.judges.facts import MATCH_DIM
from games.judges.learned import FORMAT, LAYERS
from games.kb import store


class JudgeNet(nn.Module):
    def __init__(self, question_vocab: int, secret_vocab: int, dim: int, hidden: int):
        super().__init__()
        self.question_embedding = nn.EmbeddingBag(
            question_vocab + 1, dim, mode="mean", padding_idx=0
        )
        self.question_bias = nn.EmbeddingBag(question_vocab + 1, 1, mode="sum", padding_idx=0)
        self.secret_embedding = nn.EmbeddingBag(secret_vocab + 1, dim, mode="mean", padding_idx=0)
        for table in (self.question_embedding, self.secret_embedding):
            nn.init.normal_(table.weight, std=0.1)
            with torch.no_grad():
                table.weight[0].zero_()
        nn.init.zeros_(self.question_bias.weight)
        self.mlp0 = nn.Linear(3 * dim + MATCH_DIM, hidden)
        self.mlp1 = nn.Linear(hidden, hidden)
        self.mlp2 = nn.Linear(hidden, 1)
        self.wide = nn.Linear(MATCH_DIM, 1)

    def forward(
        self, q: torch.Tensor, q_bias: torch.Tensor, s: torch.Tensor, m: torch.Tensor
    ) -> torch.Tensor:
        h = torch.relu(self.mlp0(torch.cat([q, s, q * s, m], dim=1)))
        h = torch.relu(self.mlp1(h))
        return (self.mlp2(h) + self.wide(m)).squeeze(1) + q_bias


class Bags:
    """Token-id bags as EmbeddingBag inputs, gathered for the unique items of a batch."""

    def __init__(self, bags: Sequence[Sequence[int]]):
        self.bags = [list(b) or [0] for b in bags]  # an empty bag is one padding id: a zero vector

    def gather(self, items: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(flat ids, offsets, inverse): embed the unique items, then index with `inverse`."""
        unique, inverse = torch.unique(items, return_inverse=True)
        chosen = [self.bags[i] for i in unique.tolist()]
        offsets = torch.tensor(np.cumsum([0] + [len(b) for b in chosen[:-1]]), dtype=torch.long)
        flat = torch.tensor([t for b in chosen for t in b], dtype=torch.long)
        return flat, offsets, inverse


def logits(
    net: JudgeNet,
    questions: Bags,
    secrets: Bags,
    q_items: torch.Tensor,
    s_items: torch.Tensor,
    match: torch.Tensor,
) -> torch.Tensor:
    qf, qo, qi = questions.gather(q_items)
    sf, so, si = secrets.gather(s_items)
    q = net.question_embedding(qf, qo)[qi]
    q_bias = net.question_bias(qf, qo)[qi].squeeze(1)
    s = net.secret_embedding(sf, so)[si]
    return net(q, q_bias, s, match)


def export(
    net: JudgeNet,
    path: str | Path,
    *,
    question_vocab: list[str],
    secret_vocab: list[str],
    meta: dict,
) -> int:
    """Write the weights file (embeddings in float16, the rest float32); returns its size in
    bytes."""
    if not question_vocab or not secret_vocab:
        raise ValueError("too few training rows: no question or secret token reached min_count")
    state = {k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}
    payload = {
        "meta": {"format": FORMAT, "threshold": 0.5, **meta},
        "question_vocab": question_vocab,
        "secret_vocab": secret_vocab,
        "question_embedding": state["question_embedding.weight"].astype(np.float16),
        "question_bias": state["question_bias.weight"].reshape(-1).astype(np.float32),
        "secret_embedding": state["secret_embedding.weight"].astype(np.float16),
        "wide.weight": state["wide.weight"].astype(np.float32),
        "wide.bias": state["wide.bias"].astype(np.float32),
    }
    for name in LAYERS:
        payload[f"{name}.weight"] = state[f"{name}.weight"].astype(np.float32)
        payload[f"{name}.bias"] = state[f"{name}.bias"].astype(np.float32)
    return store.write(payload, Path(path))
