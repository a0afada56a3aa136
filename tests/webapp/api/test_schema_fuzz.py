"""Schema-driven fuzzing (schemathesis): no request the OpenAPI schema allows may cause a server
error."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

pytestmark = pytest.mark.slow


@pytest.fixture
def api_schema(db):
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    from webapp.catalog.services import seed_model_specs, seed_word_lists
    from webapp.wsgi import application

    seed_word_lists()
    seed_model_specs()
    # like Django's test client: keep the test's connection (and transaction) open across requests
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def auth_headers(make_user):
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=make_user("researcher", username="fuzzer"))
    return {"Authorization": f"Token {token.key}"}


def test_api_has_no_server_errors(api_schema, auth_headers):
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 5
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None
        )
        def fuzz(case):
            case.call_and_validate(headers=auth_headers, checks=[not_a_server_error])

        fuzz()


# The inputs that gave server errors in issue 21 (wrong types, null, non-finite and over-long
# numbers, NUL), put into every parameter and body field the schema names.
BAD_VALUES = [
    None,
    7,
    -1,
    1.5,
    2**63,
    "\u00b2",
    "99999999999999999999",
    "Infinity",
    "NaN",
    "",
    "x" * 3000,
    [1],
    {"a": 1},
    True,
    "a\x00b",
]
BAD_IDS = ["0", "9223372036854775807", "99999999999999999999"]


def test_api_bad_inputs_of_issue_21_have_no_server_errors(api_schema, auth_headers):
    schema = api_schema.raw_schema
    fields = sorted(
        {
            name
            for component in schema["components"]["schemas"].values()
            for name in component.get("properties", {})
        }
        | {"config", "kind"}
    )
    failures, statuses = [], {}
    for operation in (result.ok() for result in api_schema.get_all_operations()):
        parameters = list(operation.iter_parameters())
        path_names = [p.name for p in parameters if p.location == "path"]
        query_names = [p.name for p in parameters if p.location == "query"]
        with_body = operation.method.upper() in ("POST", "PUT", "PATCH")
        for value in BAD_VALUES:
            for path_id in ["1", *BAD_IDS] if path_names else ["1"]:
                case = operation.Case(
                    path_parameters={name: path_id for name in path_names},
                    query={
                        name: value if isinstance(value, str) else str(value)
                        for name in query_names
                    },
                    **(
                        {"body": {name: value for name in fields}, "media_type": "application/json"}
                        if with_body
                        else {}
                    ),
                )
                response = case.call(headers=auth_headers)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                if response.status_code >= 500:
                    failures.append(
                        f"{response.status_code} {operation.label} id={path_id} value={value!r:.30}"
                    )
    assert not failures, "\n".join(failures[:40])
    assert sum(statuses.values()) > 300 and set(statuses) & {400, 404}, statuses  # all were sent


def test_schema_documents_every_api_resource(client, db):
    paths = client.get("/api/schema/?format=json").json()["paths"]
    assert {
        "/api/jobs/",
        "/api/jobs/{job_id}/",
        "/api/jobs/{job_id}/cancel/",
        "/api/jobs/{job_id}/resume/",
    } <= set(paths)
