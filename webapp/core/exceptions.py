"""One domain error, mapped to a 400 response by one API exception handler."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions as drf_exceptions
from rest_framework.views import exception_handler


class ApplicationError(Exception):
    def __init__(self, message: str, extra: dict | None = None, status: int = 400):
        super().__init__(message)
        self.message = message
        self.extra = extra or {}
        self.status = status


def api_exception_handler(exc, context):
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}
        exc = drf_exceptions.ValidationError(detail)
    elif isinstance(exc, PermissionDenied):
        exc = drf_exceptions.PermissionDenied(str(exc) or None)
    if isinstance(exc, ApplicationError):
        from rest_framework.response import Response

        return Response({"detail": exc.message, **exc.extra}, status=exc.status)
    return exception_handler(exc, context)
