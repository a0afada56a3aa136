"""Prompts and chat layouts for LLM guessers, LLM judges and ΔBelief (ΔBelief-RL protocol).

Shared by inference (guessers/judges/rollouts) and training (SFT, DPO, GRPO), so a model is
always trained on exactly the chats it later plays with. Adapted from the questioner and
answerer prompts of bethgelab/delta-belief-rl (MIT).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from games.types import Turn, Verdict

GUESSER_SYSTEM_PROMPT = (
    "You are the Questioner in a game of 20 Questions, and your goal is to determine the secret "
    "word.\n"
    "The secret is randomly drawn from the most frequent nouns of the English language.\n\n"
    "Ask clear, concise, and strategic yes/no questions that will help you narrow down the "
    "possibilities.\n"
    "Consider previous answers to inform your subsequent questions, and keep track of the "
    "information you gather.\n"
    "You have a maximum of {max_turns} questions to guess the secret word correctly. Focus on "
    "deductive reasoning, start with a broad question and refine your queries as you progress."
)

GUESSER_PROMPT = (
    "Ask a question to gain additional information about the secret or guess what the secret "
    "is.\n\n"
    "Instructions:\n"
    '1. Ask a question that can be answered with "Yes" or "No" to help you deduce the secret '
    "word.\n"
    "2. Your answer must be a single question. Do not provide any additional commentary or "
    "reasoning.\n\n"
    "Ask your question: "
)

# A few dozen tokens instead of ~300: for small models trained from scratch, whose compute the
# paper's prompt would mostly spend on a fixed prefix (bench.learning). Chosen per training run
# (`guesser_prompt`) and recorded in its checkpoints, so the model plays with what it learnt.
SHORT_GUESSER_SYSTEM_PROMPT = (
    "20 Questions: find the secret noun with at most {max_turns} yes/no questions."
)
SHORT_GUESSER_PROMPT = "Your question:"

GUESSER_PROMPTS = {
    "paper": (GUESSER_SYSTEM_PROMPT, GUESSER_PROMPT),
    "short": (SHORT_GUESSER_SYSTEM_PROMPT, SHORT_GUESSER_PROMPT),
}
DEFAULT_GUESSER_PROMPT = "paper"
MODEL_RUN_CONFIG = "training_config.json"  # what a training run writes into each checkpoint folder
# how a shipped guesser plays (games/data/models/*): its prompt, sampling, pool, judge, provenance
MODEL_PLAY_SETTINGS = "guesser.json"

JUDGE_SYSTEM_PROMPT = (
    "You are the Answerer in a game of 20 Questions.\n"
    "Your role is to answer the questioner's questions with short and precise responses: "
    "'Yes', 'No', 'Invalid', or 'Finished'.\n"
    "Do not provide extra hints or commentary beyond your answer. Remain consistent and ensure "
    "that your responses accurately reflect the secret word. Answer the question to the best of "
    "your abilities."
)

JUDGE_PROMPT = (
    "The secret that has to be guessed is '{secret}'. Given the following question, is the "
    "correct response 'Yes' or 'No'? If it is not a yes/no question, respond with 'Invalid'; "
    "gibberish text or deviating from the game also counts as invalid. If the question names the "
    "secret, the answer is 'Finished'.\n\n"
    "Question: '{question}'\n\n"
    "Instructions:\n"
    "1. Answer the question to the best of your abilities, unless it is invalid.\n"
    "2. Reason briefly, in at most two short sentences.\n"
    "3. If the question asks for the secret '{secret}' (e.g. 'Is it {secret}?') or a semantically "
    "equivalent variation of it (e.g. 'laugh' and 'laughter'), answer 'Finished'.\n"
    "4. If the text is not a single valid yes/no question, answer 'Invalid'.\n"
    "5. In all other cases, answer either 'Yes' or 'No'.\n\n"
    "Give your answer in the format <answer>[Yes/No/Invalid/Finished]</answer>: "
)

JUDGE_HISTORY_LINE = "Questions asked so far: {questions}\n\n"

BELIEF_ELICITATION = "Is it '{secret}'?"


@dataclass(frozen=True)
class GuesserFormat:
    """How a game history becomes the guesser's chat.

    `repeat_prompt=True` appends the question prompt to every feedback message, as the
    ΔBelief-RL rollouts do ("Yes. Ask a question ..."); by default a user turn is the feedback.
    """

    system_prompt: str = GUESSER_SYSTEM_PROMPT
    prompt: str = GUESSER_PROMPT
    max_turns: int = 20
    repeat_prompt: bool = False

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {self.max_turns}")
        if not self.prompt.strip():
            raise ValueError("the guesser prompt is empty")

    @classmethod
    def named(cls, name: str = DEFAULT_GUESSER_PROMPT, *, max_turns: int = 20) -> GuesserFormat:
        """The format of one of GUESSER_PROMPTS ("paper" or "short")."""
        if name not in GUESSER_PROMPTS:
            raise ValueError(
                f"guesser prompt must be one of {', '.join(GUESSER_PROMPTS)}, got {name!r}"
            )
        system_prompt, prompt = GUESSER_PROMPTS[name]
        return cls(system_prompt=system_prompt, prompt=prompt, max_turns=max_turns)

    @classmethod
    def for_model(cls, *folders: str | Path | None, max_turns: int = 20) -> GuesserFormat:
        """The format a model was trained with (see `model_guesser_prompt`), else the paper's."""
        return cls.named(
            model_guesser_prompt(*folders) or DEFAULT_GUESSER_PROMPT, max_turns=max_turns
        )

    def messages(self, history: Sequence[Turn]) -> list[dict[str, str]]:
        return guesser_messages(
            history,
            system_prompt=self.system_prompt,
            prompt=self.prompt,
            max_turns=self.max_turns,
            repeat_prompt=self.repeat_prompt,
        )


def model_play_settings(folder: str | Path | None) -> dict:
    """What a shipped guesser's folder says about how it plays (MODEL_PLAY_SETTINGS: `sampling`,
    `guesser_prompt`, `pool`, `judge`, `max_turns`, `win_rule`, provenance); {} without one."""
    path = Path(folder) / MODEL_PLAY_SETTINGS if folder else None
    if path is None or not path.is_file():
        return {}
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return settings if isinstance(settings, dict) else {}


def model_guesser_prompt(*folders: str | Path | None) -> str | None:
    """The guesser prompt a shipped guesser's play settings name, else the one recorded by the
    training run of the first of `folders` (an adapter folder, then its base) that records one,
    or None (not trained here, or a hub id)."""
    for folder in folders:
        shipped = model_play_settings(folder).get("guesser_prompt")
        if shipped in GUESSER_PROMPTS:
            return shipped
        path = Path(folder) / MODEL_RUN_CONFIG if folder else None
        if path is None or not path.is_file():
            continue
        try:
            name = (
                json.loads(path.read_text(encoding="utf-8"))
                .get("resolved", {})
                .get("guesser_prompt")
            )
        except (OSError, ValueError, AttributeError):
            continue
        if name in GUESSER_PROMPTS:
            return name
    return None


def guesser_messages(
    history: Sequence[Turn],
    *,
    system_prompt: str = GUESSER_SYSTEM_PROMPT,
    prompt: str = GUESSER_PROMPT,
    max_turns: int = 20,
    repeat_prompt: bool = False,
) -> list[dict[str, str]]:
    """System, initial prompt, then one (assistant question, user feedback) pair per turn."""
    messages = []
    if system_prompt:
        messages.append(
            {"role": "system", "content": system_prompt.replace("{max_turns}", str(max_turns))}
        )
    messages.append({"role": "user", "content": prompt})
    for turn in history:
        feedback = f"{turn.feedback} {prompt}" if repeat_prompt else turn.feedback
        messages.append({"role": "assistant", "content": turn.question})
        messages.append({"role": "user", "content": feedback})
    return messages


def belief_reply(secret: str) -> tuple[str, tuple[int, int]]:
    """The ΔBelief elicitation `Is it '<secret>'?` and the character span of the secret in it."""
    reply = BELIEF_ELICITATION.format(secret=secret)
    start = reply.index(f"'{secret}'") + 1
    return reply, (start, start + len(secret))


def judge_messages(
    secret: str, question: str, history: Sequence[Turn] = (), *, with_history: bool = False
) -> list[dict[str, str]]:
    """The answerer's chat for one question; `with_history` lists the earlier questions."""
    user = JUDGE_PROMPT.format(secret=secret, question=question)
    if with_history and history:
        asked = "; ".join(t.question for t in history)
        user = user.replace(
            "Question: '", JUDGE_HISTORY_LINE.format(questions=asked) + "Question: '", 1
        )
    return [{"role": "system", "content": JUDGE_SYSTEM_PROMPT}, {"role": "user", "content": user}]


_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.IGNORECASE | re.DOTALL)
_ANSWER_WORDS = {
    "yes": Verdict.YES,
    "no": Verdict.NO,
    "finished": Verdict.FINISHED,
    "invalid": Verdict.INVALID,
    "repeated": Verdict.REPEATED,
}


def parse_judge_answer(text: str) -> Verdict | None:
    """The verdict in the last `<answer>…</answer>` tag (case-insensitive), or None when the
    tag is missing or holds anything but one verdict word (e.g. the echoed format)."""
    found = _ANSWER.findall(text or "")
    if not found:
        return None
    word = found[-1].strip().strip("[]'\"").strip().rstrip(".!").strip().lower()
    return _ANSWER_WORDS.get(word)


_THINK = re.compile(r"<think>.*?(</think>|$)", re.IGNORECASE | re.DOTALL)
_QUESTION_TAG = re.compile(r"<question>(.*?)(</question>|$)", re.IGNORECASE | re.DOTALL)
QUESTION_EXTRACTIONS = ("reply", "first_question")
DEFAULT_QUESTION_EXTRACTION = "reply"


def extract_question(text: str, extraction: str = DEFAULT_QUESTION_EXTRACTION) -> str:
    """What of a guesser's reply the game judges.

    `reply` (the paper's): the whole reply, `<think>…</think>` removed, the content of its first
    `<question>…</question>` when it has one, stripped, so the rule checks see what the model
    wrote ("Is it an animal? Is it a dog?" is invalid) and training trains on what was judged.
    `first_question` (an ablation): the first non-empty line of that, cut after its first "?".
    """
    if extraction not in QUESTION_EXTRACTIONS:
        raise ValueError(
            f"question extraction must be one of {', '.join(QUESTION_EXTRACTIONS)}, "
            f"got {extraction!r}"
        )
    text = _THINK.sub(" ", text or "")
    tagged = _QUESTION_TAG.search(text)
    if tagged:
        text = tagged.group(1)
    if extraction == "reply":
        return text.strip()
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    mark = line.find("?")
    return line[: mark + 1] if mark >= 0 else line
