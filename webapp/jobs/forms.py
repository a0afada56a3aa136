"""Launch forms generated from a job kind's config dataclass (defaults, help text, errors by
field)."""

from __future__ import annotations

import dataclasses
import typing

from django import forms
from django.core.exceptions import ValidationError

from webapp.catalog.models import ModelKind, WordList
from webapp.catalog.selectors import model_specs_for
from webapp.jobs.registry import JobKind

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
            choices=[(c, c or "(none)") for c in field.metadata["choices"]],
            initial=default,
            label=label,
            help_text=help_text,
            required=False,
        )
    if kind is bool:
        return forms.BooleanField(initial=default, required=False, label=label, help_text=help_text)
    if kind is int:
        return forms.IntegerField(
            initial=default, required=not optional, label=label, help_text=help_text
        )
    if kind is float:
        return forms.FloatField(
            initial=default, required=not optional, label=label, help_text=help_text
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


def config_form_class(kind: JobKind) -> type[forms.Form]:
    cls = kind.config_class()
    hints = typing.get_type_hints(cls)
    fields = {f.name: _form_field(f, hints[f.name]) for f in dataclasses.fields(cls)}
    return type(f"{cls.__name__}Form", (forms.Form,), fields)


def add_validation_errors(form: forms.Form, error: ValidationError) -> None:
    """Show a service's ValidationError next to the fields it names."""
    for field, messages in getattr(error, "message_dict", {"__all__": error.messages}).items():
        target = field if field in form.fields else None
        for message in messages:
            form.add_error(target, message)
