"""HTML forms: parsing only; the rules live in services and the engine."""

from __future__ import annotations

from django import forms

from games import rules
from games.types import GameConfig
from webapp.play.models import GameMode, GameOutcome
from webapp.play.question_checks import invalid_advice, question_warning
from webapp.play.selectors import SHOW_CHOICES
from webapp.play.services import HUMAN_VERDICTS, MAX_TURNS_LIMIT, ROLES

MAX_QUESTION_INPUT = (
    500_000  # longer bodies are refused; anything shorter is judged (too long = invalid)
)


class GameStartForm(forms.Form):
    role = forms.ChoiceField(choices=[(r, r) for r in ROLES])
    judge = forms.CharField(required=False, max_length=100)
    guesser = forms.CharField(required=False, max_length=100)
    word_list = forms.CharField(required=False, max_length=100)
    # the model asks: "" = the person thinks of a word, "on" = drawn from word_list, "pick" = the
    # person's word typed in `secret` (a pool guesser's word, picked with autocomplete)
    draw_word = forms.ChoiceField(
        required=False,
        choices=[("", "think of one"), ("on", "draw one"), ("pick", "pick one")],
        label="Your word",
    )
    secret = forms.CharField(required=False, max_length=100, label="Your word from its pool")

    def clean(self):
        data = super().clean()
        if data.get("draw_word") == "pick" and not (data.get("secret") or "").strip():
            self.add_error("secret", "type a word from its pool, or choose another option")
        return data

    max_turns = forms.IntegerField(required=False, min_value=1, max_value=MAX_TURNS_LIMIT)


class GameActionForm(forms.Form):
    """A form posted to one game (`game`: the game, or None where it is not known)."""

    def __init__(self, *args, game=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.game = game


class QuestionForm(GameActionForm):
    """A person's question. What the rules would call invalid for its form alone (no "?", several
    questions, too long), a repeat of an earlier question and a guess of several things
    (question_checks.question_warning) are refused here with what to ask instead, so they cost
    no turn; a question with no question word is an invalid turn with its reason
    (question_checks.rule_note)."""

    question = forms.CharField(max_length=MAX_QUESTION_INPUT, label="Your question")
    expected_index = forms.IntegerField(min_value=0, widget=forms.HiddenInput)

    def clean_question(self) -> str:
        question = self.cleaned_data["question"]
        config = GameConfig()  # people play with the default question bounds
        reason = rules.syntax_error(question, config)
        if reason:
            advice = invalid_advice(reason, question)
            if reason == "too long":
                advice += f" Yours has {len(question.strip()):,}."
            raise forms.ValidationError(f"{advice} Not asked: this cost no turn.")
        warning = question_warning(self.game, question) if self.game is not None else None
        if warning:
            raise forms.ValidationError(f"{warning} Not asked: this cost no turn.")
        return question


class AnswerForm(GameActionForm):
    verdict = forms.ChoiceField(choices=[(v.value, v.value) for v in HUMAN_VERDICTS])
    expected_index = forms.IntegerField(min_value=0, widget=forms.HiddenInput)


class AbandonForm(GameActionForm):
    """Giving up (or taking an answer back) needs nothing but the CSRF token."""


class ConfirmSecretForm(GameActionForm):
    secret = forms.CharField(max_length=200, label="Your word")


class GameFilterForm(forms.Form):
    """The trajectory browser's filters; they live in the URL (a GET form). An invalid value leaves
    out that filter only (see `filters` and `problems`)."""

    show = forms.ChoiceField(required=False, choices=SHOW_CHOICES, label="Show")
    player = forms.CharField(
        required=False, max_length=150, label="Player", help_text="a username, or guest"
    )
    guesser = forms.CharField(required=False, max_length=100, label="Guesser")
    judge = forms.CharField(required=False, max_length=100, label="Judge")
    word = forms.CharField(required=False, max_length=100, label="Word")
    word_list = forms.CharField(required=False, max_length=100, label="Word list")
    outcome = forms.ChoiceField(
        required=False, choices=[("", "any")] + GameOutcome.choices, label="Outcome"
    )
    mode = forms.ChoiceField(required=False, choices=[("", "any")] + GameMode.choices, label="Mode")
    job = forms.IntegerField(required=False, min_value=1, max_value=2**63 - 1, label="Job")
    date_from = forms.DateField(
        required=False, widget=forms.DateInput(attrs={"type": "date"}), label="From"
    )
    date_to = forms.DateField(
        required=False, widget=forms.DateInput(attrs={"type": "date"}), label="To"
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():  # reasons that read as words in `problems`
            field.error_messages.update(
                invalid_choice="not one of the choices",
                min_value="a number from 1 up",
                max_value="too large for an id",
            )
            if isinstance(field, forms.IntegerField):
                field.error_messages["invalid"] = "not a whole number"
            elif isinstance(field, forms.DateField):
                field.error_messages["invalid"] = "not a date (year-month-day)"

    def filters(self) -> dict:
        """The valid filters with empty ones left out (call after is_valid(); an invalid field is
        missing from cleaned_data, so the others still apply)."""
        return {k: v for k, v in self.cleaned_data.items() if v not in ("", None)}

    def problems(self) -> list[str]:
        """Each invalid filter in words: its label, the value given and why it was left out."""
        out = []
        for name, errors in self.errors.items():
            field = self.fields.get(name)
            label = field.label if field is not None else "Filter"
            value = str(self.data.get(name, ""))[:60]
            reason = " ".join(str(e).rstrip(".") for e in errors)
            out.append(f"{label} “{value}” was left out: {reason[:1].lower()}{reason[1:]}.")
        return out
