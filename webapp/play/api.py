"""The play API: start a game, submit turns, read a whole trajectory. Guests may play
(throttled)."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.core.api import validated
from webapp.labelling.selectors import BLINDED, game_blinded
from webapp.play import api_data, selectors, services
from webapp.play.forms import MAX_QUESTION_INPUT
from webapp.play.serializers import GameOutputSerializer, TurnResultSerializer
from webapp.play.throttles import GUEST_LIMIT_MESSAGE, GuestPlayThrottle
from webapp.play.visitors import remember_game, visitor_from_request

ACTIONS = ("question", "verdict", "confirm_secret", "abandon")


class _GuestThrottled:
    throttle_classes = [GuestPlayThrottle]

    def throttled(self, request, wait):
        raise exceptions.Throttled(wait, detail=GUEST_LIMIT_MESSAGE)


def _game_or_404(game_id: int):
    game = selectors.game_get(game_id=game_id)
    if game is None:
        raise Http404("no such game")
    return game


class GameStartApi(_GuestThrottled, APIView):
    permission_classes = [AllowAny]

    class GameStartInputSerializer(serializers.Serializer):
        role = serializers.ChoiceField(
            choices=services.ROLES, help_text="guesser: you ask; answerer: you judge"
        )
        guesser = serializers.CharField(
            required=False, max_length=100, help_text=f"default {services.DEFAULT_GUESSER}"
        )
        judge = serializers.CharField(
            required=False,
            max_length=100,
            help_text=(
                f"default: the first of {', '.join(services.DEFAULT_JUDGES)} that is registered, "
                f"active and loads, else {services.KB_JUDGE}"
            ),
        )
        word_list = serializers.CharField(
            required=False,
            max_length=100,
            help_text=f"draw the secret from it (guesser default {services.DEFAULT_WORD_LIST})",
        )
        secret = serializers.CharField(
            required=False,
            max_length=200,
            help_text="answerer: your word (or omit it and confirm it at the end); "
            "guesser: researchers only",
        )
        max_turns = serializers.IntegerField(
            required=False, min_value=1, max_value=services.MAX_TURNS_LIMIT
        )

    @extend_schema(request=GameStartInputSerializer, responses={201: GameOutputSerializer})
    def post(self, request):
        game = services.game_start(
            visitor=visitor_from_request(request),
            **validated(self.GameStartInputSerializer, request.data),
        )
        remember_game(request, game)
        body = GameOutputSerializer(
            api_data.game_api_data(game, visitor_from_request(request))
        ).data
        return Response(
            body, status=status.HTTP_201_CREATED, headers={"Location": f"/api/games/{game.pk}/"}
        )


class GameDetailApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses=GameOutputSerializer)
    def get(self, request, game_id: int):
        game, visitor = _game_or_404(game_id), visitor_from_request(request)
        if selectors.in_running_battle(game):  # it would name an Arena battle's guesser
            raise Http404("no such game")
        if game_blinded(game, visitor):  # it asks a question being labelled: no judge's answer
            raise exceptions.PermissionDenied(BLINDED)
        return Response(GameOutputSerializer(api_data.game_api_data(game, visitor)).data)


class TurnSubmitApi(_GuestThrottled, APIView):
    """The next question (you guess) or verdict (you judge); `expected_index` must be the game's
    next turn index, so a repeated submission is refused with 409 instead of stored twice."""

    permission_classes = [AllowAny]

    class TurnSubmitInputSerializer(serializers.Serializer):
        action = serializers.ChoiceField(
            choices=ACTIONS,
            required=False,
            help_text="default: question if given, else verdict, else confirm_secret",
        )
        question = serializers.CharField(required=False, max_length=MAX_QUESTION_INPUT)
        verdict = serializers.ChoiceField(
            choices=[v.value for v in services.HUMAN_VERDICTS],
            required=False,
            help_text='finished = "that\'s my word"',
        )
        secret = serializers.CharField(
            required=False, max_length=200, help_text="confirm_secret: your word"
        )
        expected_index = serializers.IntegerField(required=False, min_value=0)

        def validate(self, attrs):
            action = attrs.get("action") or next(
                (
                    a
                    for a, field in (
                        ("question", "question"),
                        ("verdict", "verdict"),
                        ("confirm_secret", "secret"),
                    )
                    if field in attrs
                ),
                None,
            )
            needs = {
                "question": ("question", "expected_index"),
                "verdict": ("verdict", "expected_index"),
                "confirm_secret": ("secret",),
                "abandon": (),
            }
            if action is None:
                raise serializers.ValidationError(
                    "Send a question, a verdict, or a secret to confirm."
                )
            missing = [f for f in needs[action] if f not in attrs]
            if missing:
                raise serializers.ValidationError({f: f"{action} needs {f}." for f in missing})
            return {**attrs, "action": action}

    @extend_schema(
        request=TurnSubmitInputSerializer,
        responses={201: TurnResultSerializer, 200: TurnResultSerializer},
    )
    def post(self, request, game_id: int):
        if selectors.in_running_battle(_game_or_404(game_id)):  # it would tell the guesser apart
            raise Http404("no such game")
        args = validated(self.TurnSubmitInputSerializer, request.data)
        visitor = visitor_from_request(request)
        action, turn = args["action"], None
        if action in ("question", "verdict"):  # a new turn: your question or your verdict
            submit = services.turn_submit if action == "question" else services.answer_submit
            turn = submit(
                game_id=game_id,
                visitor=visitor,
                expected_index=args["expected_index"],
                **{action: args[action]},
            )
            game = turn.game
        elif action == "confirm_secret":
            game = services.game_confirm_secret(
                game_id=game_id, visitor=visitor, secret=args["secret"]
            )
        else:
            game = services.game_abandon(game_id=game_id, visitor=visitor)
        body = {
            "turn": api_data.turn_data(turn, visitor) if turn else None,
            "game": api_data.game_state(game, visitor),
        }
        return Response(
            TurnResultSerializer(body).data,
            status=status.HTTP_201_CREATED if turn else status.HTTP_200_OK,
        )
