"""Arena forms: parsing only."""

from __future__ import annotations

from django import forms

from webapp.arena.services import SIDES
from webapp.play.services import HUMAN_VERDICTS


class BattleStartForm(forms.Form):
    word_list = forms.CharField(required=False, max_length=100, label="Draw a word from")


class SideAnswerForm(forms.Form):
    side = forms.ChoiceField(choices=[(s, s) for s in SIDES])
    verdict = forms.ChoiceField(choices=[(v.value, v.value) for v in HUMAN_VERDICTS])
    expected_index = forms.IntegerField(min_value=0, widget=forms.HiddenInput)


class WordForm(forms.Form):
    word = forms.CharField(max_length=200, label="Your word")


class EmptyForm(forms.Form):
    """Giving up needs nothing but the CSRF token."""


class ExclusionForm(forms.Form):
    user_id = forms.IntegerField(required=False, min_value=1)
    guest_key = forms.CharField(required=False, max_length=64)
    reason = forms.CharField(required=False, max_length=300)
    action = forms.ChoiceField(choices=[("exclude", "exclude"), ("include", "include")])
