"""Form parsing for the labelling pages (the API uses serializers)."""

from __future__ import annotations

from django import forms

from webapp.catalog.selectors import model_specs_for
from webapp.labelling.models import LabelVerdict
from webapp.labelling.selectors import REVIEW_FILTERS, SUBSETS


class LabelForm(forms.Form):
    verdict = forms.ChoiceField(choices=LabelVerdict.choices)


class DisputeForm(forms.Form):
    verdict = forms.ChoiceField(choices=[("yes", "yes"), ("no", "no")])


class AdjudicateForm(forms.Form):
    gold = forms.ChoiceField(choices=[("", "(clear)"), *LabelVerdict.choices], required=False)


class ReviewFilterForm(forms.Form):
    show = forms.ChoiceField(choices=list(REVIEW_FILTERS.items()), required=False)
    page = forms.IntegerField(min_value=1, required=False)


class SubsetForm(forms.Form):
    subset = forms.ChoiceField(choices=[(s, s) for s in SUBSETS], required=False)


class ScoreJudgeForm(forms.Form):
    judge = forms.ChoiceField(choices=())

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = [(s.name, s.name) for s in model_specs_for("judge")]
