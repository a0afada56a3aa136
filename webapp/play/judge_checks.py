"""How a person's answers compare with the cheap judges' (the knowledge base's, the pretrained
judge's and the learned judge's) once the word of a game a model asked about is known."""

from __future__ import annotations

from collections.abc import Sequence

from games import rules
from games.judges.base import UnknownSecretError
from games.types import GameConfig, JudgeAnswer, Verdict
from games.types import Turn as TurnData
from webapp.catalog import builders
from webapp.catalog.builders import model_unusable
from webapp.catalog.models import ModelSpec
from webapp.catalog.selectors import model_specs_for
from webapp.core.exceptions import ApplicationError

KB_JUDGE, PRETRAINED_JUDGE, LEARNED_JUDGE = "kb", "pretrained", "learned"
# the cheap judges a person's answers are compared with
CHECK_JUDGES = (KB_JUDGE, PRETRAINED_JUDGE, LEARNED_JUDGE)


def build_model(factory, spec: ModelSpec):
    """`factory(spec)`, or a 503 ApplicationError saying why the model cannot be used."""
    try:
        return factory(spec)
    except Exception as err:  # a missing model folder, an unreachable server, ...
        raise ApplicationError(model_unusable(f"The model “{spec.name}”", err), status=503) from err


def judge_check(secret: str, turns: Sequence[TurnData], config: GameConfig | None = None) -> dict:
    """Every answer a person gave that another judge would give differently, for each active judge
    of CHECK_JUDGES: `judges` (per judge: how many answers it could compare and where it differs,
    with what it would have said and, for the learned judge, its p_yes) and `differences` (per
    question where any judge differs, every judge's answer). The top-level fields (`available`,
    `judge`, `compared`, `disagreements` with `kb` and `kb_raw`, ...) are the first comparable
    judge's (the knowledge base's), as before there were several."""
    specs = {s.name: s for s in model_specs_for("judge").filter(name__in=CHECK_JUDGES)}
    answered = [t for t in turns if t.extra.get("judge") == "human"]
    checks, answers = (
        [],
        [],
    )  # answers: per comparable judge, its answer to each question (by turn index)
    for name in (n for n in CHECK_JUDGES if n in specs):
        check, said = _one_judge_check(specs[name], secret, answered, config or GameConfig())
        checks.append(check)
        if check["available"]:
            answers.append((check, said))
    if not checks:
        return {
            "available": False,
            "judges": [],
            "differences": [],
            "note": "No knowledge-base, pretrained or learned judge is registered, so nothing "
            "was compared.",
        }
    main = next((c for c in checks if c["available"]), checks[0])
    legacy = {
        key: main[key]
        for key in ("available", "judge", "note", "checked", "ungrounded", "compared")
        if key in main
    }
    if main["available"]:
        legacy["disagreements"] = [
            {
                "index": d["index"],
                "question": d["question"],
                "you": d["you"],
                "kb": d["said"],
                "kb_raw": d["raw"],
            }
            for d in main["disagreements"]
        ]
    differing = sorted({d["index"] for c, _ in answers for d in c["disagreements"]})
    by_index = {t.index: t for t in answered}
    differences = [
        {
            "index": i,
            "question": by_index[i].question,
            "you": by_index[i].verdict.value,
            "answers": [{"judge": c["judge"], **said[i]} for c, said in answers],
        }
        for i in differing
    ]
    return {**legacy, "judges": checks, "differences": differences}


def _one_judge_check(
    spec: ModelSpec, secret: str, answered: Sequence[TurnData], config: GameConfig
) -> tuple[dict, dict[int, dict]]:
    """One judge against the person's answers: its summary, and its answer to each question by
    index."""
    unavailable = {"available": False, "judge": spec.name, "kind": spec.kind}
    try:
        judge = build_model(builders.judge_for, spec)
    except ApplicationError as err:  # e.g. missing weights: the other judges are still compared
        return {**unavailable, "note": err.message}, {}
    try:
        judge.check_secret(secret)
    except UnknownSecretError:
        return {
            **unavailable,
            "note": f"“{secret}” is not in the knowledge base, "
            f"so {spec.name}'s answers could not be compared.",
        }, {}
    said, disagreements, ungrounded = {}, [], 0
    for turn in answered:
        decided = rules.rule_verdict(turn.question, secret, config)  # a win or a wrong guess
        if decided is not None and decided[0] in (Verdict.FINISHED, Verdict.NO):
            answer = JudgeAnswer(decided[0], raw=f"rule: {decided[1]}")
        else:
            answer = judge.judge(secret, turn.question)
        differs = answer.verdict is not Verdict.UNKNOWN and answer.verdict is not turn.verdict
        said[turn.index] = {
            "said": answer.verdict.value,
            "raw": answer.raw,
            "p_yes": answer.p_yes,
            "differs": differs,
        }
        ungrounded += answer.verdict is Verdict.UNKNOWN
        if differs:
            disagreements.append(
                {
                    "index": turn.index,
                    "question": turn.question,
                    "you": turn.verdict.value,
                    "said": answer.verdict.value,
                    "raw": answer.raw,
                    "p_yes": answer.p_yes,
                }
            )
    return {
        "available": True,
        "judge": spec.name,
        "kind": spec.kind,
        "checked": len(answered),
        "ungrounded": ungrounded,
        "compared": len(answered) - ungrounded,
        "disagreements": disagreements,
    }, said
