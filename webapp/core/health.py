"""`GET /healthz`: 200 when the database answers, 503 when not. Answered before host checks and
the https redirect, so a container healthcheck on 127.0.0.1 over plain http can pass."""

from __future__ import annotations

from django.db import DatabaseError, connection
from django.http import HttpResponse

PATH = "/healthz"


class HealthCheckMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path != PATH or request.method not in ("GET", "HEAD"):
            return self.get_response(request)
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        except DatabaseError as exc:
            return HttpResponse(
                f"database unavailable: {type(exc).__name__}\n",
                status=503,
                content_type="text/plain",
            )
        return HttpResponse("ok\n", content_type="text/plain")
