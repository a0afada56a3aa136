"""Leaderboards API: the newest snapshot of a board. Everyone may read it, guests included."""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework.exceptions import NotFound
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.core.api import validated
from webapp.leaderboards.selectors import leaderboard_latest, leaderboard_model_keys
from webapp.leaderboards.serializers import SNAPSHOT_SERIALIZERS, LeaderboardInputSerializer
from webapp.leaderboards.services import BOARDS, MODELS


class LeaderboardApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        summary="The newest leaderboard snapshot",
        description=(
            "`models`: model-vs-model success (mean@k with a 95% interval, pass@k, turns) by "
            "guesser, one board per word list / judge / max turns (`key`; the list is in `keys`). "
            "`humans`: people's win rates with Wilson intervals, ranked within each word list "
            "(`word_list_key` on every row; `meta.word_lists` lists them, most played first). "
            "`ability`: one Rasch (1PL) fit "
            "over people and models, abilities in logits. Snapshots are recomputed every five "
            "minutes."
        ),
        parameters=[
            OpenApiParameter("board", str, enum=list(BOARDS), default=MODELS),
            OpenApiParameter(
                "key",
                str,
                required=False,
                description="models board only; default: the most played 20-turn setting",
            ),
        ],
        responses={
            200: PolymorphicProxySerializer(
                component_name="LeaderboardSnapshot",
                resource_type_field_name="board",
                serializers={board: cls for board, cls in SNAPSHOT_SERIALIZERS.items()},
            ),
            400: OpenApiResponse(description="unknown board"),
            404: OpenApiResponse(description="not computed yet, or no models board with this key"),
        },
    )
    def get(self, request):
        params = validated(LeaderboardInputSerializer, request.query_params)
        board, key = params["board"], params.get("key") or None
        snapshot = leaderboard_latest(board, key)
        if snapshot is None:
            raise NotFound(
                "No snapshot of this board yet."
                if not key
                else f"No {board} board with key {key!r}."
            )
        payload = {
            "board": board,
            "key": snapshot.key,
            "computed_at": snapshot.computed_at,
            "checked_at": snapshot.meta.get("checked_at"),
            "meta": snapshot.meta,
            "rows": snapshot.rows,
        }
        if board == MODELS:
            payload["keys"] = leaderboard_model_keys()
        return Response(SNAPSHOT_SERIALIZERS[board](payload).data)
