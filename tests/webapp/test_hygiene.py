"""Input hygiene at the edge: what no view can store or echo gets a 400 (or 404) with a message,
on public pages, forms and the API, for anonymous and signed-in clients alike."""

import json

import pytest

from webapp.core.hygiene import MAX_JSON_DEPTH
from webapp.play.models import Game

pytestmark = pytest.mark.django_db


def _nested(depth: int) -> str:
    """JSON text of `depth` objects inside each other (built as text: json.dumps would recurse)."""
    return '{"a": ' * depth + '"leaf"' + "}" * depth


@pytest.mark.parametrize("url", ["/players/%00/", "/leaderboards/?key=%00", "/api/schema/?version=%00",
                                 "/games/?word=cat%00dog", "/labelling/?after=%00"])
def test_a_nul_in_the_address_or_query_is_a_400_with_a_message(client, url):
    response = client.get(url)
    assert response.status_code == 400
    assert b"NUL" in response.content


def test_an_id_beyond_64_bits_is_not_found_not_a_server_error(client):
    response = client.get("/api/games/99999999999999999999/")
    assert response.status_code == 404 and response.json() == {"detail": "no such object"}
    assert client.get("/games/99999999999999999999/").status_code == 404


@pytest.mark.parametrize("body, words", [
    (_nested(5000), b"nested deeper"),  # RecursionError in the JSON parser before
    (_nested(MAX_JSON_DEPTH + 1), b"nested deeper"),
    ('{"secret": "cat", "x": NaN}', b"NaN"),
    ('{"limit": Infinity}', b"Infinity"),
    ('{"limit": 1' + "0" * 30 + "}", b"64 bits"),
    ('{"secret": "\\u0000"}', b"NUL"),
    ('{"secret": "\\ud800"}', b"surrogate"),
    ('{"\\ud800": 1}', b"surrogate"),
])
def test_json_the_api_cannot_store_or_echo_is_refused_before_any_view(client, body, words):
    before = Game.objects.count()
    response = client.post("/api/games/", body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert words in response.content
    json.loads(response.content)  # the message itself is valid JSON (no surrogate echoed raw)
    assert Game.objects.count() == before


def test_a_nul_in_a_form_field_is_a_400(client):
    response = client.post("/accounts/login/", {"username": "a\x00b", "password": "x"})
    assert response.status_code == 400 and b"NUL" in response.content


def test_ordinary_requests_pass_through(client):
    assert client.get("/leaderboards/?key=dbrl").status_code in (200, 302)
    # valid JSON with the depth a job config has reaches the view (which answers for itself)
    response = client.post("/api/games/", json.dumps({"secret": {"a": [{"b": 1}]}}),
                           content_type="application/json")
    assert response.status_code != 400 or b"nested" not in response.content
    assert client.post("/api/games/", "not json", content_type="application/json").status_code == 400
