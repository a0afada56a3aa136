"""The information-gain guesser: the strong non-neural baseline over the knowledge base.

It keeps a posterior over a candidate pool. Each turn it asks the question with the most
expected information about the secret — the entropy of the question's outcome (finished /
yes / no) under the posterior — plus a bonus for the chance of winning right away, so it
guesses a word ("Is it a dog?") once that word is likely enough. Answers update the posterior
softly: a candidate the answer contradicts keeps weight `noise / (1 - noise)` per
contradiction, so a wrong answer (a human, another judge) costs turns but not the game. An
"I don't know" to a question the knowledge base grounds counts against the candidates that have
the fact (weight `unknown_noise / (1 - unknown_noise)`): a judge that knew the fact would have
said yes, and the open-world KB judge says unknown exactly where it stores no such fact. A
candidate named by a question that did not finish the game is out for good (that is a rule of
the engine, not a judgement; under the strict win rule, set as `state.data["win_rule"]`, only a
guess of one thing names). With `temperature` T > 0 it is an imperfect questioner: it draws
each question with weight exp(score / T) (score in bits) instead of taking the best, seeded by the
game seed and the turn; the last-turn guess stays the likeliest word. The questions are phrased
in the KB judge's forms and answered by it exactly as predicted when both use the same knowledge
base and sense mode.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from games import rules
from games.guessers.base import Ask, GuesserState
from games.guessers.replay import ReplayGuesser, posterior_of
from games.kb import DEFAULT_SENSE, KnowledgeBase, load_kb
from games.kb.candidates import CandidateModel, candidate_model
from games.types import Turn, Verdict

PRIORS = ("uniform", "frequency")
FREQUENCY_EXPONENT = 0.5  # "frequency" prior: p(word) ~ (corpus frequency) ** 0.5
NEGLIGIBLE = 1e-12  # posterior mass below this (relative to the top) is left out of the sums
JITTER = 1e-9  # per-game random tie-breaker added to question scores


def _entropy_bits(*parts: np.ndarray) -> np.ndarray:
    total = np.zeros_like(parts[0])
    for p in parts:
        p = np.clip(p, 0.0, 1.0)
        total -= np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return total


class InfoGainGuesser(ReplayGuesser):
    def __init__(
        self,
        kb: KnowledgeBase | None = None,
        pool: Iterable[str] | None = None,
        sense: str = DEFAULT_SENSE,
        prior: str = "uniform",
        noise: float = 1e-3,
        max_turns: int = 20,
        top_k: int = 5,
        guess_bonus: float = 1.0,
        unknown_noise: float = 1e-3,
        temperature: float = 0.0,
    ):
        if prior not in PRIORS:
            raise ValueError(f"unknown prior {prior!r}; expected one of {', '.join(PRIORS)}")
        for label, value in (("noise", noise), ("unknown_noise", unknown_noise)):
            if not 0.0 < value <= 0.5:
                raise ValueError(f"{label} must be in (0, 0.5], got {value}")
        if not 0.0 <= temperature <= 100.0:
            raise ValueError(f"temperature must be in [0, 100], got {temperature}")
        self.temperature = temperature
        self.kb = kb or load_kb()
        self.model: CandidateModel = candidate_model(self.kb, pool, sense)
        if not self.model.words:
            raise ValueError("the candidate pool has no word of the knowledge base")
        self.sense, self.prior, self.noise = sense, prior, noise
        self.max_turns, self.top_k, self.guess_bonus = max_turns, top_k, guess_bonus
        self.name = "infogain" if sense == DEFAULT_SENSE else f"infogain-{sense}"
        self._log_contradiction = float(np.log(noise / (1.0 - noise)))
        self._log_unknown = float(np.log(unknown_noise / (1.0 - unknown_noise)))
        self._log_prior = self._make_prior()

    def _make_prior(self) -> np.ndarray:
        if self.prior == "uniform":
            return np.zeros(len(self.model.words))
        zipf = self.kb.noun_zipf[self.model.nouns].astype(np.float64)
        return FREQUENCY_EXPONENT * np.log(10.0) * zipf

    # -- state ---------------------------------------------------------------------------
    notes_key = "contradictions"

    def _fresh_notes(self, state: GuesserState) -> dict:
        rng = np.random.default_rng(state.seed)
        return dict(
            contradictions=np.zeros(len(self.model.words), dtype=np.int32),
            unknowns=np.zeros(
                len(self.model.words), dtype=np.int32
            ),  # facts met with "I don't know"
            out=np.zeros(len(self.model.words), dtype=bool),  # named by a question, not the secret
            asked=np.zeros(len(self.model.questions), dtype=bool),
            jitter=rng.random(len(self.model.questions)) * JITTER,
        )

    def _learn(self, data: dict, turn: Turn, text: str, key: str) -> None:
        q = self.model.question_id(text)
        if q is not None:
            data["asked"][q] = True
        if turn.verdict not in (Verdict.YES, Verdict.NO, Verdict.UNKNOWN):
            return  # invalid and repeated answers carry no information; finished ends it
        masks = self.model.outcome_masks(text)
        if masks is None:
            return  # a question the knowledge base cannot ground (e.g. typed by a human)
        yes, named = masks
        if data.get("win_rule") != "strict" or rules.guessed_thing(text) is not None:
            data["out"] |= named  # under strict only a guess wins: a mere mention tests nothing
        if turn.verdict is Verdict.UNKNOWN:
            data["unknowns"] += yes & ~named
            return
        contradicted = ~yes if turn.verdict is Verdict.YES else yes
        data["contradictions"] += contradicted & ~named

    def posterior(self, state: GuesserState) -> np.ndarray:
        data = self._notes(state)
        log_w = (
            self._log_prior
            + self._log_contradiction * data["contradictions"]
            + self._log_unknown * data["unknowns"]
        )
        return posterior_of(log_w, data["out"], self._log_prior)

    # -- decisions ------------------------------------------------------------------------
    def _ask(self, state: GuesserState) -> Ask:
        data = self._notes(state)
        p = self.posterior(state)
        left = int(
            np.count_nonzero((data["contradictions"] == 0) & (data["unknowns"] == 0) & ~data["out"])
        )
        top = np.argsort(-p, kind="stable")[: self.top_k]
        top_candidates = [(self.model.words[i], float(p[i])) for i in top]
        turns_left = self.max_turns - len(state.history)
        rng = (
            np.random.default_rng([state.seed & 0x7FFFFFFF, len(state.history)])
            if self.temperature
            else None
        )
        q, info, p_win = self._choose(p, data, last_turn=turns_left <= 1, rng=rng)
        if q is None:
            text, extra = self._fallback(data), {"kind": "fallback"}
        else:
            text = self.model.questions[q]
            kind = "guess" if self.model.question_guess[q] >= 0 else "question"
            feature = self.kb.features[int(self.model.question_feature[q])]
            extra = {"kind": kind, "feature": feature, "info_bits": info, "p_win": p_win}
        return Ask(text, candidates_left=left, top_candidates=top_candidates, extra=extra)

    def _choose(
        self, p: np.ndarray, data: dict, last_turn: bool, rng: np.random.Generator | None = None
    ) -> tuple[int | None, float, float]:
        model = self.model
        live = np.nonzero(p > NEGLIGIBLE * p.max())[0]
        if last_turn or len(live) == 1:  # nothing to learn any more: guess the likeliest word
            for i in np.argsort(-p, kind="stable"):
                q = int(model.guess_question[i])
                if q >= 0 and not data["asked"][q]:
                    return q, 0.0, float(p[i])
            return None, 0.0, 0.0
        if len(live) * 4 < len(p):
            weights = p[live]
            yes = model.yes[live].T @ weights
            named = model.named[live].T @ weights
        else:
            yes = model.yes_t @ p
            named = model.named_t @ p
        if data.get("win_rule") == "strict":  # only a guess ("Is it a dog?") can win
            named = np.where(model.question_guess >= 0, named, 0.0)
        no = 1.0 - yes - named
        info = _entropy_bits(yes, no, named)
        score = info + self.guess_bonus * named + data["jitter"]
        useless = (info < 1e-9) & (named <= 0)
        score[useless | data["asked"]] = -np.inf
        q = int(np.argmax(score))
        if not np.isfinite(score[q]):
            return None, 0.0, 0.0
        if rng is not None:  # an imperfect questioner: a question drawn with weight exp(score / T)
            weights = np.exp((score - score[q]) / self.temperature)
            q = int(rng.choice(len(score), p=weights / weights.sum()))
        return q, float(info[q]), float(named[q])

    def _fallback(self, data: dict) -> str:
        """A question never asked in this game, when no question can tell the rest apart."""
        for q in np.nonzero(~data["asked"])[0]:
            text = self.model.questions[int(q)]
            if rules.normalise_question(text) not in data["asked_texts"]:
                return text
        return f"Is it something else than the {len(data['asked_texts'])} things I asked about?"
