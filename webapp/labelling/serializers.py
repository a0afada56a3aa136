"""API shapes of the labelling queue, review, agreement and judge accuracy (names prefixed
`Labelling…` so drf-spectacular components never clash with other apps')."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from games.agreement import TAXONOMY
from webapp.labelling.models import LabelVerdict
from webapp.labelling.selectors import REVIEW_FILTERS, SUBSETS


class LabellingHistoryTurnSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    question = serializers.CharField()
    verdict = serializers.CharField(help_text="the answer the game's judge gave")


class LabellingProgressSerializer(serializers.Serializer):
    labelled = serializers.IntegerField(help_text="items you have labelled")
    remaining = serializers.IntegerField(
        help_text="open items you have neither labelled nor skipped"
    )
    skipped = serializers.IntegerField()
    open_items = serializers.IntegerField(help_text="items still asking for labels (anyone)")
    items = serializers.IntegerField()


class LabellingItemSerializer(serializers.Serializer):
    """What an annotator sees: no votes and no other labels (labelling is blind)."""

    id = serializers.IntegerField()
    secret = serializers.CharField()
    question = serializers.CharField()
    history = LabellingHistoryTurnSerializer(many=True)
    labels_needed = serializers.IntegerField()
    labels_count = serializers.IntegerField()


class LabellingNextOutputSerializer(serializers.Serializer):
    item = LabellingItemSerializer(
        allow_null=True, help_text="null when nothing is waiting for you"
    )
    progress = LabellingProgressSerializer()


class LabellingLabelInputSerializer(serializers.Serializer):
    verdict = serializers.ChoiceField(choices=LabelVerdict.choices)
    seconds = serializers.FloatField(
        required=False,
        min_value=0,
        max_value=86_399,
        help_text="time to answer (default: since the item was handed to you)",
    )


class LabellingDisputeInputSerializer(serializers.Serializer):
    turn = serializers.IntegerField(min_value=1, help_text="the disputed turn's id")
    verdict = serializers.ChoiceField(
        choices=[("yes", "yes"), ("no", "no")], help_text="the right answer, as the player says"
    )


class LabellingDisputeOutputSerializer(serializers.Serializer):
    item_id = serializers.IntegerField()
    verdict = serializers.CharField()
    queued = serializers.BooleanField(help_text="false: the turn was in the queue already")


class LabellingVoteSerializer(serializers.Serializer):
    judge_name = serializers.CharField()
    verdict = serializers.CharField()
    p_yes = serializers.FloatField(
        allow_null=True,
        default=None,
        help_text="a probabilistic judge's probability of yes (null for the others)",
    )


class LabellingLabelOutputSerializer(serializers.Serializer):
    item_id = serializers.IntegerField()
    verdict = serializers.CharField()
    seconds = serializers.FloatField(allow_null=True)
    completed = serializers.BooleanField(help_text="your label was the last one the item needed")
    votes = LabellingVoteSerializer(
        many=True, help_text="the judges' votes, revealed once you have answered"
    )


@extend_schema_field({"type": "string", "pattern": "^(" + "|".join(LabelVerdict.values) + ")$"})
class _GoldField(serializers.ChoiceField):
    """Documented as a pattern: an enum here would repeat the VerdictEnum component under a second
    name."""


class LabellingGoldInputSerializer(serializers.Serializer):
    gold = _GoldField(
        choices=LabelVerdict.choices, allow_blank=True, help_text="empty clears the gold label"
    )


class LabellingReviewLabelSerializer(serializers.Serializer):
    annotator = serializers.CharField(source="annotator.username")
    verdict = serializers.CharField()
    seconds = serializers.FloatField(allow_null=True)
    created_at = serializers.DateTimeField()


class LabellingReviewItemSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="item.id")
    secret = serializers.CharField(source="item.secret")
    question = serializers.CharField(source="item.question")
    history = LabellingHistoryTurnSerializer(many=True, source="item.history")
    is_control = serializers.BooleanField(source="item.is_control")
    labels_needed = serializers.IntegerField(source="item.labels_needed")
    labels_count = serializers.IntegerField(source="item.labels_count")
    gold = serializers.CharField(source="item.gold")
    adjudicated_by = serializers.CharField(
        source="item.adjudicated_by.username", allow_null=True, default=None
    )
    labels = LabellingReviewLabelSerializer(many=True)
    votes = LabellingVoteSerializer(many=True)
    agreement = serializers.FloatField(allow_null=True, help_text="share of agreeing label pairs")


class LabellingItemListInputSerializer(serializers.Serializer):
    show = serializers.ChoiceField(choices=list(REVIEW_FILTERS), default="disputed")
    page = serializers.IntegerField(min_value=1, max_value=100_000, default=1)


class LabellingItemPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    results = LabellingReviewItemSerializer(many=True)


class LabellingEstimateSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True)
    lo = serializers.FloatField(allow_null=True, help_text="95% interval")
    hi = serializers.FloatField(allow_null=True)
    n = serializers.IntegerField()


class LabellingRaterSerializer(serializers.Serializer):
    rater = serializers.CharField()
    n = serializers.IntegerField()
    pairs = serializers.IntegerField()
    agreement_with_others = LabellingEstimateSerializer()
    gold_n = serializers.IntegerField()
    agreement_with_gold = LabellingEstimateSerializer()


class LabellingPairSerializer(serializers.Serializer):
    a = serializers.CharField()
    b = serializers.CharField()
    n = serializers.IntegerField()
    agreement = serializers.FloatField()
    cohen_kappa = LabellingEstimateSerializer()


class LabellingUnitSerializer(serializers.Serializer):
    item_id = serializers.IntegerField()
    n = serializers.IntegerField()
    agreement = serializers.FloatField(allow_null=True)
    majority = serializers.CharField(allow_null=True)
    majority_share = serializers.FloatField(allow_null=True)


class LabellingAgreementInputSerializer(serializers.Serializer):
    subset = serializers.ChoiceField(choices=list(SUBSETS), default="all")


class LabellingAgreementSerializer(serializers.Serializer):
    subset = serializers.CharField()
    n_units = serializers.IntegerField(
        source="report.n_units", help_text="items with at least two labels"
    )
    n_ratings = serializers.IntegerField(source="report.n_ratings")
    percent_agreement = LabellingEstimateSerializer(source="report.percent_agreement")
    fleiss_kappa = LabellingEstimateSerializer(source="report.fleiss_kappa")
    gwet_ac1 = LabellingEstimateSerializer(source="report.gwet_ac1")
    label_shares = serializers.DictField(
        child=serializers.FloatField(), source="report.label_shares"
    )
    raters = LabellingRaterSerializer(many=True, source="report.raters")
    pairs = LabellingPairSerializer(many=True, source="report.pairs")
    least_agreeing = LabellingUnitSerializer(many=True)


TAXONOMY_HELP = {
    "false_yes": "said yes, gold no",
    "false_no": "said no, gold yes (a wrong negative)",
    "unrecognised": "unknown or invalid where gold is yes or no",
    "answered_invalid": "yes or no where gold is invalid",
}


class LabellingTaxonomySerializer(serializers.Serializer):
    # a count per outcome of games.agreement.TAXONOMY (a docstring would enter the schema)
    def get_fields(self) -> dict[str, serializers.Field]:
        return {
            outcome: serializers.IntegerField(help_text=TAXONOMY_HELP.get(outcome))
            for outcome in TAXONOMY
        }


class LabellingJudgeRowSerializer(serializers.Serializer):
    judge = serializers.CharField()
    n = serializers.IntegerField(help_text="gold items scored (gold unclear is left out)")
    correct = serializers.IntegerField()
    accuracy = LabellingEstimateSerializer(help_text="exact match with gold, 95% Wilson interval")
    coverage = LabellingEstimateSerializer(help_text="answered yes/no where gold is yes/no")
    answered_accuracy = LabellingEstimateSerializer()
    taxonomy = LabellingTaxonomySerializer()
    gold_unclear = serializers.IntegerField()


class LabellingJudgeBoardSerializer(serializers.Serializer):
    rows = LabellingJudgeRowSerializer(many=True)
    gold_items = serializers.IntegerField()
    gold_sources = serializers.DictField(
        child=serializers.IntegerField(), help_text="adjudicated / consensus"
    )
    gold_distribution = serializers.DictField(child=serializers.IntegerField())
    unscored = serializers.ListField(
        child=serializers.CharField(),
        help_text="active judge model specs with no vote on the gold set yet",
    )
