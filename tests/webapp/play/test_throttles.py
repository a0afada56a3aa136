"""The guest limit holds: atomic counts under concurrent clients, X-Forwarded-For ignored unless a
proxy is trusted, and a clear 503 (not a 500) for guests while the cache is down."""

from __future__ import annotations

import random
import threading
import uuid

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import RequestFactory
from rest_framework.test import APIClient

from webapp.play.throttles import GuestPlayThrottle

pytestmark = pytest.mark.django_db
LIMIT = 120
THREADS, PER_THREAD = 8, 40


def _rate(settings, rate: str, proxies: int = 0) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"guest_play": rate},
        "NUM_PROXIES": proxies,
    }


def _allowed_under_threads(address: str) -> int:
    allowed = []
    barrier = threading.Barrier(THREADS)

    def client():
        request = RequestFactory().post("/api/games/", REMOTE_ADDR=address)
        request.user = AnonymousUser()
        barrier.wait()
        allowed.append(
            sum(GuestPlayThrottle().allow_request(request, None) for _ in range(PER_THREAD))
        )

    threads = [threading.Thread(target=client) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(allowed)


@pytest.mark.parametrize("backend", ["memory", "redis"])
def test_eight_concurrent_clients_get_the_limit_within_two_percent(settings, backend, redis_url):
    if backend == "redis":
        if redis_url is None:
            pytest.skip("no Redis server answers")
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": redis_url,
                "KEY_PREFIX": uuid.uuid4().hex,  # counts from zero, whatever earlier runs left
            }
        }
    _rate(settings, f"{LIMIT}/hour")
    address = f"10.{random.randrange(256)}.{random.randrange(256)}.{random.randrange(1, 255)}"
    allowed = _allowed_under_threads(address)
    assert THREADS * PER_THREAD > LIMIT
    assert abs(allowed - LIMIT) <= LIMIT * 0.02, allowed
    assert allowed == LIMIT  # the counter is atomic: not even one extra


def _start(api, **extra):
    return api.post("/api/games/", {"role": "guesser"}, format="json", **extra)


def _random_ip() -> str:
    return ".".join(str(random.randrange(1, 255)) for _ in range(4))


def test_a_random_x_forwarded_for_per_request_does_not_bypass_the_limit(catalog, settings):
    _rate(settings, "5/minute")
    api = APIClient()
    codes = [_start(api, HTTP_X_FORWARDED_FOR=_random_ip()).status_code for _ in range(12)]
    assert codes == [201] * 5 + [429] * 7


def test_behind_one_trusted_proxy_the_address_the_proxy_saw_is_the_client(catalog, settings):
    _rate(settings, "2/minute", proxies=1)
    api = APIClient()
    # the client may prepend anything; the proxy appends the address it saw (last entry)
    first = [
        _start(api, HTTP_X_FORWARDED_FOR=f"{_random_ip()}, 203.0.113.7").status_code
        for _ in range(3)
    ]
    second = [_start(api, HTTP_X_FORWARDED_FOR="203.0.113.8").status_code for _ in range(3)]
    assert first == [201, 201, 429] and second == [201, 201, 429]


def test_guests_get_a_503_with_a_message_while_the_cache_is_down_and_players_play_on(
    catalog, settings, player, client
):
    _rate(settings, "100/minute")
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    response = _start(APIClient())
    assert response.status_code == 503 and "rate limiter" in response.json()["detail"]
    page = client.post("/play/start/", {"role": "guesser", "max_turns": 20}, follow=True)
    assert page.status_code == 200 and b"rate limiter" in page.content
    signed_in = APIClient()
    signed_in.force_authenticate(player)
    assert _start(signed_in).status_code == 201
