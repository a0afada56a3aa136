"""How much memory a model's keys and values take, and how much there is to hold them.

Reads only the model's config and dtype (and torch lazily, for a GPU's free memory): importing
this module imports no torch.
"""

from __future__ import annotations

from typing import Any

KV_SLACK = 1.25  # buffers hold padding beyond the tokens they are counted by


def kv_bytes_per_token(model: Any) -> int:
    """Keys and values of one token over every layer, at the model's dtype."""
    config = model.config
    layers = config.num_hidden_layers
    heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return 2 * layers * heads * head_dim * model.dtype.itemsize


def available_memory_bytes(model: Any = None) -> int | None:
    """The free memory of the model's GPU, else MemAvailable of /proc/meminfo (None where there
    is none)."""
    device = getattr(model, "device", None)
    if getattr(device, "type", None) == "cuda":
        import torch

        return int(torch.cuda.mem_get_info(device)[0])
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None
