"""Schema-driven fuzzing (schemathesis): no request the OpenAPI schema allows may cause a server error."""

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
        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def fuzz(case):
            case.call_and_validate(headers=auth_headers, checks=[not_a_server_error])

        fuzz()


def test_schema_documents_every_api_resource(client, db):
    paths = client.get("/api/schema/?format=json").json()["paths"]
    assert {"/api/jobs/", "/api/jobs/{job_id}/", "/api/jobs/{job_id}/cancel/", "/api/jobs/{job_id}/resume/"} <= set(paths)
