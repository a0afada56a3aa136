"""The OpenAI-compatible backend against a small chat-completions server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from games.llm import build_backend
from games.llm.base import BackendError, SamplingParams
from games.llm.openai_backend import OpenAIBackend, OpenAIConfig


class FakeServer:
    """Answers `echo: <last user message> (seed N)`; the first `fail_first` requests get HTTP
    503."""

    def __init__(self, fail_first: int = 0, status: int | None = None):
        self.requests: list[dict] = []
        self.fail_first = fail_first
        self.status = status
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), **body}
                )
                if server.status or len(server.requests) <= server.fail_first:
                    self.send_error(
                        server.status or 503, "try again" if not server.status else "bad request"
                    )
                    return
                text = f"echo: {body['messages'][-1]['content']} (seed {body.get('seed')})"
                tokens = text.split(" ")[: body["max_tokens"]]
                choice = {
                    "index": 0,
                    "message": {"role": "assistant", "content": " ".join(tokens)},
                    "finish_reason": "length" if len(tokens) < len(text.split(" ")) else "stop",
                }
                if body.get("logprobs"):
                    choice["logprobs"] = {
                        "content": [
                            {"token": f"token_id:{100 + i}", "logprob": -0.1 * (i + 1)}
                            for i in range(len(tokens))
                        ]
                    }
                payload = json.dumps(
                    {"id": "x", "object": "chat.completion", "choices": [choice]}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    made = []

    def start(**kwargs):
        made.append(FakeServer(**kwargs))
        return made[-1]

    yield start
    for s in made:
        s.close()


def chat(text: str) -> list[dict]:
    return [{"role": "system", "content": "sys"}, {"role": "user", "content": text}]


def test_generate_batches_keep_order_and_parse_logprobs(server):
    srv = server()
    backend = build_backend(f"openai:{srv.url}#tiny-model", api_key="k-test", max_concurrency=4)
    assert isinstance(backend, OpenAIBackend)
    gens = backend.generate(
        [chat(f"q{i}") for i in range(6)], SamplingParams(max_new_tokens=10), seeds=list(range(6))
    )
    assert [g.text for g in gens] == [f"echo: q{i} (seed {i})" for i in range(6)]
    assert gens[0].token_ids == [100, 101, 102, 103] and gens[0].logprobs == pytest.approx(
        [-0.1, -0.2, -0.3, -0.4]
    )
    assert gens[0].finish_reason == "stop"
    sent = srv.requests[0]
    assert sent["path"] == "/v1/chat/completions" and sent["model"] == "tiny-model"
    assert sent["auth"] == "Bearer k-test" and sent["max_tokens"] == 10 and sent["logprobs"] is True
    assert "top_k" not in sent and "stop" not in sent


def test_sampling_options_are_sent_and_stop_cuts_locally(server):
    srv = server()
    backend = OpenAIBackend(
        OpenAIConfig(base_url=srv.url, model="m", logprobs=False, extra_body={"x": 1})
    )
    gen = backend.generate(
        [chat("hello there")],
        SamplingParams(max_new_tokens=2, temperature=0.3, top_k=5, stop=("o",)),
    )[0]
    sent = srv.requests[0]
    assert (sent["temperature"], sent["top_k"], sent["stop"], sent["x"]) == (0.3, 5, ["o"], 1)
    assert "logprobs" not in sent and "seed" not in sent
    assert (
        gen.text == "ech"
        and gen.finish_reason == "stop"
        and gen.logprobs == []
        and gen.token_ids == []
    )


def test_server_errors_are_retried_with_backoff(server):
    srv = server(fail_first=2)
    backend = OpenAIBackend(OpenAIConfig(base_url=srv.url, model="m", max_retries=3, backoff=0.05))
    start = time.perf_counter()
    gen = backend.generate([chat("again")], SamplingParams(max_new_tokens=5))[0]
    assert gen.text.startswith("echo: again") and len(srv.requests) == 3
    assert time.perf_counter() - start >= 0.05 + 0.1  # slept 0.05 then 0.1


def test_client_errors_fail_at_once_with_the_url(server):
    srv = server(status=400)
    backend = OpenAIBackend(OpenAIConfig(base_url=srv.url, model="m", max_retries=3, backoff=0.05))
    with pytest.raises(BackendError, match=r"chat/completions answered HTTP 400"):
        backend.generate([chat("x")], SamplingParams())
    assert len(srv.requests) == 1


def test_unreachable_server_names_the_url():
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    backend = build_backend(f"openai:{url}#m", max_retries=1, backoff=0.01, timeout=2)
    with pytest.raises(
        BackendError, match=f"cannot reach .*{port}/v1/chat/completions after 2 attempts"
    ):
        backend.generate([chat("x")], SamplingParams())


def test_config_and_scoring_limits():
    with pytest.raises(ValueError):
        OpenAIConfig(base_url="127.0.0.1:8000", model="m")
    with pytest.raises(ValueError):
        build_backend("openai:http://127.0.0.1:9/v1")  # no #MODEL
    backend = build_backend("openai:http://127.0.0.1:9/v1/chat/completions#m")
    assert backend.config.endpoint == "http://127.0.0.1:9/v1/chat/completions"
    with pytest.raises(NotImplementedError, match="cannot score"):
        backend.score([chat("x")], ["y"])
