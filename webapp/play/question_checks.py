"""What the rules say of a question's form, told to the person who asks: the checks before it is
asked (a repeat, a guess of several things under the strict rule: question_warning), what to ask
instead of an invalid question (invalid_advice, as_question) and why the rules answered a turn
(rule_note)."""

from __future__ import annotations

import re

from games import rules
from games.types import GameConfig, Verdict
from webapp.play.models import Game, Turn

# what each verdict is called where people read it
ANSWER_LABELS = {
    "yes": "Yes",
    "no": "No",
    "unknown": "Don't know",
    "invalid": "Invalid",
    "repeated": "Repeated",
    "finished": "That's the word",
}


def rule_note(turn: Turn) -> str:
    """Why the rules, not the judge, answered a turn ("Invalid: a guess must name one thing. Ask
    about one thing at a time.", "No, it is not a canoe."); "" for a judge's answer. Rule reasons
    never name the secret."""
    if not turn.judge_raw.startswith("rule: "):
        return ""
    reason = turn.judge_raw[len("rule: ") :]
    if turn.verdict == Verdict.INVALID:
        return f"Invalid: {reason}. {invalid_advice(reason, turn.question)}".strip()
    if turn.verdict == Verdict.NO:
        return rules.feedback(Verdict.NO, turn.judge_raw)
    return ""


# what to do instead, for each reason the rules give (games.rules.syntax_error, rule_verdict)
INVALID_ADVICE = {
    "too short": "Type a yes/no question, such as “Is it alive?”.",
    "too long": "Keep a question under {max_chars} characters.",
    "several questions": "Ask one question at a time: one “?”, at the end.",
    "does not end with a question mark": "A question ends with “?”.",
    "a control character or line break": "Keep the question on one line.",
    "no words": "Type a yes/no question in words, such as “Is it alive?”.",
    rules.NO_QUESTION_WORD: "Start with a question word: “Is it …?”, “Does it …?”, “Can it …?”.",
    rules.SEVERAL_THINGS: "Ask about one thing at a time: “Is it a dog?”, not “a dog or a cat”.",
}
_GUESS_OPENER = re.compile(
    r"^(?:(?:i think|i guess|i bet|i believe|maybe|perhaps|probably|my guess is|my guess|guess|"
    r"so|ok|okay|then|it's|it is|its|that's|that is)[ ,:]+)*"
)


def invalid_advice(reason: str, question: str = "") -> str:
    """What to ask instead of a question the rules call invalid for `reason`: for a bare word or a
    statement ("ball", "I think it's a ball") the guess as a question ("To guess, ask “Is it a
    ball?”.")."""
    advice = INVALID_ADVICE.get(reason, "Ask one yes/no question ending with “?”.")
    advice = advice.format(max_chars=GameConfig().max_question_chars)
    if reason in ("does not end with a question mark", rules.NO_QUESTION_WORD):
        rephrased = as_question(question)
        if rephrased:
            advice = f"{advice} Did you mean “{rephrased}”?"
    return advice


def question_warning(game: Game, question: str) -> str | None:
    """Why the person's next question would be wasted, told before it is asked (it costs no turn):
    a repeat of an earlier question, or under the strict rule a guess of several things; or
    None."""
    key = rules.normalise_question(question)
    for turn in game.turns.order_by("index"):
        if turn.verdict != Verdict.INVALID and rules.normalise_question(turn.question) == key:
            answer = ANSWER_LABELS.get(turn.verdict, turn.verdict)
            return f"You asked this at question {turn.index + 1} ({answer}): ask something new."
    if (game.config or {}).get("win_rule") == "strict" and rules.several_things(question):
        return f"A guess must name one thing. {INVALID_ADVICE[rules.SEVERAL_THINGS]}"
    return None


def as_question(text: str) -> str | None:
    """`text` as the yes/no question it most likely meant, or None: a question missing its "?"
    gets one ("Is it alive" → "Is it alive?"); a bare word or a statement of a guess becomes a
    guess of one thing ("ball", "I think it's a ball" → "Is it a ball?")."""
    text = " ".join(text.split()).rstrip(" ?.!")
    if not text or len(text) > 200:
        return None
    low = text.lower().replace("’", "'")
    first = rules.words(low)[:1]
    if first and first[0] in rules.QUESTION_WORDS:
        return f"{text[:1].upper()}{text[1:]}?"
    thing = _GUESS_OPENER.sub("", low).strip(" ,")
    article, _, rest = thing.partition(" ")
    if article not in ("a", "an", "the") or not rest:
        article, rest = ("an" if thing[:1] in "aeiou" else "a"), thing
    if not rest or len(rules.words(rest)) > 3 or not re.fullmatch(r"[a-z][a-z' -]*", rest):
        return None
    return f"Is it {article} {rest}?"
