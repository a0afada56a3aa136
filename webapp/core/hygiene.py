"""Input hygiene at the edge: a request carrying what no view can store or echo back (a NUL, a
lone surrogate, JSON nested deeper than any API needs, a non-finite or out-of-range number, an
id beyond a 64-bit integer) is answered here, with a message, before any view runs."""

from __future__ import annotations

import json
import math

from django.http import HttpResponse, HttpResponseBadRequest, HttpResponseNotFound, JsonResponse

MAX_ID = 2**63 - 1  # the largest primary key any database here stores
MAX_JSON_DEPTH = 32  # objects and lists inside each other; job configs need 3
MAX_JSON_NUMBER = 2**63 - 1
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class InputError(ValueError):
    """What is wrong with the request, in words for the client."""


def check_text(value: str, where: str) -> None:
    if "\x00" in value:
        raise InputError(f"{where} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{where} contains a lone surrogate (not valid Unicode text)") from None


def parse_id(value: str | None) -> int | None:
    """A primary key from a query or form value: ASCII digits within 64 bits, else None."""
    value = (value or "").strip()
    if value.isascii() and value.isdigit() and int(value) <= MAX_ID:
        return int(value)
    return None


def parse_ids(values, limit: int = 10) -> list[int]:
    """Ids from comma-separated texts (`?ids=1,2&ids=3`); InputError names what is not one."""
    ids = []
    for text in values:
        for part in str(text).split(","):
            if part.strip():
                if (number := parse_id(part)) is None:
                    raise InputError(f"{part.strip()[:40]!r} is not an id")
                ids.append(number)
    return ids[:limit]


def check_json(body: bytes | str, where: str = "the JSON body") -> None:
    """Raise InputError for JSON no view should see (invalid JSON is left to the parser)."""
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{where} is not UTF-8") from None

    def reject_constant(name: str):
        raise InputError(f"{where} contains {name}, which is not a number JSON allows")

    try:
        data = json.loads(body, parse_constant=reject_constant)
    except RecursionError:
        raise InputError(f"{where} is nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:
        if isinstance(exc, InputError):
            raise
        return  # not JSON: the API's parser answers with its own 400
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                raise InputError(f"{where} is nested deeper than {MAX_JSON_DEPTH} levels")
            items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
            for key, item in items:
                if key is not None:
                    check_text(key, f"a key in {where}")
                stack.append((item, depth + 1))
        elif isinstance(value, str):
            check_text(value, f"a string in {where}")
        elif isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{where} contains a number too large to represent")
        elif (
            isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_JSON_NUMBER
        ):
            raise InputError(f"{where} contains an integer beyond 64 bits")


def check_request(request) -> HttpResponse | None:
    """The response refusing `request`, or None when it may go on to its view."""
    api = request.path.startswith("/api/")
    try:
        check_text(request.path, "the address")
        for segment in request.path.split("/"):
            if segment.isascii() and segment.isdigit() and int(segment) > MAX_ID:
                message = "no such object"
                return (
                    JsonResponse({"detail": message}, status=404)
                    if api
                    else HttpResponseNotFound(message)
                )
        for key, values in request.GET.lists():
            check_text(key, "a query parameter's name")
            for value in values:
                check_text(value, f"the query parameter {key!r}")
        content_type = request.content_type or ""
        if request.method in ("POST", "PUT", "PATCH", "DELETE"):
            if content_type.startswith(FORM_TYPES):
                for key, values in request.POST.lists():
                    check_text(key, "a form field's name")
                    for value in values:
                        check_text(value, f"the form field {key!r}")
                        # JSON typed into a form (the admin's JSON fields)
                        if value.lstrip()[:1] in ("{", "[", '"'):
                            check_json(value, f"the form field {key!r}")
            elif content_type.endswith("json") and request.body:
                check_json(request.body)
    except InputError as exc:
        message = str(exc)
        return (
            JsonResponse({"detail": message}, status=400)
            if api
            else HttpResponseBadRequest(message)
        )
    return None


class InputHygieneMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return check_request(request) or self.get_response(request)
