"""rollout_backend=server on the CPU: GRPO against the stand-in generation server (a real HTTP
server process speaking vLLM's OpenAI-compatible subset, the tiny model inside), with the adapter
loaded into it after every update, and a server that dies in the middle of a step."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from training.grpo import trainer as grpo_trainer
from training.grpo.config import GRPOConfig
from training.grpo.rollouts import RolloutServerError
from training.reporting import ConsoleReporter

WORDS = ["dog", "cat", "apple", "table"]
ROOT = Path(__file__).resolve().parents[3]


def start_server(model_dir, log: Path, port: int = 0, die_after: int | None = None):
    """(the process, its URL) once it listens; port 0: a free one."""
    command = [sys.executable, "-m", "training.grpo.standin_server", "--model", str(model_dir)]
    command += ["--port", str(port), "--threads", "1"]
    if die_after is not None:
        command += ["--die-after", str(die_after)]
    env = {**os.environ, "TRANSFORMERS_VERBOSITY": "error", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log.open("a"), text=True
    )
    line = proc.stdout.readline()  # the server prints it once it is ready
    if not line.startswith("listening on "):
        proc.kill()
        raise AssertionError(f"the stand-in server did not start: {line!r}\n{log.read_text()}")
    return proc, line.split()[-1]


def stop(proc) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)


def stats(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/standin/stats", timeout=10) as answer:
        return json.loads(answer.read())


def config(url: str, **overrides) -> GRPOConfig:
    values = dict(
        base_model="unused",
        rollout_backend="server",
        rollout_server=url,
        steps=2,
        secrets_per_step=2,
        num_generations=2,
        max_turns=2,
        max_completion_length=6,
        learning_rate=3e-2,  # large: the second step's policy is visibly another one
        belief_coef=0.0,
        num_iterations=1,
        mini_batches=1,
        save_steps=1,
        cpu_threads=1,
        precision="float32",  # the server samples at float32: its log-probs are compared below
        val_secrets=0,
        seed=3,
    )
    values.update(overrides)
    return GRPOConfig(**values)


def metrics(reporter: ConsoleReporter) -> list[dict]:
    return [r for r in reporter.records if r["event"] == "metrics"]


def test_rollouts_come_from_the_server_with_the_adapter_of_every_update(
    grpo_tiny_dir, tmp_path, monkeypatch
):
    # The tiny model's games all earn the same reward (advantages 0: no update at all); fixed
    # ±1 advantages make every update move the policy, which is what this test follows.
    monkeypatch.setattr(
        grpo_trainer,
        "step_advantages",
        lambda config, games, groups: [
            [1.0 if i % 2 else -1.0] * game.n_turns for i, game in enumerate(games)
        ],
    )
    proc, url = start_server(grpo_tiny_dir, tmp_path / "server.log")
    try:
        reporter = ConsoleReporter(tmp_path / "run", stream=io.StringIO())
        result = grpo_trainer.run(config(url), reporter, model_path=str(grpo_tiny_dir), words=WORDS)
        served = stats(url)
        # run again (a worker that died after its last step): the run resumes at its end and
        # pushes its adapter again, replacing the one its first attempt left on the server
        again = grpo_trainer.run(
            config(url),
            ConsoleReporter(tmp_path / "run", stream=io.StringIO()),
            model_path=str(grpo_tiny_dir),
            words=WORDS,
        )
        listed = [
            m["id"] for m in json.loads(urllib.request.urlopen(f"{url}/v1/models").read())["data"]
        ]
    finally:
        stop(proc)
    assert again["resumed_from"] == 2
    assert listed == [str(grpo_tiny_dir), served["loaded"][-1]]  # one adapter, loaded once more
    assert result["global_step"] == 2
    names = served["loaded"]
    # the start's adapter, then the adapter after each update, each loaded once, in order
    assert [n.rsplit("-", 1)[-1] for n in names] == ["0", "1", "2"], names
    # step 1 sampled from the start's adapter, step 2 from the one after update 1; not the base
    steps = metrics(reporter)
    assert served["completions"].get(str(grpo_tiny_dir), 0) == 0
    assert set(served["completions"]) == {names[0], names[1]}
    for m, name in zip(steps, names):  # one completion per question asked in the step
        assert served["completions"][name] == round(m["mean_turns"] * 4), (m["step"], served)
    # The server's log-probs of the tokens it sampled are the trainer's own log-probs of them
    # under the weights it holds: at step 2 only if the server sampled with update 1's adapter
    # (the update moved the policy: see the check below). The rows are the server's token ids.
    for m in steps:
        assert m["logprob_diff/rollout_abs_mean"] < 1e-4, m["logprob_diff/rollout_abs_mean"]
        assert m["time/weight_sync_s"] > 0
    folders = sorted(p.name for p in (tmp_path / "run" / "rollout-adapters").iterdir())
    assert folders == ["step-2"]  # older adapters are removed once the server has the new one


def test_a_server_that_dies_mid_step_stops_the_run_naming_it_and_the_run_resumes(
    grpo_tiny_dir, tmp_path
):
    log = tmp_path / "server.log"
    # step 1 asks at most 2 × 2 games × 2 turns = 8 questions: the 10th request is in step 2
    proc, url = start_server(grpo_tiny_dir, log, die_after=9)
    port = int(url.rsplit(":", 1)[-1])
    out = tmp_path / "run"
    began = time.monotonic()
    try:
        with pytest.raises(RolloutServerError) as failure:
            grpo_trainer.run(
                config(url),
                ConsoleReporter(out, stream=io.StringIO()),
                model_path=str(grpo_tiny_dir),
                words=WORDS,
            )
    finally:
        stop(proc)
    message = str(failure.value)
    assert url in message and "step 2" in message and "resume" in message, message
    assert proc.returncode == 17  # it died (the stand-in's abrupt exit), it was not stopped
    assert time.monotonic() - began < 60  # the retries give up in seconds
    assert (out / "checkpoint-1").is_dir() and not (out / "checkpoint-2").exists()

    proc, url2 = start_server(grpo_tiny_dir, log, port=port)  # the server is back
    try:
        reporter = ConsoleReporter(out, stream=io.StringIO())
        result = grpo_trainer.run(config(url), reporter, model_path=str(grpo_tiny_dir), words=WORDS)
        served = stats(url2)
    finally:
        stop(proc)
    assert url2 == url
    assert result["resumed_from"] == 1 and result["global_step"] == 2
    assert [m["step"] for m in metrics(reporter)] == [2]
    # the new server got the checkpoint's adapter, then update 2's; step 2 sampled from the first
    assert [n.rsplit("-", 1)[-1] for n in served["loaded"]] == ["1", "2"]
    assert set(served["completions"]) == {served["loaded"][0]}
    assert (out / "checkpoint-2").is_dir()


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"rollout_backend": "server"}, "needs rollout_server"),
        ({"rollout_backend": "server", "rollout_server": "gen:8000"}, "needs rollout_server"),
        ({"rollout_backend": "server", "rollout_server": "http://gen:99999"}, "rollout_server"),
        ({"rollout_backend": "server", "rollout_server": "http://gen:80", "lora": False}, "lora"),
        ({"rollout_server": "http://gen:8000"}, "rollout_backend is transformers"),
    ],
)
def test_config_server_backend_needs_a_url_and_lora(bad, match):
    with pytest.raises(ValueError, match=match):
        GRPOConfig(**bad)


def test_config_takes_a_server_url_and_keeps_the_other_backends():
    assert GRPOConfig(rollout_backend="server", rollout_server="https://gen:8000/v1").rollout_server
    assert GRPOConfig().rollout_backend == "transformers" and GRPOConfig().rollout_server == ""
    assert GRPOConfig(rollout_backend="vllm").rollout_backend == "vllm"


def test_the_client_keeps_the_sampled_token_ids_and_refuses_another_prompt():
    """What vLLM answers: token ids from `return_token_ids`, or from `token_id:N` tokens on a
    server without it; a prompt other than the one sent would put other tokens in the rows."""
    from games.llm.base import BackendError, SamplingParams
    from games.llm.vllm_server import VLLMServerBackend

    backend = VLLMServerBackend("http://gen:8000/v1", None, model="a")
    assert backend.url == "http://gen:8000"
    sampling = SamplingParams(max_new_tokens=4)
    logprobs = {"tokens": ["token_id:7", "token_id:2"], "token_logprobs": [-0.5, -1.5]}
    answer = {"choices": [{"text": "x?", "logprobs": logprobs, "finish_reason": "stop"}]}
    got = backend._generation(answer, [1, 2, 3], sampling)
    assert (got.token_ids, got.logprobs, got.prompt_token_ids) == ([7, 2], [-0.5, -1.5], [1, 2, 3])
    answer["choices"][0].update(token_ids=[7, 9], prompt_token_ids=[1, 2, 3])
    assert backend._generation(answer, [1, 2, 3], sampling).token_ids == [7, 9]
    answer["choices"][0]["prompt_token_ids"] = [0, 1, 2, 3]  # a BOS added by the server
    with pytest.raises(BackendError, match="other prompt token ids"):
        backend._generation(answer, [1, 2, 3], sampling)
    del answer["choices"][0]["token_ids"], answer["choices"][0]["prompt_token_ids"]
    answer["choices"][0]["logprobs"] = {"tokens": ["x", "?"], "token_logprobs": [-1, -1]}
    with pytest.raises(BackendError, match="no generated token ids"):
        backend._generation(answer, [1, 2, 3], sampling)
