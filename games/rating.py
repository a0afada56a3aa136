"""Item-response ratings: a Rasch (1PL) fit that puts humans and models on one ability scale.

Pure numpy/scipy, no I/O (like FastChat's ``monitor/rating_systems.py``): the leaderboard task
feeds it (player, item, solved) responses and stores what comes out.

Model: P(player p solves item i) = sigmoid(theta_p - b_i). Players are people and models, items
are secret words. Players who never played the same words are still compared through the words
they share with other players (the response graph links them); a player in a part of the graph
that shares no word with the rest is only placed by the prior.

Fit: joint maximum likelihood with a small ridge (an L2 prior, i.e. a normal prior with variance
1/ridge) on every theta and b, so all-solved and none-solved players and items get finite values.
Repeated plays of the same word by the same player are pooled into binomial cells. The scale is
fixed afterwards by centring the item difficulties at 0 (the likelihood depends only on
theta - b), so theta = 0 means "even odds on a word of average difficulty". Optimised with
Newton steps (conjugate-gradient solves on the sparse Hessian) from a zero start: deterministic
for the same input order and fast (tens of thousands of responses in tens of milliseconds).

Standard errors are the usual Rasch model standard errors (Wright & Masters):
1 / sqrt(information + ridge), where a player's information is the sum over its responses of
p(1 - p) at the fitted values. They treat the other side's estimates as known, as Winsteps and
most Rasch software do.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, log_expit

from games.metrics import Z95

DEFAULT_RIDGE = (
    0.1  # a N(0, 10) prior (sd ~3.2 logits): barely felt once a player has a handful of games
)


@dataclass
class RaschFit:
    """Abilities theta per player and difficulties b per item (logits), with standard errors."""

    players: list[Hashable]
    theta: np.ndarray
    theta_se: np.ndarray
    player_n: np.ndarray  # responses per player
    player_wins: np.ndarray
    items: list[Hashable]
    b: np.ndarray
    b_se: np.ndarray
    item_n: np.ndarray
    item_wins: np.ndarray
    ridge: float
    converged: bool
    iterations: int
    log_likelihood: float  # at the optimum, without the prior
    _player_index: dict = field(default_factory=dict, repr=False)
    _item_index: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._player_index = {p: i for i, p in enumerate(self.players)}
        self._item_index = {it: i for i, it in enumerate(self.items)}

    def ability(self, player: Hashable) -> tuple[float, float]:
        """(theta, standard error) of one player."""
        i = self._player_index[player]
        return float(self.theta[i]), float(self.theta_se[i])

    def difficulty(self, item: Hashable) -> tuple[float, float]:
        """(b, standard error) of one item."""
        i = self._item_index[item]
        return float(self.b[i]), float(self.b_se[i])

    def interval(self, player: Hashable, z: float = Z95) -> tuple[float, float]:
        """95% interval of one player's theta."""
        return theta_interval(*self.ability(player), z=z)

    def p_solve(self, player: Hashable, item: Hashable | None = None) -> float:
        """Model probability that the player solves the item (default: an item of average
        difficulty, b = 0)."""
        theta = self.ability(player)[0]
        b = self.difficulty(item)[0] if item is not None else 0.0
        return float(expit(theta - b))


def theta_interval(theta: float, se: float, z: float = Z95) -> tuple[float, float]:
    """Normal (Wald) interval theta ± z·se on the logit scale (95% by default)."""
    if not (math.isfinite(theta) and math.isfinite(se)) or se < 0:
        raise ValueError(f"need a finite theta and a finite se >= 0 (theta={theta}, se={se})")
    return (theta - z * se, theta + z * se)


def _index(values: Iterable[Hashable]) -> tuple[list[Hashable], np.ndarray]:
    """Ids in order of first appearance and the integer code of each value."""
    index: dict[Hashable, int] = {}
    codes = [index.setdefault(v, len(index)) for v in values]
    return list(index), np.asarray(codes, dtype=np.int64)


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    # elementwise product + pairwise sum instead of BLAS ddot: OpenBLAS threads its dot products,
    # which on a busy machine (Celery workers, tests in parallel) costs milliseconds per call
    return float(np.sum(a * b))


def _newton_direction(hessp, g: np.ndarray, diag: np.ndarray) -> np.ndarray:
    """Preconditioned CG on H d = -g (H given by `hessp`, preconditioner its diagonal), to a
    relative accuracy that tightens as g shrinks; the scaled gradient if CG made no progress."""
    gnorm = math.sqrt(_dot(g, g))
    cg_tol = min(0.5, math.sqrt(gnorm)) * gnorm
    d = np.zeros_like(g)
    r = -g
    z = r / diag
    q = z.copy()
    rz = _dot(r, z)
    for _ in range(max(50, 2 * len(g))):
        hq = hessp(q)
        qhq = _dot(q, hq)
        if qhq <= 0:  # flat direction (ridge = 0): stop with what we have
            break
        alpha = rz / qhq
        d += alpha * q
        r -= alpha * hq
        if math.sqrt(_dot(r, r)) <= cg_tol:
            break
        z = r / diag
        rz_new = _dot(r, z)
        q = z + (rz_new / rz) * q
        rz = rz_new
    return d if d.any() else -g / diag


def _newton_cg(cp, ci, n, s, n_p, n_i, ridge, tol, max_iter):
    """Minimise the penalised negative log-likelihood by Newton's method, solving each Newton
    system by conjugate gradients preconditioned with the Hessian's diagonal. The Hessian of
    the Rasch likelihood is sparse (one entry per played (player, item) cell), so a
    Hessian-vector product costs two bincounts. Strictly convex for ridge > 0: converges from
    zero in a handful of steps, deterministically."""
    f = n - s

    def loss(theta, b):
        eta = theta[cp] - b[ci]
        return -(_dot(s, log_expit(eta)) + _dot(f, log_expit(-eta))) + 0.5 * ridge * (
            _dot(theta, theta) + _dot(b, b)
        )

    theta, b = np.zeros(n_p), np.zeros(n_i)
    current = loss(theta, b)
    converged, steps = False, 0
    for _ in range(max_iter):
        eta = theta[cp] - b[ci]
        p = expit(eta)
        resid = s - n * p  # d loglik / d eta, per cell
        g = np.concatenate(
            [
                -np.bincount(cp, weights=resid, minlength=n_p) + ridge * theta,
                np.bincount(ci, weights=resid, minlength=n_i) + ridge * b,
            ]
        )
        gmax = float(np.max(np.abs(g)))
        if gmax < tol:
            converged = True
            break
        w = n * p * (1.0 - p)
        diag = np.concatenate(
            [np.bincount(cp, weights=w, minlength=n_p), np.bincount(ci, weights=w, minlength=n_i)]
        )
        diag = np.maximum(diag + ridge, 1e-12)

        def hessp(v, w=w):
            u = w * (v[:n_p][cp] - v[n_p:][ci])
            return np.concatenate(
                [
                    np.bincount(cp, weights=u, minlength=n_p) + ridge * v[:n_p],
                    -np.bincount(ci, weights=u, minlength=n_i) + ridge * v[n_p:],
                ]
            )

        d = _newton_direction(hessp, g, diag)

        # backtracking (Armijo) line search; the full Newton step is almost always taken
        slope = _dot(g, d)
        step = 1.0
        while step > 1e-10:
            new_theta, new_b = theta + step * d[:n_p], b + step * d[n_p:]
            new = loss(new_theta, new_b)
            if new <= current + 1e-4 * step * slope:
                break
            step *= 0.5
        else:  # no decrease possible: at the optimum up to rounding, or stuck
            converged = gmax < 1e-4
            break
        theta, b, current = new_theta, new_b, new
        steps += 1
    return theta, b, steps, converged


def rasch_fit(
    responses: Iterable[tuple[Hashable, Hashable, bool]],
    *,
    ridge: float = DEFAULT_RIDGE,
    tol: float = 1e-7,
    max_iter: int = 100,
) -> RaschFit:
    """Fit a Rasch model to (player_id, item_id, solved) responses.

    ``ridge`` is the L2 penalty on every theta and b (0 gives the plain joint MLE, which is
    infinite for all-solved or none-solved players and items). ``tol`` bounds the largest
    gradient component (in expected solves), ``max_iter`` the Newton steps. Players and items are
    reported in order of first appearance.
    """
    if ridge < 0:
        raise ValueError(f"ridge must be >= 0, got {ridge}")
    rows = list(responses)
    if not rows:
        raise ValueError("no responses to fit")
    player_col, item_col, solved_col = zip(*rows)
    players, p_code = _index(player_col)
    items, i_code = _index(item_col)
    y = np.fromiter((bool(s) for s in solved_col), dtype=np.float64, count=len(rows))
    n_p, n_i = len(players), len(items)

    # pool repeated (player, item) responses into binomial cells: n trials, s successes
    cell = p_code * n_i + i_code
    cells, inverse = np.unique(cell, return_inverse=True)
    n = np.bincount(inverse, minlength=len(cells)).astype(np.float64)
    s = np.bincount(inverse, weights=y, minlength=len(cells))
    cp, ci = cells // n_i, cells % n_i
    f = n - s

    theta, b, iterations, converged = _newton_cg(cp, ci, n, s, n_p, n_i, ridge, tol, max_iter)
    shift = b.mean()
    theta -= shift
    b -= shift

    eta = theta[cp] - b[ci]
    p = expit(eta)
    info = n * p * (1.0 - p)
    theta_info = np.bincount(cp, weights=info, minlength=n_p)
    b_info = np.bincount(ci, weights=info, minlength=n_i)
    with np.errstate(divide="ignore"):
        theta_se = 1.0 / np.sqrt(theta_info + ridge)
        b_se = 1.0 / np.sqrt(b_info + ridge)
    loglik = float(np.sum(s * log_expit(eta)) + np.sum(f * log_expit(-eta)))
    return RaschFit(
        players=players,
        theta=theta,
        theta_se=theta_se,
        player_n=np.bincount(cp, weights=n, minlength=n_p).astype(np.int64),
        player_wins=np.bincount(cp, weights=s, minlength=n_p).astype(np.int64),
        items=items,
        b=b,
        b_se=b_se,
        item_n=np.bincount(ci, weights=n, minlength=n_i).astype(np.int64),
        item_wins=np.bincount(ci, weights=s, minlength=n_i).astype(np.int64),
        ridge=float(ridge),
        converged=converged,
        iterations=iterations,
        log_likelihood=loglik,
    )
