"""The `disagreements` job: several judges re-answer stored questions; where they disagree the
question is queued for people to label (plus a seeded sample of agreeing ones as controls).

`source="gold"` instead re-judges the gold set (adjudicated or unanimously labelled items) so a new
or retrained judge is scored on the same questions; it queues nothing.

Only questions a judge was asked are used: turns the rules decided (invalid, repeated, finished,
raw text "rule: …") are skipped, and so are questions the people's rules (`strict`) call invalid
and questions with a word no judge can read (neither a knowledge-base noun or concept nor an
English word of some frequency: "Is it aora?"), which would otherwise fill the queue with a tiny
guesser's gibberish. `people_only` keeps people's games alone. By default the judges people play
with are compared (webapp.play.services.DEFAULT_JUDGES).

A job queues at most `max_items` items (disagreements and controls, in game order) and then ends:
every queued item hides the games that ask its question until it is labelled
(webapp.labelling.selectors.games_not_blinded), so one job must not hide most of the site.

Unknown votes count as a distinct answer by default (`unknown="distinct"`): a judge that abstains
leaves the other judge's answer unchecked, and those items are where a judge's "unrecognised" rate
is measured; `unknown="ignore"` compares only the judges that answered (use it when a knowledge-base
judge would flood the queue with abstentions).

A probabilistic judge (the learned judge, e.g. `judges=("kb", "learned")`) stores its p_yes on its
vote, and a queued item keeps the uncertainty of its least sure vote: annotators get the items
nearest a coin flip first (selectors.queue_candidates).

Idempotent: each batch of turns is stored in one transaction and a re-run skips turns this job has
already voted on; an item is unique per game turn, so a later job attaches its votes to it. The
result's counts are read back from the stored votes and items (`tally`), so a resumed job's counts
cover its whole run.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

from games import rules
from games.engine import judge_seed
from games.judges.base import JudgeRequest
from games.types import GameConfig, Verdict
from training.common.config import _check, check_between, knob
from training.reporting import StopRequested
from webapp.catalog.builders import judge_for
from webapp.catalog.models import ModelSpec
from webapp.jobs.kinds.checks import check_model
from webapp.labelling.models import DisagreementItem, JudgeVote
from webapp.labelling.votes import history_of, history_turns, score_items, vote_of
from webapp.play.exports import games_selection
from webapp.play.models import GameMode, Turn
from webapp.play.services import DEFAULT_JUDGES, PEOPLE_WIN_RULE

RULE_VERDICTS = (Verdict.FINISHED.value, Verdict.REPEATED.value)
SOURCES = ("games", "gold")
UNKNOWN_MODES = ("distinct", "ignore")
MAX_ITEMS, MAX_ITEMS_LIMIT = 200, 5_000  # items one job queues: the default and the most allowed
MIN_WORD_ZIPF = 1.5  # a word outside the knowledge base is read below this frequency ("tungus")
PEOPLES_RULES = GameConfig(win_rule=PEOPLE_WIN_RULE)


@dataclass(frozen=True)
class DisagreementsConfig:
    judges: tuple[str, ...] = knob(
        DEFAULT_JUDGES, "judge model specs to compare (default: the judges people play with)"
    )
    include_human: bool = knob(
        False,
        ("also count people's verdicts from games where they answered (stored human:<name> votes)"),
    )
    source: str = knob(
        "games",
        (
            "games: questions of stored games; gold: re-judge the gold set to score these "
            "judges (queues nothing)"
        ),
        choices=SOURCES,
    )
    from_job: int = knob(0, "only games of this job (0 = any)", min=0)
    from_word_list: str = knob("", "only games on this word list")
    from_guesser: str = knob("", "only games with this guesser model spec")
    people_only: bool = knob(False, "only games people played (asked or answered in)")
    unknown: str = knob(
        "distinct",
        (
            "distinct: an unknown vote disagrees with yes/no; ignore: compare only the "
            "judges that answered"
        ),
        choices=UNKNOWN_MODES,
    )
    controls: float = knob(
        0.05, "share of agreeing questions queued as controls (seeded)", min=0, max=1
    )
    labels_needed: int = knob(3, "annotators per queued item", min=1, max=20)
    seed: int = knob(0, "seed of the control sample")
    limit: int = knob(0, "at most this many questions (0 = all)", min=0)
    max_items: int = knob(
        MAX_ITEMS,
        "at most this many items queued (each hides the games asking it until labelled)",
        min=1,
        max=MAX_ITEMS_LIMIT,
    )
    batch_size: int = knob(256, "questions per judge call and per stored batch", min=1, max=10_000)

    def __post_init__(self) -> None:
        names = [n.strip() for n in self.judges]
        _check(
            all(names) and len(set(names)) == len(names),
            "judges must be distinct, non-empty model spec names",
        )
        _check(self.source in SOURCES, "source must be games or gold", "source")
        _check(self.unknown in UNKNOWN_MODES, "unknown must be distinct or ignore", "unknown")
        voters = len(names) + (1 if self.include_human else 0)
        _check(
            self.source != "games" or voters >= 2,
            "judges: comparing needs at least two voters (two judges, or one judge and people)",
        )
        _check(
            self.source != "gold" or (bool(names) and not self.include_human),
            "judges: scoring on the gold set needs at least one judge and no people's votes",
        )
        check_between(self, "controls")
        check_between(self, "labels_needed")
        check_between(self, "max_items")
        for name in ("from_job", "limit"):
            check_between(self, name, message="from_job and limit must be 0 or positive")
        check_between(self, "batch_size")


def turns_selection(config: DisagreementsConfig):
    """Game turns a judge was asked about, in the selected games (before `left_out`)."""
    games = games_selection(
        job=config.from_job, word_list=config.from_word_list, guesser=config.from_guesser
    ).exclude(secret="")
    if config.people_only:
        games = games.exclude(mode=GameMode.MODEL_VS_MODEL)
    return (
        Turn.objects.filter(game__in=games)
        .exclude(verdict__in=RULE_VERDICTS)
        .exclude(judge_raw__startswith="rule:")
        .order_by("game_id", "index")
    )


@lru_cache(maxsize=1 << 16)
def _readable(word: str) -> bool:
    from wordfreq import zipf_frequency

    kb = rules._kb()
    return (
        kb.lookup(word) is not None
        or word in _concept_words()
        or zipf_frequency(word, "en") >= MIN_WORD_ZIPF
    )


@lru_cache(maxsize=1)
def _concept_words() -> frozenset[str]:
    return frozenset(w for f in rules._kb().features for w in f.split(":", 1)[1].split())


def left_out(question: str, secret: str) -> str | None:
    """Why a judged question is not worth a person's label, or None: "invalid" (people's rules
    would not have asked a judge) or "unreadable" (a word no judge can read)."""
    verdict = rules.rule_verdict(question, secret, PEOPLES_RULES)
    if verdict is not None and verdict[0] is Verdict.INVALID:
        return "invalid"
    if not all(_readable(w) for w in rules.content_words(question)):
        return "unreadable"
    return None


def selected_turns(config: DisagreementsConfig) -> tuple[list[int], Counter]:
    """(ids of the turns to judge, in order, `limit` applied; how many were left out, by why)."""
    ids, dropped = [], Counter()
    rows = turns_selection(config).values_list("id", "question", "game__secret")
    for pk, question, secret in rows.iterator(chunk_size=2000):
        why = left_out(question, secret)
        if why:
            dropped[why] += 1
        else:
            ids.append(pk)
            if config.limit and len(ids) >= config.limit:
                break
    return ids, dropped


def check(config: DisagreementsConfig) -> None:
    errors = {}
    for name in config.judges:
        check_model(errors, "judges", name, "judge")
    if config.source == "gold":
        from webapp.labelling.selectors import gold_labels

        if not gold_labels():
            errors["source"] = [
                "there is no gold set yet (adjudicate or fully label some items first)"
            ]
    elif not turns_selection(config).exists():
        errors["__all__"] = ["no judged questions in the selected games"]
    if errors:
        raise ValidationError(errors)


def uncertainty(votes) -> float | None:
    """1 − 2·|p_yes − 0.5| of the least sure probabilistic vote (None when no vote has a p_yes)."""
    values = [1.0 - 2.0 * abs(v.p_yes - 0.5) for v in votes if v.p_yes is not None]
    return round(max(values), 4) if values else None


def compared(verdicts: list[str], unknown: str) -> bool | None:
    """True if the voters disagree, False if they agree, None if fewer than two answered."""
    kept = [v for v in verdicts if not (unknown == "ignore" and v == Verdict.UNKNOWN.value)]
    return None if len(kept) < 2 else len(set(kept)) > 1


def is_control(seed: int, turn_id: int, share: float) -> bool:
    return share > 0 and random.Random(f"{seed}:{turn_id}").random() < share


def run(config: DisagreementsConfig, reporter) -> dict:
    specs = [ModelSpec.objects.get(name=name) for name in config.judges]
    judges = [(spec, judge_for(spec)) for spec in specs]
    if config.source == "gold":
        return _run_gold(config, judges, reporter)
    ids, dropped = selected_turns(config)
    job_id = reporter.job_id
    done = set(
        JudgeVote.objects.filter(job_id=job_id, turn_id__in=ids).values_list("turn_id", flat=True)
    )
    todo = [i for i in ids if i not in done]
    room = config.max_items - DisagreementItem.objects.filter(job_id=job_id).count()
    n = len(done)
    for start in range(0, len(todo), config.batch_size):
        if room <= 0:
            break
        if reporter.should_stop():
            raise StopRequested()
        batch = todo[start : start + config.batch_size]
        room -= _judge_turns(config, judges, batch, job_id, room)
        n += len(batch)
        reporter.progress(n / max(len(ids), 1), f"{n}/{len(ids)} questions")
        queued = Counter(
            DisagreementItem.objects.filter(job_id=job_id).values_list("is_control", flat=True)
        )
        reporter.metrics(
            n,
            {"disagreements/queued": queued[False], "disagreements/controls": queued[True]},
        )
    result = {
        "questions": len(ids),
        "left_out_invalid": dropped["invalid"],
        "left_out_unreadable": dropped["unreadable"],
        **tally(config, job_id, examined_before=len(done)),
    }
    result["max_items_reached"] = result["queued_items"] >= config.max_items
    reporter.log(
        f"{result['examined']} questions judged; {result['disagreements']} disagreements and "
        f"{result['controls']} controls queued"
        + (f" (the job's bound, {config.max_items} items)" if result["max_items_reached"] else "")
    )
    return result


def tally(config: DisagreementsConfig, job_id: int, *, examined_before: int = 0) -> dict:
    """The job's counts, read back from its stored votes and items (a resumed run included)."""
    by_turn: dict[int, dict[str, str]] = {}
    items: dict[int, int | None] = {}
    for turn_id, name, verdict, item_id in (
        JudgeVote.objects.filter(job_id=job_id)
        .order_by("id")
        .values_list("turn_id", "judge_name", "verdict", "item_id")
    ):
        by_turn.setdefault(turn_id, {})[name] = verdict
        items[turn_id] = item_id
    if config.include_human:
        for turn_id, vote in _human_votes(list(by_turn)).items():
            by_turn[turn_id].update({v.judge_name: v.verdict for v in vote})
    own = Counter(
        DisagreementItem.objects.filter(job_id=job_id).values_list("is_control", flat=True)
    )
    mine = set(DisagreementItem.objects.filter(job_id=job_id).values_list("id", flat=True))
    pairs, outcome = Counter(), Counter()
    for verdicts in by_turn.values():
        outcome[compared(list(verdicts.values()), config.unknown)] += 1
        _count_pairs(verdicts, config.unknown, pairs)
    examined = len(by_turn)
    return {
        "examined": examined,
        "examined_now": examined - examined_before,
        "examined_before": examined_before,
        "disagreements": own[False],
        "controls": own[True],
        "already_queued": sum(1 for i in items.values() if i is not None and i not in mine),
        "not_compared": outcome[None],
        "votes": JudgeVote.objects.filter(job_id=job_id).count(),
        "disagreement_rate": (outcome[True] / examined) if examined else None,
        "pair_disagreements": dict(pairs),
        # not "items": a result key of that name shadows dict.items in the job page's template
        "queued_items": own[False] + own[True],
    }


def _judge_turns(config, judges, ids: list[int], job_id: int, room: int) -> int:
    """Judge these turns and store the votes; queue at most `room` new items. Returns how many
    were queued."""
    turns = list(
        Turn.objects.filter(id__in=ids).select_related("game").order_by("game_id", "index")
    )
    histories = _histories(turns)
    requests = [
        JudgeRequest(
            t.game.secret,
            t.question,
            history_turns(histories[t.pk]),
            judge_seed(t.game.seed, t.index),
        )
        for t in turns
    ]
    answers = {spec.name: judge.judge_batch(requests) for spec, judge in judges}
    humans = _human_votes(ids) if config.include_human else {}
    existing = dict(
        DisagreementItem.objects.filter(source_turn_id__in=ids).values_list("source_turn_id", "id")
    )
    queued = 0
    with transaction.atomic():
        for i, turn in enumerate(turns):
            votes = [
                vote_of(
                    answers[spec.name][i],
                    turn=turn,
                    secret=turn.game.secret,
                    question=turn.question,
                    judge_name=spec.name,
                    judge_spec=spec,
                    job_id=job_id,
                )
                for spec, _ in judges
            ]
            people = humans.get(turn.pk, [])
            verdicts = {v.judge_name: v.verdict for v in [*votes, *people]}
            item_id = _queued_item(
                config,
                turn,
                history=histories[turn.pk],
                votes=votes,
                disagree=compared(list(verdicts.values()), config.unknown),
                item_id=existing.get(turn.pk),
                job_id=job_id,
                may_queue=queued < room,
            )
            queued += item_id is not None and turn.pk not in existing
            for vote in votes:
                vote.item_id = item_id
            JudgeVote.objects.bulk_create(votes)
            if item_id is not None and people:
                JudgeVote.objects.filter(pk__in=[v.pk for v in people], item__isnull=True).update(
                    item_id=item_id
                )
    return queued


def _histories(turns: list[Turn]) -> dict[int, list[dict]]:
    """Each turn's game history before it (the earlier turns of its game), by turn id."""
    earlier = {}
    for row in (
        Turn.objects.filter(game_id__in={t.game_id for t in turns})
        .order_by("game_id", "index")
        .values("game_id", "index", "question", "verdict", "feedback")
    ):
        earlier.setdefault(row["game_id"], []).append(row)
    return {
        t.pk: history_of([r for r in earlier[t.game_id] if r["index"] < t.index]) for t in turns
    }


def _human_votes(ids: list[int]) -> dict[int, list[JudgeVote]]:
    """People's stored votes (human:<name>) on these turns, by turn id."""
    humans: dict[int, list[JudgeVote]] = {}
    people = JudgeVote.objects.filter(turn_id__in=ids, judge_name__startswith="human:")
    for vote in people.order_by("id"):
        humans.setdefault(vote.turn_id, []).append(vote)
    return humans


def _queued_item(
    config,
    turn: Turn,
    *,
    history: list[dict],
    votes: list[JudgeVote],
    disagree: bool | None,
    item_id: int | None,
    job_id: int,
    may_queue: bool,
) -> int | None:
    """The id of the turn's queued item: the one already queued (its uncertainty raised by these
    votes), a new one if the voters disagree or the turn is drawn as a control (while the job may
    still queue), else None."""
    if (
        item_id is None
        and may_queue
        and (disagree or (disagree is False and is_control(config.seed, turn.pk, config.controls)))
    ):
        item = DisagreementItem.objects.create(
            secret=turn.game.secret,
            question=turn.question,
            history=history,
            source_turn=turn,
            job_id=job_id,
            is_control=not disagree,
            labels_needed=config.labels_needed,
            uncertainty=uncertainty(votes),
        )
        return item.pk
    if item_id is not None:
        _raise_uncertainty(item_id, uncertainty(votes))
    return item_id


def _raise_uncertainty(item_id: int, value: float | None) -> None:
    """A later job's less sure vote makes a queued item more uncertain (never less)."""
    if value is not None:
        DisagreementItem.objects.filter(pk=item_id).filter(
            Q(uncertainty__isnull=True) | Q(uncertainty__lt=value)
        ).update(uncertainty=value)


def _count_pairs(verdicts: dict[str, str], unknown: str, pairs: Counter) -> None:
    names = sorted(verdicts)
    for a_i, a in enumerate(names):
        for b in names[a_i + 1 :]:
            if compared([verdicts[a], verdicts[b]], unknown):
                pairs[f"{a} vs {b}"] += 1


def _run_gold(config, judges, reporter) -> dict:
    from webapp.labelling.selectors import gold_labels

    gold = gold_labels()
    items = list(DisagreementItem.objects.filter(pk__in=gold).order_by("id"))
    done = {
        (v["item_id"], v["judge_name"])
        for v in JudgeVote.objects.filter(job_id=reporter.job_id).values("item_id", "judge_name")
    }
    n_votes = 0
    for start in range(0, len(items), config.batch_size):
        if reporter.should_stop():
            raise StopRequested()
        chunk = items[start : start + config.batch_size]
        n_votes += score_items(chunk, judges, job_id=reporter.job_id, skip=done)
        reporter.progress(
            (start + len(chunk)) / len(items), f"{start + len(chunk)}/{len(items)} gold items"
        )
    return {"gold_items": len(items), "votes": n_votes, "judges": [spec.name for spec, _ in judges]}
