"""API login: a username and password for a token (`Authorization: Token …`), with the login
form's lockout (django-axes sees the same attempts, counted by username and address)."""

from __future__ import annotations

from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.accounts.throttles import LOGIN_IN_FLIGHT, login_in_flight, login_refusal

LOCKED_OUT = "Too many failed logins for this account from this address: try again later."


class TokenLoginInput(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False)


class TokenLoginApi(APIView):
    """Exchange a username and password for the user's API token (created on first login)."""

    authentication_classes: list = []  # no session, hence no CSRF: the body is the credential
    permission_classes = [AllowAny]

    @extend_schema(
        request=TokenLoginInput,
        responses={200: inline_serializer("TokenLoginOutput", {"token": serializers.CharField()})},
    )
    def post(self, request):
        with login_in_flight(request._request) as alone:
            refusal = LOGIN_IN_FLIGHT if not alone else login_refusal(request._request)
            if refusal:
                return Response({"detail": refusal}, status=status.HTTP_429_TOO_MANY_REQUESTS)
            return self._login(request)

    def _login(self, request):
        data = TokenLoginInput(data=request.data)
        data.is_valid(raise_exception=True)
        django_request = (
            request._request
        )  # axes marks a lockout on the request Django's middleware sees
        user = authenticate(django_request, **data.validated_data)
        if getattr(django_request, "axes_locked_out", False):
            django_request.axes_locked_out = False  # answered here, in JSON, not by axes' HTML page
            return Response({"detail": LOCKED_OUT}, status=status.HTTP_429_TOO_MANY_REQUESTS)
        if user is None or not user.is_active:
            return Response(
                {"detail": "Wrong username or password."}, status=status.HTTP_400_BAD_REQUEST
            )
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})
