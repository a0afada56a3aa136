"""HTML forms: parsing only; the rules live in services and the engine."""

from __future__ import annotations

from django import forms

from webapp.play.models import GameMode, GameOutcome
from webapp.play.services import HUMAN_VERDICTS, MAX_TURNS_LIMIT, ROLES

MAX_QUESTION_INPUT = (
    500_000  # longer bodies are refused; anything shorter is judged (too long = invalid)
)


class GameStartForm(forms.Form):
    role = forms.ChoiceField(choices=[(r, r) for r in ROLES])
    judge = forms.CharField(required=False, max_length=100)
    guesser = forms.CharField(required=False, max_length=100)
    word_list = forms.CharField(required=False, max_length=100)
    draw_word = forms.BooleanField(required=False, help_text="draw the word from the word list")
    max_turns = forms.IntegerField(required=False, min_value=1, max_value=MAX_TURNS_LIMIT)


class QuestionForm(forms.Form):
    question = forms.CharField(max_length=MAX_QUESTION_INPUT, label="Your question")
    expected_index = forms.IntegerField(min_value=0, widget=forms.HiddenInput)


class AnswerForm(forms.Form):
    verdict = forms.ChoiceField(choices=[(v.value, v.value) for v in HUMAN_VERDICTS])
    expected_index = forms.IntegerField(min_value=0, widget=forms.HiddenInput)


class AbandonForm(forms.Form):
    """Giving up (or taking an answer back) needs nothing but the CSRF token."""


class ConfirmSecretForm(forms.Form):
    secret = forms.CharField(max_length=200, label="Your word")


class GameFilterForm(forms.Form):
    """The trajectory browser's filters; they live in the URL (a GET form)."""

    player = forms.CharField(required=False, max_length=150, help_text="a username, or guest")
    guesser = forms.CharField(required=False, max_length=100)
    judge = forms.CharField(required=False, max_length=100)
    word = forms.CharField(required=False, max_length=100)
    word_list = forms.CharField(required=False, max_length=100)
    outcome = forms.ChoiceField(required=False, choices=[("", "any")] + GameOutcome.choices)
    mode = forms.ChoiceField(required=False, choices=[("", "any")] + GameMode.choices)
    job = forms.IntegerField(required=False, min_value=1)
    date_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def filters(self) -> dict:
        """The cleaned filters with empty ones left out (call after is_valid())."""
        return {k: v for k, v in self.cleaned_data.items() if v not in ("", None)}
