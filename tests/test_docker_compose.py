"""Docker does not run here: check that docker-compose.yml points at real things."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
# variables consumed by the images themselves, not by our settings
IMAGE_VARIABLES = {
    "POSTGRES_DB",
    "POSTGRES_USER",
    "POSTGRES_PASSWORD",
    "NVIDIA_VISIBLE_DEVICES",
    "DJANGO_SETTINGS_MODULE",
    "VLLM_ALLOW_RUNTIME_LORA_UPDATING",  # vLLM's: /v1/load_lora_adapter on
    "HF_HUB_OFFLINE",  # huggingface_hub's: never download
}


def settings_variables() -> set[str]:
    pattern = re.compile(
        r"""(?:env\.(?:str|bool|int|list)|require|url_setting|int_setting|database_setting)\(\s*"([A-Z_]+)\""""
    )
    found = set()
    for path in (ROOT / "webapp" / "settings").glob("*.py"):
        found.update(pattern.findall(path.read_text()))
    return found


def test_expected_services_exist_with_health_checks():
    assert {"postgres", "redis", "web", "worker-cpu", "worker-gpu", "beat", "flower"} <= set(
        SERVICES
    )
    for name in ("postgres", "redis", "web", "worker-cpu", "worker-gpu"):
        assert "healthcheck" in SERVICES[name], name


def test_every_environment_variable_is_a_real_setting():
    known = settings_variables()
    assert {
        "DATABASE_URL",
        "REDIS_URL",
        "CELERY_BROKER_URL",
        "SECRET_KEY",
        "ALLOWED_HOSTS",
        "DATA_DIR",
    } <= known
    for name, service in SERVICES.items():
        for var in service.get("environment", {}) or {}:
            assert var in known or var in IMAGE_VARIABLES, (
                f"{name}: {var} is not read by any setting"
            )
        module = (service.get("environment") or {}).get("DJANGO_SETTINGS_MODULE")
        if module:
            assert (ROOT / (module.replace(".", "/") + ".py")).exists()


def test_every_command_points_at_a_real_entry_point():
    from django.core.management import get_commands

    commands = get_commands()
    for name, service in SERVICES.items():
        command = service.get("command")
        if not command:
            continue
        words = command if isinstance(command, list) else command.split()
        text = " ".join(words)
        if words[0] == "gunicorn":
            module, attr = words[1].split(":")
            assert callable(getattr(importlib.import_module(module), attr))
        if "celery" in words:
            module, attr = words[words.index("-A") + 1].split(":")
            app = getattr(importlib.import_module(module), attr)
            if "-Q" in words:
                queues = set(words[words.index("-Q") + 1].split(","))
                assert queues <= {q.name for q in app.conf.task_queues}, name
        for manage_command in re.findall(r"manage\.py (\w+)", text):
            assert manage_command in commands, f"{name}: manage.py {manage_command}"
    gpu = SERVICES["worker-gpu"]
    assert gpu.get("runtime") == "nvidia" and (ROOT / gpu["build"]["dockerfile"]).exists()
    assert "vllm" in (ROOT / "requirements" / "gpu.in").read_text()


def test_generation_service_serves_a_built_in_model_to_the_gpu_worker():
    """GRPO's rollout_backend=server: vLLM's OpenAI-compatible server from the GPU image, with
    runtime LoRA loading, a model folder the image builds, the adapters' volume, and the GPU
    worker pointed at it."""
    from games.base_models import BASE_MODELS

    gen = SERVICES["generation"]
    assert gen["image"] == SERVICES["worker-gpu"]["image"] and gen.get("runtime") == "nvidia"
    assert gen["build"] == SERVICES["worker-gpu"]["build"]  # the image with vLLM in it
    assert "vllm" in (ROOT / "requirements" / "gpu.in").read_text()
    words = gen["command"]
    assert words[:2] == ["vllm", "serve"] and "--enable-lora" in words
    assert words[words.index("--max-lora-rank") + 1] == "64"  # GRPOConfig's default lora_rank
    assert words[words.index("--logprobs-mode") + 1] == "processed_logprobs"
    model = re.fullmatch(r"\$\{GENERATION_MODEL:-(.+)\}", words[2]).group(1)
    assert model.startswith("/app/var/base-models/")  # where Dockerfile.gpu builds them
    assert model.rsplit("/", 1)[-1] in BASE_MODELS
    assert "training.base_models build" in (ROOT / "Dockerfile.gpu").read_text()
    env = gen["environment"]
    assert env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "True" and env["HF_HUB_OFFLINE"] == "1"
    # the adapters the trainer writes under DATA_DIR are on the volume the server reads
    assert (
        "appdata:/data" in gen["volumes"] and "appdata:/data" in SERVICES["worker-gpu"]["volumes"]
    )
    assert "healthcheck" in gen and "/health" in " ".join(gen["healthcheck"]["test"])
    port = words[words.index("--port") + 1]
    url = SERVICES["worker-gpu"]["environment"]["GENERATION_SERVER_URL"]
    assert url == f"http://generation:{port}"
    from training.grpo.config import GRPOConfig

    GRPOConfig(rollout_backend="server", rollout_server=url)  # a URL the config takes


def test_gpu_nodes_bound_the_processes_of_a_job_and_give_nccl_shared_memory():
    """A job's `processes` (its GPUs) is bounded by the GPUs of one node, GPU_PROCESSES in .env,
    for the web (refused before queueing) and the workers (refused before launching) alike; the
    GPU worker runs one job at a time, its ranks under torchrun, with room for NCCL in /dev/shm."""
    env = COMPOSE["x-app"]["environment"]
    assert env["JOBS_MAX_PROCESSES"] == "${GPU_PROCESSES:-1}"
    for name in ("web", "worker-cpu", "worker-gpu"):
        assert SERVICES[name]["environment"]["JOBS_MAX_PROCESSES"] == "${GPU_PROCESSES:-1}", name
    gpu = SERVICES["worker-gpu"]
    words = gpu["command"]
    assert words[words.index("--concurrency") + 1] == "1"
    assert int(gpu["shm_size"].removesuffix("gb")) >= 1
    assert (ROOT / "workers" / "rank.py").is_file()  # the ranks' entry point the worker starts
