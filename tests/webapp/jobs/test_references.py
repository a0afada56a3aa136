"""The shared rules of the job kinds: model-spec lookups, the kind groups and the queue choice."""

import pytest
from django.core.exceptions import ValidationError

from tests.sending import tasks_held
from webapp.catalog.models import ModelKind, ModelRole, ModelSpec
from webapp.catalog.selectors import ModelSpecUnavailable, model_spec_active, model_specs_heavy
from webapp.catalog.services import seed_model_specs, seed_word_lists
from webapp.jobs.kinds.checks import check_model
from webapp.jobs.registry import get_kind

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded():
    seed_word_lists()
    seed_model_specs()
    ModelSpec.objects.create(
        name="tiny-lm", kind=ModelKind.TRANSFORMERS, role=ModelRole.BOTH, path="/m"
    )
    ModelSpec.objects.create(
        name="remote", kind=ModelKind.OPENAI, role=ModelRole.JUDGE, endpoint="http://x"
    )
    ModelSpec.objects.create(
        name="retired", kind=ModelKind.KB, role=ModelRole.JUDGE, is_active=False
    )


def test_kind_groups_are_not_choices():
    assert ModelKind.values == [
        "kb",
        "pretrained",
        "learned",
        "kb+learned",
        "infogain",
        "natural",
        "random",
        "transformers",
        "vllm",
        "openai",
        "encoder",
    ]
    assert ModelKind.PRETRAINED not in ModelKind.HEAVY  # MiniLM answers in the web process
    assert ModelKind.TRANSFORMERS in ModelKind.HEAVY and ModelKind.OPENAI not in ModelKind.HEAVY
    assert ModelKind.OPENAI in ModelKind.LLM and ModelKind.KB not in ModelKind.LLM
    assert ModelKind.VLLM in ModelKind.TRAINABLE and ModelKind.INFOGAIN in ModelKind.POOL_GUESSERS


def test_model_spec_active_checks_activity_role_and_kind(seeded):
    assert model_spec_active("kb", "judge").name == "kb"
    assert model_spec_active("tiny-lm", "guesser", kinds=ModelKind.TRAINABLE).name == "tiny-lm"
    cases = [
        (("retired", "judge"), {}, "no active judge model spec named 'retired'"),
        (("kb", "guesser"), {}, "no active guesser model spec named 'kb'"),
        (("nobody",), {}, "no active model spec named 'nobody'"),
        (
            ("remote", "judge"),
            {"kinds": ModelKind.HEAVY, "what": "local"},
            "no active local model spec named 'remote'",
        ),
    ]
    for args, lookup, message in cases:
        with pytest.raises(ModelSpecUnavailable) as err:
            model_spec_active(*args, **lookup)
        assert err.value.message == message and err.value.status == 400


def test_check_model_collects_every_refusal_under_its_field(seeded):
    errors: dict = {}
    assert check_model(errors, "judges", "kb", "judge").name == "kb"
    assert check_model(errors, "judges", "nobody", "judge") is None
    assert check_model(errors, "judges", "infogain", "judge") is None
    assert errors == {
        "judges": [
            "no active judge model spec named 'nobody'",
            "no active judge model spec named 'infogain'",
        ]
    }


def test_heavy_models_send_a_job_to_the_gpu_queue(seeded, settings):
    settings.JOBS_GPU_QUEUE = "gpu"
    assert model_specs_heavy(["kb", "", "tiny-lm"]) and not model_specs_heavy(["kb", "remote", ""])
    cases = [
        (
            "evaluation",
            {"guesser": "tiny-lm", "judge": "kb", "word_list": "dbrl/paper_test"},
            "gpu",
        ),
        (
            "evaluation",
            {"guesser": "infogain", "judge": "remote", "word_list": "dbrl/paper_test"},
            "cpu",
        ),
        ("disagreements", {"judges": ["kb", "tiny-lm"]}, "gpu"),
        ("disagreements", {"judges": ["kb", "remote"]}, "cpu"),
        ("curation", {"judge": "kb", "guesser": "infogain", "fairness_judge": "tiny-lm"}, "gpu"),
        ("curation", {"judge": "kb", "guesser": "infogain"}, "cpu"),
    ]
    for kind, params, queue in cases:
        job_kind = get_kind(kind)
        config = job_kind.config_class()(
            **{k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
        )
        assert job_kind.queue_for(config) == queue, (kind, params)


def test_a_job_check_names_every_missing_judge(seeded):
    from webapp.jobs.services import job_submit

    with (
        tasks_held(),
        pytest.raises(ValidationError) as err,
    ):
        job_submit(kind="disagreements", params={"judges": ["kb", "nobody", "retired"]})
    assert err.value.message_dict["judges"] == [
        "no active judge model spec named 'nobody'",
        "no active judge model spec named 'retired'",
    ]
