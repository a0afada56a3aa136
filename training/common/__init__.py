"""Shared by the knowledge, SFT and DPO runners (and GRPO): configs, model loading, LoRA,
chat tokenisation with a loss mask, game data, and the glue between TRL trainers and a Reporter.

Importing this package is cheap: torch, transformers and TRL load inside the functions that use
them (`config` and `data` never import them).
"""
