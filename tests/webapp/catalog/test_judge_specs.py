"""The judge model specs: learned, kb+learned and the closed-world KB, seeded and turned into
judges."""

from __future__ import annotations

import pytest

from games.judges.learned import weights_meta
from games.types import Verdict
from webapp.catalog.builders import judge_for, spec_string
from webapp.catalog.models import ModelKind, ModelSpec
from webapp.catalog.services import SUPERSEDED_DESCRIPTIONS, held_out_accuracy, seed_model_specs

pytestmark = pytest.mark.django_db


def test_seeding_registers_the_learned_hybrid_and_closed_world_judges_once():
    created = seed_model_specs()
    assert {"learned", "kb+learned", "kb-closed", "kb"} <= set(created)
    assert seed_model_specs() == []
    learned, hybrid, closed = (
        ModelSpec.objects.get(name=n) for n in ("learned", "kb+learned", "kb-closed")
    )
    assert (learned.kind, learned.path, learned.can_judge) == (ModelKind.LEARNED, "", True)
    assert hybrid.kind == ModelKind.HYBRID and hybrid.can_judge
    assert (
        closed.options == {"sense": "dominant", "closed": True}
        and "closed world" in closed.description
    )
    test_accuracy = weights_meta()["held_out"]["test"]["accuracy"]
    assert (
        f"{test_accuracy:.1%} on test secrets" in learned.description
        and "ΔBelief-RL" in learned.description
    )
    assert "unknown (not No)" in ModelSpec.objects.get(name="kb").description


def test_seeding_replaces_only_a_superseded_description():
    ModelSpec.objects.create(
        name="kb", kind=ModelKind.KB, role="judge", description=SUPERSEDED_DESCRIPTIONS["kb"]
    )
    ModelSpec.objects.create(
        name="kb-any-sense", kind=ModelKind.KB, role="judge", description="my own words"
    )
    seed_model_specs()
    assert "unknown (not No)" in ModelSpec.objects.get(name="kb").description
    assert ModelSpec.objects.get(name="kb-any-sense").description == "my own words"


@pytest.mark.parametrize(
    "kind, options, path, expected",
    [
        (ModelKind.KB, {}, "", "kb"),
        (ModelKind.KB, {"sense": "any"}, "", "kb:any"),
        (ModelKind.KB, {"closed": True}, "", "kb:closed"),
        (ModelKind.KB, {"sense": "any", "closed": True}, "", "kb:any:closed"),
        (ModelKind.KB, {"sense": "dominant", "closed": False}, "", "kb:dominant"),
        (ModelKind.LEARNED, {}, "", "learned"),
        (ModelKind.LEARNED, {}, "/w/learned_judge.npz", "learned:/w/learned_judge.npz"),
        (ModelKind.HYBRID, {}, "", "kb+learned"),
        (ModelKind.HYBRID, {}, "/w/learned_judge.npz", "kb+learned:/w/learned_judge.npz"),
    ],
)
def test_spec_string_of_each_judge_kind(kind, options, path, expected):
    assert spec_string(ModelSpec(name="x", kind=kind, options=options, path=path)) == expected


def test_the_seeded_judges_play():
    seed_model_specs()
    learned = judge_for(ModelSpec.objects.get(name="learned")).judge(
        "dog", "Is it a kind of mammal?"
    )
    assert learned.verdict is Verdict.YES and 0.5 <= learned.p_yes <= 1.0
    hybrid = judge_for(ModelSpec.objects.get(name="kb+learned"))
    assert hybrid.judge("dog", "Is it an animal?").raw.startswith(
        "kb: "
    )  # the knowledge base vouches
    assert (
        hybrid.judge("dog", "Does it bark?").p_yes is not None
    )  # the learned judge answers the rest
    closed = judge_for(ModelSpec.objects.get(name="kb-closed")).judge("dog", "Is it made of wood?")
    assert closed.verdict is Verdict.NO
    assert (
        judge_for(ModelSpec.objects.get(name="kb")).judge("dog", "Is it made of wood?").verdict
        is Verdict.UNKNOWN
    )


def test_held_out_accuracy_reads_validation_then_test_and_copes_without_figures():
    assert (
        held_out_accuracy({"test": {"accuracy": 0.875}, "val": {"accuracy": 0.5}})
        == "held-out accuracy 50.0% on validation secrets, 87.5% on test secrets"
    )
    assert held_out_accuracy({"val": None}) == "" and weights_meta("/nowhere/learned.npz") == {}
