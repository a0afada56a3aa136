"""Helpers shared by the play tests and the browser tests."""

from __future__ import annotations

import time
from functools import lru_cache

from games import rules
from games.types import Verdict
from webapp.catalog import builders
from webapp.catalog.services import seed_model_specs, seed_word_lists
from webapp.play.visitors import Visitor, guest_key_for

GUEST_IP = "127.0.0.1"  # REMOTE_ADDR of Django's test client and of the live server's browser


def seed_play_catalog() -> None:
    """The default model specs and the shipped word lists, the default one (dbrl/paper_test)
    among them (already there unless a transactional test emptied the database)."""
    seed_model_specs()
    seed_word_lists()


def visitor_of(user=None, *games) -> Visitor:
    """A signed-in visitor, or (user=None) a guest whose session holds `games`."""
    if user is not None:
        return Visitor(user=user)
    return Visitor(guest_key=guest_key_for(GUEST_IP), session_games=frozenset(g.pk for g in games))


@lru_cache(maxsize=1)
def _kb_judge():
    from games.judges.kb import KBJudge

    return KBJudge()


def truthful_verdict(secret: str, question: str) -> str:
    """What an honest person thinking of `secret` answers under the strict rule people play by:
    "That's my word" for a guess of it, else the knowledge base's answer."""
    if rules.wins(question, secret, "strict"):
        return Verdict.FINISHED.value
    verdict = _kb_judge().judge(secret, question).verdict
    return verdict.value if verdict in (Verdict.YES, Verdict.NO) else Verdict.UNKNOWN.value


def clear_guest_limit() -> None:
    """Empty the guest rate-limit bucket of the test IP (only that key: the cache may be shared)."""
    from webapp.play.throttles import guest_limit_reset

    guest_limit_reset(GUEST_IP)


def model_game(secret: str, questions: list[str], **fields):
    """A stored model-vs-model game as evaluation jobs store them, with belief and candidate
    numbers."""
    from games.engine import replay
    from games.types import GameConfig
    from webapp.catalog.builders import judge_for
    from webapp.catalog.models import ModelSpec
    from webapp.play.records import trajectories_store

    judge = ModelSpec.objects.get(name="kb")
    trajectory = replay(
        judge_for(judge), secret, 1, questions, GameConfig(max_turns=len(questions))
    )
    trajectory.initial_belief = -6.0
    for i, turn in enumerate(trajectory.turns):
        turn.candidates_left, turn.belief, turn.delta_belief = 100 // (i + 1), -5.0 + i, 1.0
        turn.top_candidates = [(secret, 0.5), ("cat", 0.2)]
    return trajectories_store(
        [trajectory], guesser=ModelSpec.objects.get(name="infogain"), judge=judge, **fields
    )[0]


def start_from_page(client, **form):
    """Start a game as the browser does: the start form, then (in a game a model asks) the game
    page's request for the model's first question."""
    import re

    from webapp.play.models import Game

    response = client.post("/play/start/", form)
    assert response.status_code == 302, response.content
    game = Game.objects.get(pk=int(re.search(r"/play/(\d+)/", response["Location"]).group(1)))
    if form.get("role") == "answerer":
        asked = client.post(f"/play/{game.pk}/first-question/", HTTP_HX_REQUEST="true")
        assert asked.status_code == 200, asked.content
        game.refresh_from_db()
    return game


class SlowGuesser:
    """A test double: the real guesser, but each question takes `seconds`; the time each was asked
    is recorded in `asks`."""

    def __init__(self, inner, seconds: float, asks: list[float]):
        self.inner, self.seconds, self.asks = inner, seconds, asks

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def ask(self, state):
        self.asks.append(time.monotonic())
        time.sleep(self.seconds)
        return self.inner.ask(state)


def slow_guessers(monkeypatch, seconds: float, double=SlowGuesser) -> list[float]:
    """Every guesser the catalog builds becomes `double` (a SlowGuesser taking `seconds` a
    question); returns the list its questions are recorded in."""
    asks: list[float] = []
    real = builders.guesser_for
    monkeypatch.setattr(
        builders, "guesser_for", lambda spec, **kw: double(real(spec, **kw), seconds, asks)
    )
    return asks
