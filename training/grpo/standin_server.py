"""A stand-in for `vllm serve` on a CPU: the same HTTP subset, a local transformers model inside.

    python -m training.grpo.standin_server --model DIR [--port 8000] [--host 127.0.0.1]

It speaks what `rollout_backend=server` uses of vLLM's OpenAI-compatible server
(games.llm.vllm_server), so the trainer's server code path runs unchanged on a CPU, in tests and
on a laptop:
- `GET /health`, `GET /v1/models` (the base model, then the loaded adapters with `parent`);
- `POST /v1/completions` with a token-id `prompt`, `max_tokens`, `temperature`, `top_p`,
  `top_k`, `seed`, `stop`, `logprobs`, `return_token_ids`, `return_tokens_as_token_ids`;
  `model` names the base model or a loaded adapter. Concurrent requests are batched into one
  decode (as vLLM's scheduler does), each row with its own seed;
- `POST /v1/load_lora_adapter` / `POST /v1/unload_lora_adapter` (`lora_name`, `lora_path`: a
  peft adapter folder the server reads itself), as vLLM with
  `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`;
- its own `GET /standin/stats`: completions served per model or adapter name, adapters loaded.
`--die-after N` ends the process abruptly when the (N+1)-th completion request arrives: a
generation server that dies in the middle of a step, for tests.
Log-probs are log-softmax at the sampling temperature (vLLM's `processed_logprobs`).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from games.llm.base import SamplingParams

BATCH_WINDOW_S = 0.02  # how long the batcher waits for more requests after the first


class HTTPFailure(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


class Engine:
    """The model, its adapters (peft, one active at a time) and a batcher thread: every model
    call runs on that thread, so loads and decodes never interleave."""

    def __init__(self, model_dir: str, served_name: str | None, die_after: int | None):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.path = str(Path(model_dir).resolve())
        self.name = served_name or model_dir
        self.tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
        self.base = AutoModelForCausalLM.from_pretrained(self.path, local_files_only=True).eval()
        self.peft: Any = None
        self.adapters: dict[str, tuple[str, str]] = {}  # served name -> (path, peft slot)
        self._slots = 0
        self.active: str | None = None
        self.served: Counter[str] = Counter()
        self.loaded: list[str] = []
        self.die_after = die_after
        self.received = 0
        self._lock = threading.Lock()
        self._jobs: queue.Queue = queue.Queue()
        self._backend = self._make_backend(self.base)
        threading.Thread(target=self._loop, daemon=True).start()

    def _make_backend(self, model: Any):
        from games.llm.transformers_backend import TransformersBackend

        return TransformersBackend.from_model(
            model, self.tokenizer, prefix_cache_mb=64, max_batch_size=256
        )

    # -- work on the model thread ------------------------------------------------------------
    def call(self, kind: str, payload: Any) -> Any:
        """Run one job on the model thread and wait for its answer (or its HTTPFailure)."""
        done = threading.Event()
        slot: dict[str, Any] = {}
        self._jobs.put((kind, payload, done, slot))
        done.wait()
        if "error" in slot:
            raise slot["error"]
        return slot["result"]

    def _loop(self) -> None:
        while True:
            first = self._jobs.get()
            jobs = [first]
            if first[0] == "complete":
                deadline = time.monotonic() + BATCH_WINDOW_S
                while (left := deadline - time.monotonic()) > 0:
                    try:
                        jobs.append(self._jobs.get(timeout=left))
                    except queue.Empty:
                        break
            completions = [j for j in jobs if j[0] == "complete"]
            others = [j for j in jobs if j[0] != "complete"]
            for kind, payload, done, slot in others:
                self._run(slot, done, getattr(self, f"_{kind}"), payload)
            groups: dict[tuple, list] = {}
            for job in completions:
                groups.setdefault(job[1]["key"], []).append(job)
            for group in groups.values():
                self._complete_group(group)

    @staticmethod
    def _run(slot: dict, done: threading.Event, fn, payload) -> None:
        try:
            slot["result"] = fn(payload)
        except HTTPFailure as exc:
            slot["error"] = exc
        except Exception as exc:  # noqa: BLE001 - answered as HTTP 500
            slot["error"] = HTTPFailure(500, f"{type(exc).__name__}: {exc}")
        finally:
            done.set()

    def _activate(self, model: str) -> None:
        """Point the model at `model`: the base (adapters off) or a loaded adapter."""
        if model == self.active:
            return
        if model != self.name:
            self.peft.set_adapter(self.adapters[model][1])
        self._backend.clear_cache()
        self.active = model

    def _complete_group(self, group: list) -> None:
        first = group[0][1]
        try:
            self._activate(first["model"])
            prompts = [job[1]["prompt"] for job in group]
            seeds = [job[1]["seed"] for job in group]
            if first["model"] == self.name and self.peft is not None:
                with self.peft.disable_adapter():
                    outs = self._backend.generate_ids(prompts, first["sampling"], seeds=seeds)
            else:
                outs = self._backend.generate_ids(prompts, first["sampling"], seeds=seeds)
            self.served[first["model"]] += len(group)
            for (_, _, done, slot), out in zip(group, outs):
                slot["result"] = out
                done.set()
        except Exception as exc:  # noqa: BLE001 - every waiting request gets the error
            for _, _, done, slot in group:
                slot["error"] = HTTPFailure(500, f"{type(exc).__name__}: {exc}")
                done.set()

    def _load(self, body: dict[str, Any]) -> str:
        name, path = body.get("lora_name"), body.get("lora_path")
        if not name or not path:
            raise HTTPFailure(400, "Both 'lora_name' and 'lora_path' must be provided.")
        if name in self.adapters and not body.get("load_inplace"):
            raise HTTPFailure(400, f"The lora adapter '{name}' has already been loaded.")
        if not (Path(path) / "adapter_config.json").is_file():
            raise HTTPFailure(400, f"No adapter found at {path}")
        self._slots += 1
        slot = f"slot{self._slots}"  # peft's own name: a served name can come back after unload
        if self.peft is None:
            from peft import PeftModel

            self.peft = PeftModel.from_pretrained(self.base, path, adapter_name=slot).eval()
            self._backend = self._make_backend(self.peft)
        else:
            self.peft.load_adapter(path, adapter_name=slot)
        self.adapters[name] = (path, slot)
        self.peft.set_adapter(slot)
        self._drop_unused_slots()
        self.loaded.append(name)
        self.active = None  # the next request activates its model
        return f"Success: LoRA adapter '{name}' added successfully."

    def _unload(self, body: dict[str, Any]) -> str:
        name = body.get("lora_name")
        if name not in self.adapters:
            raise HTTPFailure(404, f"The lora adapter '{name}' cannot be found.")
        del self.adapters[name]
        self._drop_unused_slots()
        self.active = None
        return f"Success: LoRA adapter '{name}' removed successfully."

    def _drop_unused_slots(self) -> None:
        """Delete peft adapters no served name points at (peft keeps at least one: the base is
        served with adapters disabled anyway)."""
        used = {slot for _, slot in self.adapters.values()}
        unused = [s for s in self.peft.peft_config if s not in used]
        keep = next(iter(used), None) or (unused.pop() if unused else None)
        if keep is not None:
            self.peft.set_adapter(keep)
        for slot in unused:
            self.peft.delete_adapter(slot)

    # -- requests (HTTP threads) ------------------------------------------------------------
    def models(self) -> dict[str, Any]:
        data = [{"id": self.name, "object": "model", "root": self.path, "parent": None}]
        data += [
            {"id": n, "object": "model", "root": p, "parent": self.name}
            for n, (p, _) in self.adapters.items()
        ]
        return {"object": "list", "data": data}

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.received += 1
            if self.die_after is not None and self.received > self.die_after:
                os._exit(17)  # abruptly, mid-step: what a crashed server looks like
        model = body.get("model") or self.name
        if model != self.name and model not in self.adapters:
            raise HTTPFailure(404, f"The model `{model}` does not exist.")
        prompt = body.get("prompt")
        if not (isinstance(prompt, list) and prompt and all(isinstance(t, int) for t in prompt)):
            raise HTTPFailure(400, "the stand-in server takes one prompt of token ids")
        stop = body.get("stop") or ()
        try:
            sampling = SamplingParams(
                max_new_tokens=int(body.get("max_tokens") or 16),
                temperature=float(1.0 if body.get("temperature") is None else body["temperature"]),
                top_p=float(body.get("top_p") or 1.0),
                top_k=max(int(body.get("top_k") or 0), 0),
                stop=(stop,) if isinstance(stop, str) else tuple(stop),
            )
        except ValueError as exc:
            raise HTTPFailure(400, str(exc)) from exc
        key = (model, sampling)
        out = self.call(
            "complete",
            {
                "key": key,
                "model": model,
                "prompt": prompt,
                "seed": body.get("seed"),
                "sampling": sampling,
            },
        )
        choice: dict[str, Any] = {
            "index": 0,
            "text": out.text,
            "finish_reason": out.finish_reason,
        }
        if body.get("logprobs") is not None:
            as_ids = bool(body.get("return_tokens_as_token_ids"))
            choice["logprobs"] = {
                "tokens": [
                    f"token_id:{t}" if as_ids else self.tokenizer.decode([t]) for t in out.token_ids
                ],
                "token_logprobs": out.logprobs,
                "top_logprobs": [None] * len(out.token_ids),
                "text_offset": [],
            }
        if body.get("return_token_ids"):
            choice["token_ids"], choice["prompt_token_ids"] = out.token_ids, prompt
        return {
            "id": f"cmpl-{self.received}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": model,
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(prompt),
                "completion_tokens": len(out.token_ids),
                "total_tokens": len(prompt) + len(out.token_ids),
            },
        }

    def stats(self) -> dict[str, Any]:
        return {"completions": dict(self.served), "loaded": list(self.loaded)}


def handler_for(engine: Engine) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            return None  # quiet: one line per request would flood a test's output

        def _send(self, status: int, body: Any) -> None:
            raw = (body if isinstance(body, str) else json.dumps(body)).encode()
            self.send_response(status)
            self.send_header(
                "Content-Type", "text/plain" if isinstance(body, str) else "application/json"
            )
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _error(self, status: int, message: str) -> None:
            self._send(
                status,
                {"error": {"message": message, "type": "BadRequestError", "code": status}},
            )

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            routes = {
                "/health": lambda: "",
                "/v1/models": engine.models,
                "/standin/stats": engine.stats,
            }
            route = routes.get(self.path.split("?")[0])
            if route is None:
                self._error(404, f"no route {self.path}")
            else:
                self._send(200, route())

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            try:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?")[0]
                if path == "/v1/completions":
                    self._send(200, engine.completion(body))
                elif path == "/v1/load_lora_adapter":
                    self._send(200, engine.call("load", body))
                elif path == "/v1/unload_lora_adapter":
                    self._send(200, engine.call("unload", body))
                else:
                    self._error(404, f"no route {self.path}")
            except HTTPFailure as exc:
                self._error(exc.status, exc.message)
            except json.JSONDecodeError as exc:
                self._error(400, f"invalid JSON: {exc}")

    return Handler


def serve(
    model: str,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    served_name: str | None = None,
    die_after: int | None = None,
    threads: int = 0,
) -> None:
    """Load the model and serve until killed; prints `listening on http://HOST:PORT` once ready
    (port 0: a free port, the one chosen)."""
    if threads:
        import torch

        torch.set_num_threads(threads)
    engine = Engine(model, served_name, die_after)
    server = ThreadingHTTPServer((host, port), handler_for(engine))
    server.daemon_threads = True
    print(f"listening on http://{host}:{server.server_address[1]}", flush=True)
    server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.grpo.standin_server", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--model", required=True, help="a local model folder")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 = any free port")
    parser.add_argument(
        "--served-model-name", default=None, help="the base model's name (default: --model)"
    )
    parser.add_argument("--die-after", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    args = parser.parse_args(argv)
    serve(
        args.model,
        host=args.host,
        port=args.port,
        served_name=args.served_model_name,
        die_after=args.die_after,
        threads=args.threads,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
