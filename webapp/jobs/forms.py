"""Launch forms generated from a job kind's config dataclass (defaults, help text, errors by
field)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
import typing
import uuid

from django import forms
from django.contrib import messages
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect

from webapp.catalog.models import ModelKind, WordList
from webapp.catalog.selectors import model_specs_for
from webapp.jobs import registry, services
from webapp.jobs.registry import JobKind

log = logging.getLogger(__name__)
SUBMISSION_SECONDS = 24 * 3600  # how long a launch form's token remembers the job it queued
TOKEN = re.compile(r"[0-9a-f]{32}")

# fields that name database objects get a select box of what exists
REFERENCE_CHOICES = {
    "guesser": lambda: [(s.name, s.name) for s in model_specs_for("guesser")],
    "judge": lambda: [(s.name, s.name) for s in model_specs_for("judge")],
    "word_list": lambda: [
        (n, n) for n in WordList.objects.values_list("name", flat=True).distinct().order_by("name")
    ],
}
REFERENCE_CHOICES["pool_word_list"] = lambda: [("", "(default)"), *REFERENCE_CHOICES["word_list"]()]
REFERENCE_CHOICES["games_judge"] = REFERENCE_CHOICES[
    "judge"
]  # the judge job: whose stored verdicts are learned
for name, role in [
    ("teacher", "guesser"),
    ("games_guesser", "guesser"),
    ("from_guesser", "guesser"),
]:
    REFERENCE_CHOICES[name] = REFERENCE_CHOICES[role]
REFERENCE_CHOICES["fairness_judge"] = REFERENCE_CHOICES["judge"]
for name in ("from_word_list", "val_word_list"):
    REFERENCE_CHOICES[name] = REFERENCE_CHOICES["word_list"]
# dpo's rating judge: any active LLM (the kinds webapp.jobs.kinds.training.check_dpo accepts)
REFERENCE_CHOICES["rating_model"] = lambda: [
    (s.name, s.name) for s in model_specs_for("").filter(kind__in=ModelKind.LLM)
]


def _form_field(field: dataclasses.Field, annotation) -> forms.Field:
    default = field.default if field.default is not dataclasses.MISSING else None
    help_text = field.metadata.get("help", "")
    label = field.name.replace("_", " ")
    base = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    optional = type(None) in typing.get_args(annotation)
    kind = (
        args[0]
        if (base is typing.Union or str(base) == "types.UnionType") and len(args) == 1
        else annotation
    )
    if field.name in REFERENCE_CHOICES:
        choices = REFERENCE_CHOICES[field.name]()
        if not default and "" not in dict(
            choices
        ):  # optional: an explicit empty choice, never a silent first one
            choices = [("", "(none)"), *choices]
        return forms.ChoiceField(
            choices=choices,
            initial=default,
            label=label,
            help_text=help_text,
            required=bool(default),
        )
    if "choices" in field.metadata:
        return forms.ChoiceField(
            choices=[
                (c, c or field.metadata.get("blank", "(none)")) for c in field.metadata["choices"]
            ],
            initial=default,
            label=label,
            help_text=help_text,
            required=False,
        )
    if kind is bool:
        return forms.BooleanField(initial=default, required=False, label=label, help_text=help_text)
    if kind in (int, float):
        # the bounds the config's check_between reads, as HTML min/max; the check alone judges
        # (one message per rule, shown with every other failed check)
        bounds = {k: field.metadata[k] for k in ("min", "max") if field.metadata.get(k) is not None}
        widget = forms.NumberInput(attrs={**bounds, **({"step": "any"} if kind is float else {})})
        number_field = forms.IntegerField if kind is int else forms.FloatField
        return number_field(
            initial=default, required=not optional, label=label, help_text=help_text, widget=widget
        )
    if typing.get_origin(kind) in (list, tuple):
        initial = ", ".join(str(v) for v in (default or ()))
        return forms.CharField(
            initial=initial, required=False, label=label, help_text=f"{help_text} (comma-separated)"
        )
    widget = forms.Textarea(attrs={"rows": 6}) if field.metadata.get("multiline") else None
    return forms.CharField(
        initial=default, required=False, label=label, help_text=help_text, widget=widget
    )


class ConfigForm(forms.Form):
    """A job kind's launch form: its fields come from the config dataclass and clean() runs the
    config's own checks, so every invalid field is reported at once, each at its field."""

    job_kind: JobKind
    # one token per rendered form: a second POST of it (a double click, a resent form) shows
    # the job the first one queued instead of queuing another
    submission = forms.CharField(
        widget=forms.HiddenInput,
        initial=lambda: uuid.uuid4().hex,
        required=False,
        help_text="this form's token: sent twice, it queues one job",
    )

    def params(self) -> dict:
        """The config's values of the cleaned form (the submission token is not one)."""
        data = self.cleaned_data
        return {k: v for k, v in data.items() if v is not None and k != "submission"}

    def clean(self):
        data = super().clean()
        params = self.params()
        try:
            config = registry.build_config(self.job_kind, params)
            self.job_kind.check_references(config)
        except ValidationError as exc:
            add_validation_errors(self, exc)
        return data


def config_form_class(kind: JobKind) -> type[ConfigForm]:
    cls = kind.config_class()
    hints = typing.get_type_hints(cls)
    fields = {f.name: _form_field(f, hints[f.name]) for f in dataclasses.fields(cls)}
    return type(f"{cls.__name__}Form", (ConfigForm,), {**fields, "job_kind": kind})


def add_validation_errors(form: forms.Form, error: ValidationError) -> None:
    """Show a service's ValidationError next to the fields it names."""
    for field, texts in getattr(error, "message_dict", {"__all__": error.messages}).items():
        target = field if field in form.fields else None
        if target and form.has_error(target):
            continue  # the form could not parse it; the config checked its default instead
        for message in texts:
            form.add_error(target, message)


def queue_from_form(request, form: ConfigForm, kind: JobKind) -> HttpResponse | None:
    """A launch form's POST (the launch page's and the admin's): queue the bound form's config
    through services.job_submit and redirect to the job's page with a message saying so, or None
    with the errors on the form (the form's or the service's). A form submitted again with the
    same token and settings queues nothing and redirects to the first submission's job."""
    if not form.is_valid():
        return None
    key = _submission_key(form)
    if key is not None and not _claim_submission(key):
        return _already_submitted(request, key)
    try:
        job = services.job_submit(kind=kind.name, params=form.params(), user=request.user)
    except ValidationError as exc:
        _forget_submission(key)  # the corrected form may be sent again with the same token
        add_validation_errors(form, exc)
        return None
    except services.JobNotPublished as exc:  # stored and queued; the sweep publishes it later
        _remember_submission(key, exc.job_id)
        messages.warning(request, exc.message)
        return redirect("jobs:detail", job_id=exc.job_id)
    except Exception:
        _forget_submission(key)  # nothing was queued: the same form may be sent again
        raise
    _remember_submission(key, job.pk)
    messages.success(request, f"Queued {kind.name} job {job.pk}.")
    return redirect("jobs:detail", job_id=job.pk)


# -- once-only submissions: the cache holds token+settings -> job id (0 while it is queuing) --
def _submission_key(form: ConfigForm) -> str | None:
    """The cache key of the form's token and settings; None (no once-only check) without a
    well-formed token. The same token with other settings (the form changed after going back to
    it) is a new launch, not a resend."""
    token = form.cleaned_data.get("submission") or ""
    if not TOKEN.fullmatch(token):
        return None
    chosen = json.dumps(form.params(), sort_keys=True, default=str).encode()
    return f"jobs:submission:{token}:{hashlib.sha256(chosen).hexdigest()}"


def _cache_call(method: str, *args):
    """A cache call that fails open: without the cache a double submit is not caught, but the
    launch still works."""
    try:
        return getattr(cache, method)(*args)
    except Exception as exc:  # noqa: BLE001 - a cache outage must not refuse launches
        log.warning("launch submission cache %s failed: %s", method, exc)
        return None


def _claim_submission(key: str) -> bool:
    return _cache_call("add", key, 0, SUBMISSION_SECONDS) is not False


def _remember_submission(key: str | None, job_id: int) -> None:
    if key is not None:
        _cache_call("set", key, job_id, SUBMISSION_SECONDS)


def _forget_submission(key: str | None) -> None:
    if key is not None:
        _cache_call("delete", key)


def _already_submitted(request, key: str) -> HttpResponse:
    job_id = _cache_call("get", key)
    if job_id:
        messages.info(request, f"This form was already submitted: it queued job {job_id}.")
        return redirect("jobs:detail", job_id=job_id)
    messages.info(request, "This form was already submitted and its job is being queued.")
    return redirect("jobs:dashboard")
