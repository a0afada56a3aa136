"""Input hygiene at the edge: what no view can store or echo gets a 400 (or 404) with a message,
on public pages, forms and the API, for anonymous and signed-in clients alike."""

import json

import pytest

from tests.sending import tasks_held
from webapp.core.hygiene import MAX_JSON_DEPTH
from webapp.play.models import Game

pytestmark = pytest.mark.django_db


def _nested(depth: int) -> str:
    """JSON text of `depth` objects inside each other (built as text: json.dumps would recurse)."""
    return '{"a": ' * depth + '"leaf"' + "}" * depth


@pytest.mark.parametrize(
    "url",
    [
        "/players/%00/",
        "/leaderboards/?key=%00",
        "/api/schema/?version=%00",
        "/games/?word=cat%00dog",
        "/labelling/?after=%00",
    ],
)
def test_a_nul_in_the_address_or_query_is_a_400_with_a_message(client, url):
    response = client.get(url)
    assert response.status_code == 400
    assert b"NUL" in response.content


def test_an_id_beyond_64_bits_is_not_found_not_a_server_error(client):
    response = client.get("/api/games/99999999999999999999/")
    assert response.status_code == 404 and response.json() == {"detail": "no such object"}
    assert client.get("/games/99999999999999999999/").status_code == 404


@pytest.mark.parametrize(
    "body, words",
    [
        (_nested(5000), b"nested deeper"),  # RecursionError in the JSON parser before
        (_nested(MAX_JSON_DEPTH + 1), b"nested deeper"),
        ('{"secret": "cat", "x": NaN}', b"NaN"),
        ('{"limit": Infinity}', b"Infinity"),
        ('{"limit": 1' + "0" * 30 + "}", b"64 bits"),
        ('{"secret": "\\u0000"}', b"NUL"),
        ('{"secret": "\\ud800"}', b"surrogate"),
        ('{"\\ud800": 1}', b"surrogate"),
    ],
)
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
    response = client.post(
        "/api/games/", json.dumps({"secret": {"a": [{"b": 1}]}}), content_type="application/json"
    )
    assert response.status_code != 400 or b"nested" not in response.content
    assert (
        client.post("/api/games/", "not json", content_type="application/json").status_code == 400
    )


# -- a hand-written fuzz of every endpoint and form (issue 21, items 4 and 5) --------------------
BAD_TEXT = [
    "\x00",
    "a\x00b",
    "\u00b2",
    "99999999999999999999",
    "18446744073709551616",
    "-1",
    "0",
    "Infinity",
    "-Infinity",
    "NaN",
    "1e400",
    "",
    " ",
    "[]",
    "{}",
    "null",
    "x" * 3000,
    "http://evil.example/",
    "//evil.example",
    "javascript:alert(1)",
    "%",
    "\u00e9\u4e2d",
]
RAW_QUERY_VALUES = [
    "%ED%A0%80",
    "%FF",
    "%00",
    "%C2%B2",
]  # a lone surrogate and bytes no UTF-8 allows
BAD_JSON = [
    None,
    7,
    -1,
    1.5,
    2**63,
    -(2**63) - 1,
    [1],
    {"a": 1},
    "Infinity",
    "-Infinity",
    "NaN",
    "\u00b2",
    True,
    "",
    "x" * 3000,
    [[[]]],
    {"": None},
]
BAD_IDS = ["0", "9223372036854775807", "9223372036854775808", "99999999999999999999"]
PARAM_NAMES = [
    "after",
    "board",
    "choices",
    "config",
    "draw_word",
    "expected_index",
    "gold",
    "guesser",
    "ids",
    "judge",
    "key",
    "kind",
    "max_turns",
    "multiline",
    "next",
    "page",
    "question",
    "role",
    "secret",
    "show",
    "sort",
    "split",
    "status",
    "subset",
    "turns",
    "verdict",
    "word_list",
    "version",
    "limit",
    "offset",
    "format",
    "word",
    "player",
    "item",
    "label",
    "username",
    "password",
]


def _routes():
    """(pattern text, route name) of every non-admin URL, from the resolver."""
    from django.urls import get_resolver
    from django.urls.resolvers import URLResolver

    def walk(resolver, prefix=""):
        for entry in resolver.url_patterns:
            if isinstance(entry, URLResolver):
                yield from walk(entry, prefix + str(entry.pattern))
            else:
                yield prefix + str(entry.pattern), entry.name

    return [(route, name) for route, name in walk(get_resolver()) if not route.startswith("admin/")]


def _fill(route: str, ids: dict[str, int], value: str | None = None) -> str:
    """A concrete path: `<int:x>` from `ids` (or `value`), other converters `value` or "x"."""
    import re

    def one(match):
        converter, name = match.group(1) or "str", match.group(2)
        if converter == "int":
            return value if value is not None and value.isdigit() else str(ids.get(name, 1))
        return quote(value if value is not None else "x", safe="")

    return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", one, route)


def _form_names(html: bytes) -> set[str]:
    import re

    return set(re.findall(r'name="([A-Za-z_][\w-]*)"', html.decode("utf-8", "replace"))) - {
        "csrfmiddlewaretoken"
    }


from urllib.parse import quote  # noqa: E402


@pytest.fixture
def fuzz_world(make_user):
    """Stored games, a labelling queue, a job and a word list: every id in a route resolves."""
    from tests.webapp.labelling.support import run_disagreements, store_games
    from webapp.catalog.models import WordList
    from webapp.catalog.services import seed_word_lists
    from webapp.labelling.models import DisagreementItem

    seed_word_lists()
    store_games()
    job = run_disagreements(controls=0.0)
    game = Game.objects.order_by("pk").first()
    ids = {
        "game_id": game.pk,
        "job_id": job.pk,
        "item_id": DisagreementItem.objects.first().pk,
        "pk": WordList.objects.first().pk,
        "artifact_id": 1,
    }
    admin = make_user("researcher", "annotator", "player", username="fuzz-admin")
    admin.is_superuser = admin.is_staff = True
    admin.save()
    return ids, admin


def _assert_no_server_error(response, what: str, failures: list) -> None:
    if response.status_code >= 500:
        failures.append(f"{response.status_code} {what}")


@pytest.mark.slow
@pytest.mark.parametrize("who", ["anonymous", "superuser"])
def test_no_endpoint_or_form_gives_a_server_error_on_bad_input(client, fuzz_world, who, settings):
    ids, admin = fuzz_world
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"guest_play": None},
    }
    client.raise_request_exception = False
    if who == "superuser":
        client.force_login(admin)
    failures: list[str] = []
    with tasks_held():
        for route, name in _routes():
            if name in ("logout",):
                continue
            path = _fill(route, ids)
            page = client.get(path)
            _assert_no_server_error(page, f"GET {path}", failures)
            names = set(PARAM_NAMES)
            if page.status_code == 200 and page.get("Content-Type", "").startswith("text/html"):
                names |= _form_names(page.content)
            for bad in BAD_IDS + ["x\u00b2"]:
                if "<" in route:
                    bad_path = _fill(route, ids, bad)
                    _assert_no_server_error(client.get(bad_path), f"GET {bad_path}", failures)
            for value in BAD_TEXT:  # every parameter and form field at once: the fuzz stays fast
                response = client.get(path, {param: value for param in names})
                _assert_no_server_error(response, f"GET {path}?*={value[:20]!r}", failures)
                response = client.post(path, {param: value for param in names})
                _assert_no_server_error(response, f"POST {path} *={value[:20]!r}", failures)
            for raw in RAW_QUERY_VALUES:
                response = client.get(
                    path, QUERY_STRING="&".join(f"{param}={raw}" for param in names)
                )
                _assert_no_server_error(response, f"GET {path}?*={raw}", failures)
            if route.startswith("api/"):
                for value in BAD_JSON:
                    body = json.dumps({param: value for param in names})
                    for method in (client.post, client.put, client.patch):
                        response = method(path, body, content_type="application/json")
                        _assert_no_server_error(
                            response, f"{method.__name__} {path} *={value!r:.40}", failures
                        )
            if route.startswith("api/"):
                for body in [
                    "[]",
                    "1",
                    "null",
                    '"x"',
                    "{",
                    _nested(5000),
                    '{"a": NaN}',
                    '{"\\ud800": 1}',
                ]:
                    response = client.post(path, body, content_type="application/json")
                    _assert_no_server_error(response, f"POST {path} {body[:40]}", failures)
    assert not failures, f"{len(failures)} server errors:\n" + "\n".join(failures[:60])


@pytest.fixture(scope="session")
def job_kinds_imported():
    """Every kind's config and references check imported before a test's transaction opens (some
    import torch: seconds a Postgres idle-in-transaction timeout may not allow)."""
    from webapp.jobs import registry

    for kind in registry.REGISTRY.values():
        kind.config_class()
        if kind.check:
            registry._load(kind.check)


def test_every_job_config_field_takes_any_json_value_without_a_crash(
    job_kinds_imported, fuzz_world
):
    """Each kind × field × wrong-typed value: a field error (ValidationError), or a config whose
    references check answers with a field error too; never another exception."""
    import dataclasses

    from django.core.exceptions import ValidationError

    from webapp.jobs import registry

    tried = refused = 0
    for kind in registry.REGISTRY.values():
        for field in dataclasses.fields(kind.config_class()):
            for value in BAD_JSON:
                tried += 1
                try:
                    config = registry.build_config(kind, {field.name: value})
                    kind.check_references(config)
                except ValidationError as exc:
                    refused += 1
                    assert exc.message_dict, (kind.name, field.name, value)
    assert refused > tried // 2  # most of these values are the wrong type for most fields


@pytest.mark.parametrize(
    "params, field, words",
    [
        ({"message": 7}, "message", "expected text"),
        ({"message": None}, "message", "got null"),
        ({"epochs": "Infinity"}, "epochs", "finite"),
        ({"learning_rate": "NaN"}, "learning_rate", "finite"),
        ({"max_steps": 2**64}, "max_steps", "64 bits"),
        ({"max_steps": True}, "max_steps", "expected an integer"),
        ({"learning_rate": [1]}, "learning_rate", "expected a number"),
    ],
)
def test_config_coercion_names_the_field_and_the_problem(params, field, words):
    from django.core.exceptions import ValidationError

    from webapp.jobs import registry

    kind = registry.get_kind("sft" if field != "message" else "smoke")
    with pytest.raises(ValidationError) as caught:
        registry.build_config(kind, params)
    assert words in " ".join(caught.value.message_dict[field])


def test_a_number_for_a_list_field_and_a_non_object_config_are_field_errors():
    from django.core.exceptions import ValidationError

    from webapp.jobs import registry

    tuple_fields = [
        (kind, f.name)
        for kind in registry.REGISTRY.values()
        for f in __import__("dataclasses").fields(kind.config_class())
        if "tuple" in str(f.type)
    ]
    assert tuple_fields, "some config has a list field"
    for kind, name in tuple_fields:
        with pytest.raises(ValidationError) as caught:
            registry.build_config(kind, {name: 7})
        assert "expected a list" in caught.value.message_dict[name][0]
    for config in ([1, 2], "text", 7):
        with pytest.raises(ValidationError) as caught:
            registry.build_config(registry.get_kind("smoke"), config)
        assert "must be an object" in caught.value.message_dict["__all__"][0]


def test_retrying_a_job_whose_stored_config_no_longer_validates_is_a_clear_error(client, make_user):
    from webapp.jobs.models import Job, JobStatus

    researcher = make_user("researcher")
    researcher.is_superuser = True
    researcher.save()
    client.force_login(researcher)
    job = Job.objects.create(
        kind="smoke", config={"message": 7, "gone": 1}, status=JobStatus.FAILED
    )
    response = client.post(f"/jobs/{job.pk}/retry/", follow=True)
    assert response.status_code == 200
    assert b"no longer validates" in response.content and b"gone" in response.content
    response = client.post(
        "/admin/jobs/job/", {"action": "retry_jobs", "_selected_action": [job.pk]}, follow=True
    )
    assert response.status_code == 200 and b"no longer validates" in response.content
    assert Job.objects.count() == 1  # nothing queued


@pytest.mark.parametrize(
    "fields",
    [
        {"steps": "[1, 2]"},
        {"steps": "7.5"},
        {"steps": ""},
        {"steps": "99999999999999999999999"},
        {"seconds_per_step": "nan"},
        {"seconds_per_step": "1e999"},
        {"message": "a\x00b"},
        {"message": "x" * 1001},
        {},
    ],
)
def test_the_admin_add_form_refuses_a_value_of_the_wrong_shape_with_a_field_error(
    client, make_user, fields
):
    """The admin's add form is the dashboard's generated form: one input per config field."""
    from webapp.jobs.models import Job

    admin = make_user("researcher")
    admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    values = {"kind": "smoke", "message": "hi", "steps": "1", "seconds_per_step": "0", **fields}
    response = client.post("/admin/jobs/job/add/", values)
    if not fields:  # the defaults: a smoke job is queued
        assert response.status_code == 302
        return
    if "\x00" in fields.get("message", ""):  # what no database stores: refused at the edge
        assert response.status_code == 400 and Job.objects.count() == 0
        return
    assert response.status_code == 200 and b"errorlist" in response.content
    assert Job.objects.count() == 0
    assert (
        client.get("/admin/jobs/job/").status_code == 200
        and client.get("/api/jobs/").status_code == 200
    )


@pytest.mark.parametrize(
    "next_url, expected",
    [
        ("https://evil.example/phish", "/labelling/review/"),
        ("//evil.example/", "/labelling/review/"),
        ("labelling:queue", "/labelling/review/"),
        ("not a url at all", "/labelling/review/"),
        ("javascript:alert(1)", "/labelling/review/"),
        ("/labelling/review/?page=2", "/labelling/review/?page=2"),
    ],
)
def test_adjudicate_next_stays_on_this_site(client, make_user, next_url, expected):
    from tests.webapp.labelling.support import run_disagreements, store_games
    from webapp.labelling.models import DisagreementItem

    store_games()
    run_disagreements(controls=0.0)
    client.force_login(make_user("researcher"))
    item = DisagreementItem.objects.first()
    response = client.post(
        f"/labelling/items/{item.pk}/adjudicate/", {"gold": "yes", "next": next_url}
    )
    assert response.status_code == 302 and response["Location"] == expected
