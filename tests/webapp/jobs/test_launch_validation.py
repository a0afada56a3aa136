"""Launch forms and the jobs API report every invalid field at once, each at its field, with the
bounds and choices the config's own checks use (issue 22, item 8)."""

import pytest

from training.common.config import ConfigErrors, build_checked
from training.evaluation.config import EvaluationConfig
from webapp.jobs.models import Job

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("seeded")]

THREE_BAD = {"split": "bogus", "samples": 0, "limit": -3}
MESSAGES = {
    "split": "split must be one of '', 'sft', 'rl', 'val', 'test'",
    "samples": "samples must be between 1 and 256",
    "limit": "limit must be 0 (all words) or positive",
}


def field_block(page: str, name: str) -> str:
    """The launch form's <div class="field"> of the input named `name`."""
    start = page.rindex('<div class="field', 0, page.index(f'name="{name}"'))
    return page[start : page.index("</div>", start)]


def test_a_config_built_for_the_web_reports_every_failed_check_the_cli_the_first():
    with pytest.raises(ConfigErrors) as caught:
        build_checked(EvaluationConfig, **THREE_BAD)
    assert caught.value.messages == list(MESSAGES.values())
    with pytest.raises(ValueError, match=r"^split must be one of"):
        EvaluationConfig(**THREE_BAD)  # built directly (the command line): the first, as before


def test_launch_form_shows_all_three_errors_each_at_its_field(rclient):
    form = {"guesser": "infogain", "judge": "kb", "word_list": "dbrl/paper_test"}
    form |= {"max_turns": "20", "seed": "0", "batch_size": "64", "win_rule": "reference"}
    page = rclient.post("/jobs/new/evaluation/", {**form, **THREE_BAD}).content.decode()
    for name in ("split", "samples", "limit"):
        assert "has-error" in field_block(page, name), name
    assert "bogus is not one of the available choices" in field_block(page, "split")
    assert MESSAGES["samples"] in field_block(page, "samples")
    assert MESSAGES["limit"] in field_block(page, "limit")
    assert Job.objects.count() == 0


def test_api_answers_400_with_all_three_errors_by_field(rclient):
    response = rclient.post(
        "/api/jobs/", {"kind": "evaluation", "config": THREE_BAD}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json() == {name: [message] for name, message in MESSAGES.items()}
    assert Job.objects.count() == 0


def test_number_inputs_carry_the_bounds_the_config_checks(rclient):
    page = rclient.get("/jobs/new/evaluation/").content.decode()
    samples = field_block(page, "samples")
    assert 'min="1"' in samples and 'max="256"' in samples
    assert 'min="0"' in field_block(page, "limit") and "max=" not in field_block(page, "limit")
    assert 'min="1"' in field_block(page, "batch_size") and 'max="4096"' in field_block(
        page, "batch_size"
    )


def test_fields_with_a_fixed_set_of_values_are_select_boxes(rclient):
    page = rclient.get("/jobs/new/evaluation/").content.decode()
    split = field_block(page, "split")
    assert '<select name="split"' in split
    assert all(f'<option value="{s}"' in split for s in ("sft", "rl", "val", "test"))
    assert '<option value="" selected>(all)</option>' in split  # empty = every split
    grpo = rclient.get("/jobs/new/grpo/").content.decode()
    assert '<select name="advantage"' in field_block(grpo, "advantage")


def test_the_web_kinds_configs_report_every_invalid_field_too(rclient):
    config = {"source": "nowhere", "controls": 2, "labels_needed": 0, "from_job": 1, "limit": -1}
    response = rclient.post(
        "/api/jobs/", {"kind": "disagreements", "config": config}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json() == {
        "source": ["source must be games or gold"],
        "controls": ["controls must be between 0 and 1"],
        "labels_needed": ["labels_needed must be between 1 and 20"],
        "limit": ["from_job and limit must be 0 or positive"],  # at the field that failed
    }
    response = rclient.post(
        "/api/jobs/",
        {"kind": "export", "config": {"formats": "csv", "job": -1, "mode": "x"}},
        content_type="application/json",
    )
    assert set(response.json()) == {"formats", "job", "mode"}
    page = rclient.get("/jobs/new/disagreements/").content.decode()
    controls = field_block(page, "controls")
    assert 'min="0"' in controls and 'max="1"' in controls and 'step="any"' in controls


def test_fields_naming_stored_models_or_word_lists_are_select_boxes(rclient):
    for kind, name, option in [
        ("sft", "teacher", "infogain"),
        ("sft", "games_guesser", "infogain"),
        ("disagreements", "from_guesser", "infogain"),
        ("disagreements", "from_word_list", "dbrl/paper_test"),
        ("grpo", "val_word_list", "dbrl/paper_test"),
        ("curation", "fairness_judge", "kb"),
    ]:
        block = field_block(rclient.get(f"/jobs/new/{kind}/").content.decode(), name)
        assert f'<select name="{name}"' in block and f'<option value="{option}"' in block, name
