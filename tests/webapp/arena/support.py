"""Helpers for the arena tests (and the browser test): anonymous guesser specs, stored battles,
and playing a battle out as an honest person would."""

from __future__ import annotations

from tests.webapp.play.support import seed_play_catalog, truthful_verdict
from webapp.arena import selectors, services
from webapp.arena.models import Battle
from webapp.catalog.models import ModelKind, ModelRole, ModelSpec
from webapp.play.models import Game, GameMode, GameOutcome, GameStatus

# names no page says by itself, so finding one in a page means the guesser was named
STRONG, WEAK = "zebrafinch-strong", "quokka-weak"


def seed_arena(*extra: tuple[str, str]) -> dict[str, ModelSpec]:
    """The play catalog with only the arena's own guessers active: STRONG (infogain) and WEAK
    (random), plus `extra` (name, kind) pairs."""
    seed_play_catalog()
    ModelSpec.objects.filter(role__in=[ModelRole.GUESSER, "both"]).update(is_active=False)
    specs = {}
    for name, kind in ((STRONG, ModelKind.INFOGAIN), (WEAK, ModelKind.RANDOM), *extra):
        specs[name] = ModelSpec.objects.create(name=name, kind=kind, role=ModelRole.GUESSER)
    return specs


def stored_battle(a: str, b: str, outcome: str = "a", player=None, guest_key: str = "") -> Battle:
    """A battle as stored, without playing (outcome "" = unfinished)."""
    won = {"a": (True, False), "b": (False, True), "tie": (False, False), "": (False, False)}
    games = []
    for spec, side_won in zip((a, b), won[outcome]):
        games.append(
            Game.objects.create(
                mode=GameMode.HUMAN_JUDGE,
                secret="dog" if outcome else "",
                guesser=ModelSpec.objects.get(name=spec),
                player=player,
                guest_key=guest_key,
                status=GameStatus.FINISHED if outcome else GameStatus.PLAYING,
                outcome=(GameOutcome.WON if side_won else GameOutcome.LOST)
                if outcome
                else GameOutcome.PLAYING,
                n_turns=5 if side_won else 20,
            )
        )
    return Battle.objects.create(
        game_a=games[0],
        game_b=games[1],
        guesser_a=games[0].guesser,
        guesser_b=games[1].guesser,
        player=player,
        guest_key=guest_key,
        word_source="kept",
        word="dog" if outcome else "",
        word_in_kb=True if outcome else None,
        outcome=outcome,
    )


def play_out(battle: Battle, visitor, secret: str, answer=truthful_verdict) -> Battle:
    """Answer the active side until both games are over, as an honest person holding `secret`."""
    for _ in range(200):
        battle = services.battle_get(battle.public_id, visitor)
        context = selectors.battle_context(battle)
        side = next((s for s in context["sides"] if s["side"] == context["active"]), None)
        if side is None:
            return battle
        services.battle_answer(
            public_id=battle.public_id,
            visitor=visitor,
            side=side["side"],
            verdict=answer(secret, side["pending"]),
            expected_index=side["next_index"],
        )
    raise AssertionError("the battle did not end")
