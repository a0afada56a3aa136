"""The web app's JSON API as a logged-in researcher sees it (the redis_outage scenario)."""

from __future__ import annotations

import http.cookiejar
import json
import urllib.error
import urllib.parse
import urllib.request

from bench.faults.lab import PASSWORD, USER


def login(base: str) -> tuple[urllib.request.OpenerDirector, str]:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{base}/accounts/login/", timeout=30).read()
    csrf = next(c.value for c in jar if c.name == "csrftoken")
    data = urllib.parse.urlencode(
        {"username": USER, "password": PASSWORD, "csrfmiddlewaretoken": csrf}
    ).encode()
    opener.open(
        urllib.request.Request(f"{base}/accounts/login/", data=data, headers={"Referer": base}),
        timeout=30,
    ).read()
    csrf = next(c.value for c in jar if c.name == "csrftoken")
    if not any(c.name == "sessionid" for c in jar):
        raise RuntimeError("could not log in to the web app")
    return opener, csrf


def api_post(opener, csrf: str, base: str, path: str, payload: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{base}{path}",
        data=json.dumps(payload).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "X-CSRFToken": csrf,
            "Referer": base,
        },
    )
    try:
        with opener.open(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            return exc.code, json.loads(body)
        except ValueError:
            return exc.code, {"raw": body[:300].decode(errors="replace")}
