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
    judged_by = serializers.CharField(allow_null=True, help_text="the person who answered, if signed in")
    reward = serializers.DictField(child=serializers.FloatField())
    belief = serializers.FloatField(allow_null=True)
    delta_belief = serializers.FloatField(allow_null=True)
    advantage = serializers.FloatField(allow_null=True)
    candidates_left = serializers.IntegerField(allow_null=True)
    top_candidates = serializers.ListField(child=serializers.ListField(), allow_null=True,
                                           help_text="[word, probability] pairs: the guesser's top candidates")
    latency_ms = serializers.FloatField(allow_null=True)
    extra = serializers.DictField()
    created_at = serializers.DateTimeField()


class PendingQuestionSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="send it back as expected_index with your verdict")
    question = serializers.CharField()
    candidates_left = serializers.IntegerField(allow_null=True)


class GameOutputSerializer(serializers.Serializer):
    """A game with its whole trajectory (the games.Trajectory dict plus ids and provenance)."""

    id = serializers.IntegerField()
    public_id = serializers.UUIDField()
    url = serializers.CharField(help_text="the trajectory page")
    max_turns = serializers.IntegerField()
    role = serializers.ChoiceField(choices=["guesser", "answerer", "none"],
                                   help_text="the person's role: guesser (asks) or answerer (judges)")
    mode = serializers.CharField()
    status = serializers.CharField()
    outcome = serializers.CharField()
    secret = serializers.CharField(allow_null=True, help_text="null while the game runs (unless you judge it)")
    secret_source = serializers.CharField(allow_null=True)
    seed = serializers.IntegerField()
    config = serializers.DictField()
    guesser = serializers.CharField(help_text="model spec name; empty when a person asks")
    judge = serializers.CharField(help_text="model spec name; empty when a person judges")
    player = serializers.CharField(allow_null=True)
    guest = serializers.BooleanField()
    word_list = serializers.CharField(allow_null=True)
    job = serializers.IntegerField(allow_null=True)
    n_turns = serializers.IntegerField()
    next_index = serializers.IntegerField(allow_null=True, help_text="expected_index of the next turn; null when over")
    pending = PendingQuestionSerializer(allow_null=True, help_text="the model's question waiting for your verdict")
    turns = TurnOutputSerializer(many=True)
    initial_belief = serializers.FloatField(allow_null=True)
    kb_check = serializers.DictField(allow_null=True, help_text="answers the knowledge-base judge would give differently")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class GameStateSerializer(serializers.Serializer):
    """Where a game stands after a turn; GET /api/games/{id}/ has the whole trajectory."""

    id = serializers.IntegerField()
    url = serializers.CharField()
    role = serializers.CharField()
    status = serializers.CharField()
    outcome = serializers.CharField()
    n_turns = serializers.IntegerField()
    max_turns = serializers.IntegerField()
    next_index = serializers.IntegerField(allow_null=True)
    secret = serializers.CharField(allow_null=True)
    pending = PendingQuestionSerializer(allow_null=True)
    kb_check = serializers.DictField(allow_null=True)


class TurnResultSerializer(serializers.Serializer):
    turn = TurnOutputSerializer(allow_null=True, help_text="the turn just stored (null for confirm_secret, abandon)")
    game = GameStateSerializer()
