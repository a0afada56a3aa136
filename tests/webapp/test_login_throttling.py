"""Password guessing: django-axes locks a username out from an address after AXES_FAILURE_LIMIT
wrong passwords, on the login form and the API token login; the right password is refused until
the cool-off has passed; normal logins work; Basic auth is not accepted; one address is capped
across usernames (LOGIN_RATE)."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-test-password"


@pytest.fixture
def ada(make_user):
    return make_user("player", username="ada")


def _form_login(client, password: str, username: str = "ada"):
    return client.post("/accounts/login/", {"username": username, "password": password})


def _api_login(api, password: str, username: str = "ada"):
    return api.post("/api/auth/token/", {"username": username, "password": password}, format="json")


def test_the_login_form_logs_in_with_the_right_password(client, ada):
    response = _form_login(client, PASSWORD)
    assert response.status_code == 302 and client.session.get("_auth_user_id") == str(ada.pk)


def test_wrong_passwords_lock_the_form_out_and_the_right_one_is_refused_until_cool_off(client, ada):
    limit = settings.AXES_FAILURE_LIMIT
    codes = [_form_login(client, f"wrong-{i}").status_code for i in range(limit)]
    assert codes[:-1] == [200] * (limit - 1)  # the form again, with its error
    assert codes[-1] == 429  # the last allowed failure locks out
    locked = _form_login(client, PASSWORD)
    assert locked.status_code == 429 and b"Too many failed logins" in locked.content
    assert "_auth_user_id" not in client.session
    # another account from the same address, and the same account from elsewhere, are not locked
    assert _form_login(client, "x", username="someone-else").status_code == 200
    assert (
        client.post(
            "/accounts/login/",
            {"username": "ada", "password": PASSWORD},
            REMOTE_ADDR="198.51.100.9",
        ).status_code
        == 302
    )
    # after the cool-off the right password works again
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.first().attempt_time
        - settings.AXES_COOLOFF_TIME
        - timedelta(seconds=1)
    )
    client.logout()
    assert _form_login(client, PASSWORD).status_code == 302


def test_the_api_token_login_locks_out_too_and_its_token_authenticates(ada):
    api = APIClient()
    ok = _api_login(api, PASSWORD)
    assert ok.status_code == 200 and len(ok.json()["token"]) == 40
    token = ok.json()["token"]
    for _ in range(settings.AXES_FAILURE_LIMIT):
        assert _api_login(api, "wrong").status_code in (400, 429)
    locked = _api_login(api, PASSWORD)
    assert locked.status_code == 429 and "try again later" in locked.json()["detail"]
    authed = APIClient(HTTP_AUTHORIZATION=f"Token {token}")
    assert authed.post("/api/games/", {"role": "guesser"}, format="json").status_code != 401


def test_the_form_and_the_api_count_the_same_failures(client, ada):
    for i in range(settings.AXES_FAILURE_LIMIT - 1):
        _form_login(client, f"wrong-{i}")
    assert _api_login(APIClient(), "wrong").status_code == 429
    assert _api_login(APIClient(), PASSWORD).status_code == 429


def test_bad_api_login_input_is_a_400_not_a_500(ada):
    api = APIClient()
    for body in ({}, {"username": ["ada"], "password": 1}, {"username": None, "password": None}):
        assert api.post("/api/auth/token/", body, format="json").status_code == 400


def test_basic_auth_is_not_accepted(ada):
    basic = base64.b64encode(f"ada:{PASSWORD}".encode()).decode()
    api = APIClient(HTTP_AUTHORIZATION=f"Basic {basic}")
    response = api.get("/api/jobs/")
    assert response.status_code in (401, 403)
    assert (
        "rest_framework.authentication.BasicAuthentication"
        not in (settings.REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"])
    )


def test_an_overlong_username_is_a_failed_login_not_a_database_error(client, ada):
    response = _form_login(client, "x" * 3000, username="y" * 3000)
    assert response.status_code == 200
    assert AccessAttempt.objects.get().username == "y" * 150
    api = _api_login(APIClient(), "x", username="z" * 3000)
    assert api.status_code == 400


def test_one_address_trying_many_usernames_is_capped_before_any_hashing(
    client, ada, settings, monkeypatch
):
    from webapp.core import ratelimit

    monkeypatch.setattr(ratelimit, "clock", lambda: 3600.0 * 500_000 + 1)  # inside one window
    settings.LOGIN_RATE = "4/minute"
    address = "198.51.100.77"  # its own window, whatever other tests counted
    codes = [
        client.post(
            "/accounts/login/", {"username": f"user{i}", "password": "x"}, REMOTE_ADDR=address
        ).status_code
        for i in range(6)
    ]
    assert codes == [200] * 4 + [429] * 2
    capped = client.post(
        "/accounts/login/", {"username": "ada", "password": PASSWORD}, REMOTE_ADDR=address
    )
    assert capped.status_code == 429 and b"Too many login attempts" in capped.content
    api = APIClient(REMOTE_ADDR=address)
    assert _api_login(api, PASSWORD).status_code == 429
    assert AccessAttempt.objects.count() == 4  # the capped tries never reached authentication
    assert (
        client.post(
            "/accounts/login/",
            {"username": "ada", "password": PASSWORD},
            REMOTE_ADDR="198.51.100.78",
        ).status_code
        == 302
    )  # other addresses are not


def test_one_address_has_one_login_checked_at_a_time(client, ada):
    """While an attempt from an address is being checked (its password hashed), another from the
    same address is a 429 before any hashing, on the form and the API; other addresses, and the
    same address once the first is done, go through."""
    from django.contrib.auth import base_user
    from django.test import RequestFactory

    from webapp.accounts.throttles import login_in_flight

    address = "198.51.100.91"
    hashed = []
    real_check = base_user.check_password  # what User.check_password hashes with

    def counting(*args, **kwargs):
        hashed.append(1)
        return real_check(*args, **kwargs)

    first = RequestFactory().post("/accounts/login/", REMOTE_ADDR=address)
    with login_in_flight(first) as alone, pytest.MonkeyPatch.context() as mp:
        assert alone
        mp.setattr(base_user, "check_password", counting)
        form = client.post(
            "/accounts/login/", {"username": "ada", "password": PASSWORD}, REMOTE_ADDR=address
        )
        api = _api_login(APIClient(REMOTE_ADDR=address), PASSWORD)
        elsewhere = _api_login(APIClient(REMOTE_ADDR="198.51.100.92"), PASSWORD)
    assert form.status_code == 429 and b"being checked" in form.content
    assert api.status_code == 429 and "being checked" in api.json()["detail"]
    assert elsewhere.status_code == 200 and len(hashed) == 1  # only the other address hashed
    assert (
        client.post(
            "/accounts/login/", {"username": "ada", "password": PASSWORD}, REMOTE_ADDR=address
        ).status_code
        == 302
    )
