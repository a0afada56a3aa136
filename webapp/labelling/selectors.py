"""Reads: the queue's candidates and progress, reveals, review lists, gold, agreement, judge
accuracy.

Gold is the label a researcher adjudicated; where there is none, the unanimous label of an item
that has all the labels it asked for ("consensus").
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Sum, Value
from django.db.models.functions import Coalesce, Least, Lower, Trim
from django.utils import timezone

from games.agreement import agreement_report, judge_accuracy
from webapp.catalog.selectors import model_specs_for
from webapp.labelling.models import Assignment, DisagreementItem, JudgeVote, Label, LabelVerdict

CATEGORIES = [c.value for c in LabelVerdict]
SUBSETS = ("all", "disagreements", "controls")
UNDO_WINDOW = timedelta(minutes=2)  # how long a label can be taken back (services.label_undo)
REVIEW_FILTERS = {
    "disputed": "labels disagree, no gold yet",
    "complete": "all labels in, no gold yet",
    "adjudicated": "gold set by a researcher",
    "open": "still being labelled",
    "all": "all items",
}


# -- the queue ------------------------------------------------------------------------------------
def reserved_by_others(item_id: int, user, now=None):
    return Assignment.objects.filter(
        item_id=item_id, skipped_at__isnull=True, expires_at__gt=now or timezone.now()
    ).exclude(annotator=user)


def queue_candidates(user, now=None):
    """Open items this person has neither labelled nor skipped and that have a free slot: the most
    uncertain first (a probabilistic judge's vote nearest 0.5), then the fullest, then the
    oldest."""
    now = now or timezone.now()
    live = (
        Assignment.objects.filter(item=OuterRef("pk"), skipped_at__isnull=True, expires_at__gt=now)
        .exclude(annotator=user)
        .order_by()
        .values("item")
        .annotate(c=Count("id"))
        .values("c")
    )
    return (
        _open_for(user)
        .annotate(reserved=Coalesce(Subquery(live, output_field=IntegerField()), Value(0)))
        .filter(labels_count__lt=F("labels_needed") - F("reserved"))
        .order_by(F("uncertainty").desc(nulls_last=True), "-labels_count", "id")
    )


def _open_for(user):
    """Items still asking for labels that this person has neither labelled nor skipped."""
    skipped = Assignment.objects.filter(annotator=user, skipped_at__isnull=False).values("item_id")
    return (
        open_items()
        .exclude(pk__in=Label.objects.filter(annotator=user).values("item_id"))
        .exclude(pk__in=skipped)
    )


def active_assignment(user, now=None) -> Assignment | None:
    return (
        Assignment.objects.filter(
            annotator=user,
            skipped_at__isnull=True,
            expires_at__gt=now or timezone.now(),
            item__gold="",
        )
        .exclude(item__labels__annotator=user)
        .select_related("item")
        .order_by("created_at")
        .first()
    )


def queue_progress(user) -> dict:
    """The queue's header. `open_items` (of `items`) still lack some of the labels they ask for
    (several people label each item, so one person's label leaves its item open); `labels_given`
    of `labels_wanted` counts the labels themselves over the items without gold, so it moves with
    every label."""
    mine = Label.objects.filter(annotator=user).count()
    labels = DisagreementItem.objects.filter(gold="").aggregate(
        given=Coalesce(Sum(Least("labels_count", "labels_needed")), 0),
        wanted=Coalesce(Sum("labels_needed"), 0),
    )
    return {
        "labelled": mine,
        "remaining": _open_for(user).count(),
        "skipped": Assignment.objects.filter(annotator=user, skipped_at__isnull=False).count(),
        "open_items": DisagreementItem.objects.filter(
            gold="", labels_count__lt=F("labels_needed")
        ).count(),
        "items": DisagreementItem.objects.count(),
        "labels_given": labels["given"],
        "labels_wanted": labels["wanted"],
    }


def item_reveal(item_id: int, user) -> dict | None:
    """The judges' votes on an item, once this person has labelled it (blind until then)."""
    label = Label.objects.filter(item_id=item_id, annotator=user).select_related("item").first()
    if label is None:
        return None
    votes = list(
        JudgeVote.objects.filter(item_id=item_id)
        .order_by("judge_name", "-id")
        .values("judge_name", "verdict", "p_yes")
    )
    latest = list({v["judge_name"]: v for v in reversed(votes)}.values())
    return {
        "item": label.item,
        "label": label,
        "votes": sorted(latest, key=lambda v: v["judge_name"]),
    }


def last_label(user) -> Label | None:
    return (
        Label.objects.filter(annotator=user)
        .select_related("item")
        .order_by("-created_at", "-id")
        .first()
    )


# -- review ---------------------------------------------------------------------------------------
def review_items(show: str = "disputed"):
    distinct = Count("labels__verdict", distinct=True)
    items = DisagreementItem.objects.annotate(n_verdicts=distinct)
    if show == "disputed":
        items = items.filter(gold="", n_verdicts__gt=1)
    elif show == "complete":
        items = items.filter(gold="", labels_count__gte=F("labels_needed"))
    elif show == "adjudicated":
        items = items.exclude(gold="")
    elif show == "open":
        items = items.filter(gold="", labels_count__lt=F("labels_needed"))
    return (
        items.select_related("adjudicated_by")
        .prefetch_related("labels__annotator", "votes")
        .order_by("id")
    )


def item_detail(item: DisagreementItem) -> dict:
    """Labels, latest vote per judge and per-item agreement of one item (prefetched)."""
    labels = sorted(item.labels.all(), key=lambda lab: lab.created_at)
    votes = {}
    for vote in sorted(item.votes.all(), key=lambda v: v.id):
        votes[vote.judge_name] = vote
    counts = defaultdict(int)
    for lab in labels:
        counts[lab.verdict] += 1
    n = len(labels)
    agreeing = sum(c * (c - 1) for c in counts.values())
    return {
        "item": item,
        "labels": labels,
        "votes": [votes[k] for k in sorted(votes)],
        "label_counts": dict(counts),
        "agreement": (agreeing / (n * (n - 1))) if n > 1 else None,
    }


# -- gold -----------------------------------------------------------------------------------------
def gold_labels(*, include_consensus: bool = True) -> dict[int, tuple[str, str]]:
    """item id -> (gold label, "adjudicated" | "consensus")."""
    gold = {
        pk: (label, "adjudicated")
        for pk, label in DisagreementItem.objects.exclude(gold="").values_list("pk", "gold")
    }
    if include_consensus:
        complete = DisagreementItem.objects.filter(
            gold="", labels_count__gte=F("labels_needed"), labels_count__gt=0
        )
        by_item = defaultdict(set)
        for item_id, verdict in Label.objects.filter(item__in=complete).values_list(
            "item_id", "verdict"
        ):
            by_item[item_id].add(verdict)
        gold.update({pk: (next(iter(v)), "consensus") for pk, v in by_item.items() if len(v) == 1})
    return gold


def gold_answers() -> list[tuple[str, str, str]]:
    """(secret, question, "yes" | "no") of every gold item whose gold is yes or no: what a judge is
    trained on (gold unclear or invalid has no yes/no answer)."""
    gold = {
        pk: label
        for pk, (label, _) in gold_labels().items()
        if label in (LabelVerdict.YES, LabelVerdict.NO)
    }
    items = (
        DisagreementItem.objects.filter(pk__in=gold)
        .order_by("id")
        .values_list("pk", "secret", "question")
    )
    return [(secret, question, gold[pk]) for pk, secret, question in items]


# -- agreement and accuracy ------------------------------------------------------------------------
def label_matrix(subset: str = "all") -> dict[int, dict[str, str]]:
    labels = Label.objects.all()
    if subset == "disagreements":
        labels = labels.filter(item__is_control=False)
    elif subset == "controls":
        labels = labels.filter(item__is_control=True)
    ratings: dict[int, dict[str, str]] = defaultdict(dict)
    for item_id, name, verdict in labels.values_list("item_id", "annotator__username", "verdict"):
        ratings[item_id][name] = verdict
    return dict(ratings)


def agreement_summary(subset: str = "all", *, n_boot: int = 1000, seed: int = 0) -> dict:
    """Fleiss' κ, Gwet's AC1 and raw agreement overall, per annotator and pair, and per item."""
    ratings = label_matrix(subset if subset in SUBSETS else "all")
    adjudicated = {pk: g for pk, (g, source) in gold_labels(include_consensus=False).items()}
    report = agreement_report(ratings, CATEGORIES, gold=adjudicated, n_boot=n_boot, seed=seed)
    units = [u for u in report.units.values() if u["agreement"] is not None]
    histogram = defaultdict(int)
    for u in units:
        histogram[round(u["agreement"], 2)] += 1
    least = sorted(
        ((pk, u) for pk, u in report.units.items() if u["agreement"] is not None),
        key=lambda kv: (kv[1]["agreement"], kv[0]),
    )[:20]
    return {
        "subset": subset,
        "report": report.to_dict(),
        "histogram": sorted(histogram.items()),
        "least_agreeing": [{"item_id": pk, **u} for pk, u in least],
        "n_items_labelled": len(ratings),
    }


def judge_leaderboard() -> dict:
    """Every judge (and person) that voted on gold items, scored against gold, best first, and the
    active judge specs with no vote on gold yet (`unscored`)."""
    gold = gold_labels()
    latest: dict[tuple[str, int], str] = {}
    for name, item_id, verdict in (
        JudgeVote.objects.filter(item_id__in=gold)
        .order_by("id")
        .values_list("judge_name", "item_id", "verdict")
    ):
        latest[(name, item_id)] = verdict  # the newest vote of a judge on an item counts
    pairs: dict[str, list] = defaultdict(list)
    for (name, item_id), verdict in latest.items():
        pairs[name].append((verdict, gold[item_id][0]))
    rows = [{"judge": name, **judge_accuracy(p)} for name, p in pairs.items()]
    rows.sort(
        key=lambda r: (-(r["accuracy"]["lo"] or 0), -(r["accuracy"]["value"] or 0), r["judge"])
    )
    sources = defaultdict(int)
    for _label, source in gold.values():
        sources[source] += 1
    distribution = defaultdict(int)
    for label, _ in gold.values():
        distribution[label] += 1
    unscored = [
        name
        for name in model_specs_for("judge").values_list("name", flat=True)
        if name not in pairs
    ]
    return {
        "rows": rows,
        "gold_items": len(gold),
        "gold_sources": dict(sources),
        "gold_distribution": dict(distribution),
        "unscored": unscored,
    }


def undoable_label(user, now=None) -> Label | None:
    """The label Ctrl+Z would take back, if any (see UNDO_WINDOW)."""
    label = last_label(user)
    if label is None or label.item.gold or (now or timezone.now()) - label.created_at > UNDO_WINDOW:
        return None
    return label


# -- blindness -------------------------------------------------------------------------------------
# The one place that decides what labelling hides: a game that asks an open item's question about
# the item's secret (its answer there is a judge's answer to that item). Other games on the same
# secret stay visible. Questions match case-insensitively, ends trimmed.
BLINDED = (
    "This game is hidden while being labelled: it asks a question that annotators are labelling "
    "blind. It shows again once that question has all its labels."
)


def open_items():
    return DisagreementItem.objects.filter(gold="", labels_count__lt=F("labels_needed"))


def blinded_game_ids():
    """The ids of the games that ask an open item's question on its secret (a subquery)."""
    from webapp.play.models import Turn

    items = open_items().annotate(key=Lower(Trim("question")))
    return (
        Turn.objects.filter(game__secret__in=items.values("secret"))
        .annotate(key=Lower(Trim("question")))
        .filter(Exists(items.filter(secret=OuterRef("game__secret"), key=OuterRef("key"))))
        .values("game_id")
    )


def games_not_blinded(games, visitor):
    """`games` without those that would show a judge's answer to a question still being labelled
    (`blinded_game_ids`), except to researchers and to the game's own player (an annotator could
    otherwise read the answer, signed in or out, in /games/?word=…)."""
    from webapp.accounts.roles import is_researcher

    user = getattr(visitor, "user", None)
    if user is not None and is_researcher(user):
        return games
    own = Q(pk__in=list(getattr(visitor, "session_games", ())))
    if user is not None:
        own |= Q(player_id=user.pk)
    return games.filter(own | ~Q(pk__in=blinded_game_ids()))


def game_blinded(game, visitor) -> bool:
    """True if `game` is hidden from `visitor` (see games_not_blinded)."""
    from webapp.play.models import Game

    return not games_not_blinded(Game.objects.filter(pk=game.pk), visitor).exists()


def _question_key(question: str) -> str:
    return " ".join(question.casefold().split()).rstrip(" ?")


def blind_history(item: DisagreementItem, user) -> list[dict]:
    """`item.history` with the verdict hidden on every earlier question that is itself an item this
    person may still label (its answer there would be a judge's answer to an open item)."""
    open_questions = {
        _question_key(q)
        for q in _open_for(user)
        .filter(secret=item.secret)
        .exclude(pk=item.pk)
        .values_list("question", flat=True)
    }
    return [
        {**turn, "verdict": "hidden"}
        if _question_key(str(turn.get("question", ""))) in open_questions
        else turn
        for turn in (item.history or [])
    ]
