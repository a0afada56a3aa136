"""Output shapes of the play API (the input serializers are nested in the API classes)."""

from __future__ import annotations

from rest_framework import serializers


class TurnOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    index = serializers.IntegerField(help_text="0-based")
    question = serializers.CharField()
    verdict = serializers.CharField(help_text="yes, no, unknown, invalid, repeated or finished")
    feedback = serializers.CharField()
    judge_raw = serializers.CharField(help_text="the judge's own text (hidden while the game runs)")
    judged_by = serializers.CharField(
        allow_null=True, help_text="the person who answered, if signed in"
    )
    reward = serializers.DictField(child=serializers.FloatField())
    belief = serializers.FloatField(allow_null=True)
    delta_belief = serializers.FloatField(allow_null=True)
    advantage = serializers.FloatField(allow_null=True)
    candidates_left = serializers.IntegerField(allow_null=True)
    top_candidates = serializers.ListField(
        child=serializers.ListField(),
        allow_null=True,
        help_text=(
            "[word, probability] pairs: the guesser's top candidates (null while the game runs)"
        ),
    )
    latency_ms = serializers.FloatField(allow_null=True)
    extra = serializers.DictField()
    created_at = serializers.DateTimeField()


class PendingQuestionSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="send it back as expected_index with your verdict")
    question = serializers.CharField()
    candidates_left = serializers.IntegerField(allow_null=True)


class JudgeAnswerSerializer(serializers.Serializer):
    judge = serializers.CharField(help_text="model spec name")
    said = serializers.CharField(
        help_text="what the judge would have answered (unknown: it could not tell)"
    )
    raw = serializers.CharField(help_text="the judge's own text")
    p_yes = serializers.FloatField(
        allow_null=True, help_text="the learned judge's probability of yes (null for the others)"
    )
    differs = serializers.BooleanField(
        help_text="it would have answered differently from the person"
    )


class AnswerDifferenceSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="0-based turn index")
    question = serializers.CharField()
    you = serializers.CharField(help_text="the person's answer")
    answers = JudgeAnswerSerializer(
        many=True, help_text="every compared judge's answer to this question"
    )


# A question of a game the person judged and their answer: what a judge disagrees with. (A comment,
# not a docstring: the subclasses would show it as their description in the API schema.)
class PersonAnswerSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    question = serializers.CharField()
    you = serializers.CharField()


class JudgeDisagreementSerializer(PersonAnswerSerializer):
    said = serializers.CharField()
    raw = serializers.CharField()
    p_yes = serializers.FloatField(allow_null=True)


class JudgeComparisonSerializer(serializers.Serializer):
    judge = serializers.CharField()
    kind = serializers.CharField(help_text="kb or learned")
    available = serializers.BooleanField(help_text="false when the judge does not know the word")
    note = serializers.CharField(required=False)
    checked = serializers.IntegerField(required=False, help_text="answers the person gave")
    ungrounded = serializers.IntegerField(
        required=False, help_text="questions the judge could not answer"
    )
    compared = serializers.IntegerField(required=False)
    disagreements = JudgeDisagreementSerializer(many=True, required=False)


class KBDisagreementSerializer(PersonAnswerSerializer):
    kb = serializers.CharField(help_text="the answer of the judge named in `judge`")
    kb_raw = serializers.CharField()


class AnswerCheckSerializer(serializers.Serializer):
    """The person's answers (games they judged) against the knowledge-base and learned judges."""

    available = serializers.BooleanField(help_text="at least one judge could compare")
    note = serializers.CharField(required=False, help_text="why nothing was compared")
    judge = serializers.CharField(
        required=False,
        help_text="the judge of the top-level figures (the knowledge base when it knows the word)",
    )
    checked = serializers.IntegerField(required=False)
    ungrounded = serializers.IntegerField(required=False)
    compared = serializers.IntegerField(required=False)
    disagreements = KBDisagreementSerializer(many=True, required=False)
    judges = JudgeComparisonSerializer(many=True, required=False, help_text="each compared judge")
    differences = AnswerDifferenceSerializer(
        many=True,
        required=False,
        help_text="the questions where a judge would have answered differently",
    )


class GameStateSerializer(serializers.Serializer):
    """Where a game stands after a turn; GET /api/games/{id}/ has the whole trajectory."""

    id = serializers.IntegerField()
    url = serializers.CharField(help_text="the trajectory page")
    role = serializers.ChoiceField(
        choices=["guesser", "answerer", "none"],
        help_text="the person's role: guesser (asks) or answerer (judges)",
    )
    status = serializers.CharField()
    outcome = serializers.CharField()
    n_turns = serializers.IntegerField()
    max_turns = serializers.IntegerField()
    next_index = serializers.IntegerField(
        allow_null=True, help_text="expected_index of the next turn; null when over"
    )
    secret = serializers.CharField(
        allow_null=True, help_text="null while the game runs (unless you judge it)"
    )
    pending = PendingQuestionSerializer(
        allow_null=True, help_text="the model's question waiting for your verdict"
    )
    kb_check = AnswerCheckSerializer(
        allow_null=True,
        help_text="answers the knowledge-base and learned judges would "
        "give differently (games a person judged)",
    )


class GameOutputSerializer(GameStateSerializer):
    """A game with its whole trajectory (the games.Trajectory dict plus ids and provenance)."""

    public_id = serializers.UUIDField()
    mode = serializers.CharField()
    secret_source = serializers.CharField(allow_null=True)
    seed = serializers.IntegerField()
    config = serializers.DictField()
    guesser = serializers.CharField(help_text="model spec name; empty when a person asks")
    judge = serializers.CharField(help_text="model spec name; empty when a person judges")
    player = serializers.CharField(allow_null=True)
    guest = serializers.BooleanField()
    word_list = serializers.CharField(allow_null=True)
    job = serializers.IntegerField(allow_null=True)
    turns = TurnOutputSerializer(many=True)
    initial_belief = serializers.FloatField(allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class TurnResultSerializer(serializers.Serializer):
    turn = TurnOutputSerializer(
        allow_null=True, help_text="the turn just stored (null for confirm_secret, abandon)"
    )
    game = GameStateSerializer()
