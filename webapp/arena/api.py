"""The arena API: start a battle, answer a side, finish with the word, give up, read the board.
A battle is addressed by its public id; no guesser name appears before the battle is over."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.arena import board, selectors, services
from webapp.core.api import validated
from webapp.leaderboards.selectors import leaderboard_latest
from webapp.play.services import HUMAN_VERDICTS
from webapp.play.visitors import remember_game, visitor_from_request


class TurnSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    question = serializers.CharField()
    answer = serializers.CharField()
    top = serializers.ListField(child=serializers.CharField(), help_text="after the end only")


class SideSerializer(serializers.Serializer):
    side = serializers.CharField()
    over = serializers.BooleanField()
    won = serializers.BooleanField()
    abandoned = serializers.BooleanField()
    n_turns = serializers.IntegerField()
    person_answers = serializers.IntegerField(
        help_text="questions you answered (not those the rules decided): the turn alternates on it"
    )
    max_turns = serializers.IntegerField()
    next_index = serializers.IntegerField()
    pending = serializers.CharField(allow_null=True, help_text="the question waiting for you")
    pending_guess = serializers.BooleanField(help_text='"finished" (that\'s my word) allowed')
    turns = TurnSerializer(many=True)
    name = serializers.CharField(required=False, help_text="the guesser, once the battle is over")


class BattleSerializer(serializers.Serializer):
    id = serializers.CharField()
    state = serializers.ChoiceField(choices=["playing", "finished", "abandoned"])
    outcome = serializers.CharField(allow_null=True, help_text="a, b or tie once finished")
    word = serializers.CharField(allow_null=True)
    word_in_kb = serializers.BooleanField(allow_null=True)
    word_nameable = serializers.BooleanField(
        allow_null=True,
        help_text="false: neither side could name the word, a tie that counts nowhere",
    )
    needs_word = serializers.BooleanField(help_text="both games over: send your word to finish")
    active_side = serializers.CharField(
        allow_null=True, help_text="the side you answered fewer times (a on a tie) that waits"
    )
    sides = SideSerializer(many=True)


def _battle_response(request, public_id, code=status.HTTP_200_OK) -> Response:
    battle = services.battle_get(public_id, visitor_from_request(request))
    return Response(BattleSerializer(selectors.battle_api_data(battle)).data, status=code)


class BattleStartApi(APIView):
    permission_classes = [AllowAny]

    class StartSerializer(serializers.Serializer):
        word_list = serializers.CharField(
            required=False, max_length=100, help_text="draw the word from it; omit to keep yours"
        )

    @extend_schema(request=StartSerializer, responses={201: BattleSerializer})
    def post(self, request):
        args = validated(self.StartSerializer, request.data)
        battle = services.battle_start(
            visitor=visitor_from_request(request), word_list=args.get("word_list") or None
        )
        remember_game(request, battle.game_a)
        remember_game(request, battle.game_b)
        return _battle_response(request, battle.public_id, status.HTTP_201_CREATED)


class BattleDetailApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses=BattleSerializer)
    def get(self, request, public_id):
        return _battle_response(request, public_id)


class BattleAnswerApi(APIView):
    """Your answer to one side's waiting question; `expected_index` is that side's next index."""

    permission_classes = [AllowAny]

    class AnswerSerializer(serializers.Serializer):
        side = serializers.ChoiceField(choices=services.SIDES)
        verdict = serializers.ChoiceField(
            choices=[v.value for v in HUMAN_VERDICTS], help_text='finished = "that\'s my word"'
        )
        expected_index = serializers.IntegerField(min_value=0)

    @extend_schema(request=AnswerSerializer, responses=BattleSerializer)
    def post(self, request, public_id):
        args = validated(self.AnswerSerializer, request.data)
        services.battle_answer(public_id=public_id, visitor=visitor_from_request(request), **args)
        return _battle_response(request, public_id)


class BattleFinishApi(APIView):
    """Both games over: your word (checked against the winning questions); or give_up."""

    permission_classes = [AllowAny]

    class FinishSerializer(serializers.Serializer):
        word = serializers.CharField(required=False, max_length=200)
        give_up = serializers.BooleanField(required=False, default=False)

        def validate(self, attrs):
            if not attrs.get("give_up") and not attrs.get("word"):
                raise serializers.ValidationError({"word": "Send your word, or give_up."})
            return attrs

    @extend_schema(request=FinishSerializer, responses=BattleSerializer)
    def post(self, request, public_id):
        args = validated(self.FinishSerializer, request.data)
        visitor = visitor_from_request(request)
        if args["give_up"]:
            services.battle_abandon(public_id=public_id, visitor=visitor)
        else:
            services.battle_finish(public_id=public_id, visitor=visitor, word=args["word"])
        return _battle_response(request, public_id)


class ArenaRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    name = serializers.CharField()
    rating = serializers.FloatField()
    lower = serializers.FloatField()
    upper = serializers.FloatField()
    battles = serializers.IntegerField()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    ties = serializers.IntegerField()
    preliminary = serializers.BooleanField()


class ArenaBoardSerializer(serializers.Serializer):
    computed_at = serializers.DateTimeField()
    meta = serializers.DictField()
    rows = ArenaRowSerializer(many=True)


class ArenaBoardApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        summary="The Arena board",
        description="Bradley–Terry ratings (400·β + 1000) with bootstrap 95% intervals over "
        "finished battles, as stored by the last refresh.",
        responses={200: ArenaBoardSerializer, 404: OpenApiResponse(description="not computed yet")},
    )
    def get(self, request):
        snapshot = leaderboard_latest(board.ARENA)
        if snapshot is None:
            raise NotFound("No Arena snapshot yet.")
        body = {"computed_at": snapshot.computed_at, "meta": snapshot.meta, "rows": snapshot.rows}
        return Response(ArenaBoardSerializer(body).data)
