"""Labelling API: the annotators' queue (next, label, skip, undo) and, for researchers, the review
list, gold labels, agreement and judge accuracy."""

from __future__ import annotations

from django.core.paginator import Paginator
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.accounts.roles import IsAnnotator, IsResearcher
from webapp.core.api import validated
from webapp.labelling import selectors, services
from webapp.labelling.serializers import (
    LabellingAgreementInputSerializer,
    LabellingAgreementSerializer,
    LabellingDisputeInputSerializer,
    LabellingDisputeOutputSerializer,
    LabellingGoldInputSerializer,
    LabellingItemListInputSerializer,
    LabellingItemPageSerializer,
    LabellingItemSerializer,
    LabellingJudgeBoardSerializer,
    LabellingLabelInputSerializer,
    LabellingLabelOutputSerializer,
    LabellingNextOutputSerializer,
    LabellingReviewItemSerializer,
)

ANNOTATORS = [IsAuthenticated, IsAnnotator]
RESEARCHERS = [IsAuthenticated, IsResearcher]
CONFLICT = OpenApiResponse(description="already labelled, full, adjudicated, or nothing to undo")


class LabellingNextApi(APIView):
    permission_classes = ANNOTATORS

    @extend_schema(
        summary="The item to label now (reserved for you for a few minutes)",
        responses=LabellingNextOutputSerializer,
    )
    def get(self, request):
        item = services.assignment_next(user=request.user)
        if item is not None:  # blind: no earlier answer to a question still in the queue
            item.history = selectors.blind_history(item, request.user)
        return Response(
            LabellingNextOutputSerializer(
                {"item": item, "progress": selectors.queue_progress(request.user)}
            ).data
        )


class LabellingLabelCreateApi(APIView):
    permission_classes = ANNOTATORS

    @extend_schema(
        summary="Label an item; the judges' votes are revealed in the answer",
        request=LabellingLabelInputSerializer,
        responses={
            201: LabellingLabelOutputSerializer,
            404: OpenApiResponse(description="no such item"),
            409: CONFLICT,
        },
    )
    def post(self, request, item_id: int):
        data = validated(LabellingLabelInputSerializer, request.data)
        result = services.label_submit(user=request.user, item_id=item_id, **data)
        reveal = selectors.item_reveal(item_id, request.user)
        body = {
            "item_id": item_id,
            "verdict": result.label.verdict,
            "seconds": result.label.seconds,
            "completed": result.completed,
            "votes": reveal["votes"] if reveal else [],
        }
        return Response(LabellingLabelOutputSerializer(body).data, status=status.HTTP_201_CREATED)


class LabellingSkipApi(APIView):
    permission_classes = ANNOTATORS

    @extend_schema(
        summary="Skip an item: you will not be shown it again",
        request=None,
        responses={204: None, 404: OpenApiResponse(description="no such item"), 409: CONFLICT},
    )
    def post(self, request, item_id: int):
        services.item_skip(user=request.user, item_id=item_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class LabellingUndoApi(APIView):
    permission_classes = ANNOTATORS

    @extend_schema(
        summary="Take back your most recent label (within two minutes, before adjudication)",
        request=None,
        responses={200: LabellingItemSerializer, 409: CONFLICT},
    )
    def post(self, request):
        return Response(LabellingItemSerializer(services.label_undo(user=request.user)).data)


class LabellingDisputeApi(APIView):
    """A player's "That's wrong": their answer to a judged turn of their own finished game is
    stored and the turn queued for labelling (guests too, for the games of their session)."""

    permission_classes = [AllowAny]

    @extend_schema(
        summary="Dispute a judge's answer in your own finished game",
        request=LabellingDisputeInputSerializer,
        responses={
            201: LabellingDisputeOutputSerializer,
            403: OpenApiResponse(description="not your game"),
            404: OpenApiResponse(description="no such turn"),
            409: OpenApiResponse(description="the game is not over, or already disputed"),
        },
    )
    def post(self, request):
        from webapp.play.visitors import visitor_from_request

        data = validated(LabellingDisputeInputSerializer, request.data)
        done = services.turn_dispute(
            visitor=visitor_from_request(request), turn_id=data["turn"], verdict=data["verdict"]
        )
        body = {"item_id": done.item.pk, "verdict": done.vote.verdict, "queued": done.queued}
        return Response(LabellingDisputeOutputSerializer(body).data, status=status.HTTP_201_CREATED)


class LabellingItemListApi(APIView):
    permission_classes = RESEARCHERS

    @extend_schema(
        summary="Items with their labels and the judges' votes",
        parameters=[LabellingItemListInputSerializer],
        responses=LabellingItemPageSerializer,
    )
    def get(self, request):
        params = validated(LabellingItemListInputSerializer, request.query_params)
        page = Paginator(selectors.review_items(params["show"]), 50).get_page(params["page"])
        body = {
            "count": page.paginator.count,
            "page": page.number,
            "pages": page.paginator.num_pages,
            "results": [selectors.item_detail(item) for item in page],
        }
        return Response(LabellingItemPageSerializer(body).data)


class LabellingGoldApi(APIView):
    permission_classes = RESEARCHERS

    @extend_schema(
        summary="Set (or clear) an item's gold label",
        request=LabellingGoldInputSerializer,
        responses={
            200: LabellingReviewItemSerializer,
            404: OpenApiResponse(description="no such item"),
        },
    )
    def post(self, request, item_id: int):
        gold = validated(LabellingGoldInputSerializer, request.data)["gold"]
        services.item_adjudicate(user=request.user, item_id=item_id, gold=gold)
        item = selectors.review_items("all").get(pk=item_id)
        return Response(LabellingReviewItemSerializer(selectors.item_detail(item)).data)


class LabellingAgreementApi(APIView):
    permission_classes = RESEARCHERS

    @extend_schema(
        summary=(
            "Agreement among annotators: Fleiss' kappa, Gwet's AC1, per annotator, pair and item"
        ),
        parameters=[LabellingAgreementInputSerializer],
        responses=LabellingAgreementSerializer,
    )
    def get(self, request):
        subset = validated(LabellingAgreementInputSerializer, request.query_params)["subset"]
        return Response(LabellingAgreementSerializer(selectors.agreement_summary(subset)).data)


class LabellingJudgeAccuracyApi(APIView):
    permission_classes = RESEARCHERS

    @extend_schema(
        summary="Each judge against gold: accuracy (Wilson interval) and the confusion taxonomy",
        responses=LabellingJudgeBoardSerializer,
    )
    def get(self, request):
        return Response(LabellingJudgeBoardSerializer(selectors.judge_leaderboard()).data)
