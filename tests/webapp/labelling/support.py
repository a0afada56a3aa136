"""Stored games whose questions hit polysemous words, and a helper that runs a disagreements job."""

from __future__ import annotations

from games.engine import replay
from games.registry import build_judge
from games.types import GameConfig
from tests.sending import tasks_held
from webapp.catalog.models import ModelSpec
from webapp.catalog.services import seed_model_specs
from webapp.jobs.services import job_run, job_submit
from webapp.play.records import trajectories_store

# kb (dominant senses) and kb-any-sense disagree on the first question of each group below:
# a seal is an animal only in its animal sense, a mouse an electronic device only as a computer
# mouse, ...
GAMES = {
    "seal": [
        "Is it an animal?",
        "Is it an object?",
        "Is it made of wood?",
        "Does it sing jazz well?",
        "Is it an animal?",  # repeated: decided by the rules
        "hello",  # invalid: decided by the rules
        "Is it an organism?",
        "Is it a seal?",
    ],  # the last one names the secret: rules
    "mouse": ["Is it an electronic device?", "Is it a mammal?", "Is it a plant?", "Is it a mouse?"],
    "club": ["Is it a building?", "Is it food?"],
}
DISAGREEING = {
    ("seal", "Is it an animal?"),
    ("seal", "Is it an organism?"),
    ("mouse", "Is it an electronic device?"),
    ("club", "Is it a building?"),
}
JUDGED = 10  # questions a judge answered (the rules decided the other 5)


def store_games(job=None):
    seed_model_specs()
    judge = build_judge("kb")
    trajectories = [
        replay(judge, secret, seed, questions, GameConfig(max_turns=len(questions)))
        for seed, (secret, questions) in enumerate(GAMES.items())
    ]
    return trajectories_store(
        trajectories,
        guesser=ModelSpec.objects.get(name="infogain"),
        judge=ModelSpec.objects.get(name="kb"),
        job=job,
    )


def store_game(secret: str, questions: list[str], seed: int = 99, **fields):
    """One more stored game, a model's unless `mode` says otherwise (after store_games, which
    seeds the model specs)."""
    trajectory = replay(
        build_judge("kb"), secret, seed, questions, GameConfig(max_turns=len(questions))
    )
    return trajectories_store(
        [trajectory],
        guesser=ModelSpec.objects.get(name="infogain"),
        judge=ModelSpec.objects.get(name="kb"),
        **fields,
    )[0]


def submit(kind: str = "disagreements", **config):
    if kind == "disagreements":  # the two KB judges disagree on GAMES (cheap, deterministic)
        config.setdefault("judges", ["kb", "kb-any-sense"])
    with tasks_held():
        return job_submit(kind=kind, params=config)


def run_disagreements(**config):
    job = submit(**config)
    status = job_run(job_id=job.pk)
    job.refresh_from_db()
    assert status == "finished", job.error
    return job
