"""API shapes of the leaderboard snapshots (one per board, told apart by ``board``)."""

from __future__ import annotations

from rest_framework import serializers

from games.types import WIN_RULES
from webapp.leaderboards.services import ABILITY, BOARDS, HUMANS, MODELS


class LeaderboardInputSerializer(serializers.Serializer):
    board = serializers.ChoiceField(choices=BOARDS, default=MODELS)
    key = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=300,
        help_text="models board only: a key from `keys` (default: the most played 20-turn setting)",
    )


class NamedRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class WordListRefSerializer(NamedRefSerializer):
    version = serializers.IntegerField()


class ModelsKeySerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField(
        help_text="word list · judge · max turns (· win rule when not the default)"
    )
    word_list = WordListRefSerializer(allow_null=True)
    judge = NamedRefSerializer(allow_null=True)
    max_turns = serializers.IntegerField()
    win_rule = serializers.ChoiceField(
        choices=WIN_RULES, required=False, help_text="the rule the board's games were played under"
    )
    games = serializers.IntegerField()
    guessers = serializers.IntegerField()
    last_game_at = serializers.DateTimeField(allow_null=True)


class ModelRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    guesser_id = serializers.IntegerField()
    name = serializers.CharField()
    success = serializers.FloatField(
        help_text="mean@k: the mean over words of the per-word success rate, under "
        "the board's win rule (meta.win_rule)"
    )
    success_lo = serializers.FloatField(
        help_text="95% interval of the success rate (words are the unit)"
    )
    success_hi = serializers.FloatField()
    # absent from snapshots computed before the win rules existed (required=False)
    strict_success = serializers.FloatField(
        required=False,
        help_text=(
            "mean@k counting a win only when its winning question also wins under the strict rule "
            "(a guess of the thing itself)"
        ),
    )
    strict_success_lo = serializers.FloatField(required=False)
    strict_success_hi = serializers.FloatField(required=False)
    reference_success = serializers.FloatField(
        required=False, help_text="the same under the reference rule (the paper's)"
    )
    reference_success_lo = serializers.FloatField(required=False)
    reference_success_hi = serializers.FloatField(required=False)
    k = serializers.IntegerField(help_text="samples per word (the smallest count over the words)")
    pass_at_k = serializers.FloatField()
    mean_turns = serializers.FloatField()
    mean_turns_solved = serializers.FloatField(allow_null=True)
    games = serializers.IntegerField()
    wins = serializers.IntegerField()
    words = serializers.IntegerField()
    last_game_at = serializers.DateTimeField(allow_null=True)
    preliminary = serializers.BooleanField(help_text="fewer games than meta.preliminary_games")


class HumanRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField(allow_null=True, help_text="null for the pooled guests row")
    player_id = serializers.IntegerField(allow_null=True)
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["user", "guests"])
    word_list = serializers.CharField(help_text="the word list of this ranking (one per list)")
    word_list_version = serializers.IntegerField(allow_null=True)
    word_list_key = serializers.CharField(help_text="wl:<word list id>, or wl:- for chosen words")
    games = serializers.IntegerField(help_text="won and lost games (abandoned ones not counted)")
    wins = serializers.IntegerField()
    win_rate = serializers.FloatField()
    win_rate_lo = serializers.FloatField(help_text="95% Wilson interval")
    win_rate_hi = serializers.FloatField()
    mean_questions_solved = serializers.FloatField(allow_null=True)
    abandoned = serializers.IntegerField()
    last_played_at = serializers.DateTimeField(allow_null=True)


class AbilityRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["human", "model"])
    id = serializers.IntegerField(help_text="user id or ModelSpec id, by kind")
    name = serializers.CharField()
    theta = serializers.FloatField(
        help_text="Rasch ability in logits; 0 = even odds on a word of average difficulty"
    )
    theta_lo = serializers.FloatField()
    theta_hi = serializers.FloatField()
    theta_se = serializers.FloatField()
    p_average_word = serializers.FloatField(
        help_text="modelled chance of solving a word of average difficulty"
    )
    games = serializers.IntegerField()
    wins = serializers.IntegerField()
    preliminary = serializers.BooleanField()


class _SnapshotSerializer(serializers.Serializer):
    key = serializers.CharField(allow_blank=True)
    computed_at = serializers.DateTimeField(help_text="when these numbers were first computed")
    checked_at = serializers.DateTimeField(
        allow_null=True, help_text="the last refresh (numbers unchanged since computed_at)"
    )
    meta = serializers.DictField()


class ModelsSnapshotSerializer(_SnapshotSerializer):
    board = serializers.ChoiceField(choices=[MODELS])
    rows = ModelRowSerializer(many=True)
    keys = ModelsKeySerializer(
        many=True, help_text="every models board (word list / judge / max turns)"
    )


class HumansSnapshotSerializer(_SnapshotSerializer):
    board = serializers.ChoiceField(choices=[HUMANS])
    rows = HumanRowSerializer(many=True)


class AbilitySnapshotSerializer(_SnapshotSerializer):
    board = serializers.ChoiceField(choices=[ABILITY])
    rows = AbilityRowSerializer(many=True)


SNAPSHOT_SERIALIZERS = {
    MODELS: ModelsSnapshotSerializer,
    HUMANS: HumansSnapshotSerializer,
    ABILITY: AbilitySnapshotSerializer,
}
