"""The pretrained judge: a cross-encoder on a pretrained base model (`minilm-l6`, see
games.base_models) fine-tuned on a reference judge's answers (training.judge.cross_encoder).

It reads the pair (secret, question) as one sequence, `[CLS] pebble [SEP] Can you hold it in
your hand? [SEP]`, where the secret's side may carry its knowledge-base definition
("pebble: a small smooth rounded rock"), and a linear head turns the encoder's reading into the
logit of yes. What ships is small: a LoRA adapter and the head (`adapter/`), and `judge.json`
(the base's name, the input format, the calibration and the held-out figures); the base weights
come from the base model's folder, never a second copy.

A folder may combine the cross-encoder with the shipped learned judge (games.judges.learned, the
knowledge base's facts): p = sigmoid(a·logit + b·logit_learned + c), the weights fitted on
validation secrets; for a secret the knowledge base does not know, p = sigmoid(logit / T). Both
are calibrated on validation secrets by likelihood, so "Yes · 87%" means about 87 in 100 such
answers are yes by the reference. Answers are cached per (secret, question): games repeat
questions. torch and transformers are imported when a judge is built, not when this module is.

Precision (games.precision): `auto` reads at bfloat16 where the CPU has bf16 units (the merged
weights cast to bf16 once; the logits come back float32) and float32 elsewhere; pairs are batched
by their token count, so a batch pads to little more than its longest pair. On a 2-core
AVX512-BF16 CPU that is 2.56x float32's pairs/s and changes none of 1,536 validation answers
(bench.compute's judge part; games.judge_eval.precision_flips).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from games import precision as precisions
from games.judges.base import Judge, JudgeRequest, probability_answer
from games.types import JudgeAnswer, Verdict

DEFAULT_DIR = Path(__file__).resolve().parents[1] / "data" / "judges" / "pretrained"
META_FILE = "judge.json"
ADAPTER_DIR = "adapter"
FORMAT = 1  # bumped when the input or the files change
INPUTS = ("word", "word+gloss")  # what the secret's side of the pair reads
MAX_CACHED = 200_000
REBUILD = "python -m training.judge.cross_encoder --out {path}"


class PretrainedJudgeError(RuntimeError):
    """The pretrained judge's folder is missing, unreadable, of another format, or its base model
    cannot be loaded; the text says what to do."""


def _error(path: Path, what: str) -> PretrainedJudgeError:
    return PretrainedJudgeError(
        f"the pretrained judge {path} {what}; retrain it with `{REBUILD.format(path=path)}` "
        "or from the dashboard (a judge job with model=pretrained)"
    )


def read_meta(folder: str | Path | None = None) -> dict:
    """What a judge folder says of itself ({} when it has no readable judge.json)."""
    try:
        meta = json.loads((Path(folder or DEFAULT_DIR) / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def secret_text(secret: str, input_format: str, kb=None) -> str:
    """The secret's side of the pair: the word, or the word and its dominant senses' definitions
    (two at most) when the knowledge base knows it."""
    word = " ".join(str(secret).split())[:100]
    if input_format != "word+gloss":
        return word
    definitions = (kb.definitions(word) if kb is not None else [])[:2]
    return f"{word}: {'; '.join(definitions)}" if definitions else word


class CrossEncoder:
    """The base model with the adapter merged in, in eval mode, at `precision` (resolved for the
    CPU: a judge reads batches); `logits` of (first, second) text pairs, batched by token count,
    cached, thread-safe. float32 by default: training calibrates on float32 logits."""

    def __init__(self, folder: Path, precision: str = "float32"):
        self.folder = folder
        self.precision = precisions.resolve(precision, "cpu")
        self.meta = read_meta(folder)
        if not self.meta:
            raise _error(folder, f"has no readable {META_FILE}")
        if self.meta.get("format") != FORMAT:
            raise _error(folder, f"is of format {self.meta.get('format')!r}, not {FORMAT}")
        self.input = self.meta.get("input", "word")
        if self.input not in INPUTS:
            raise _error(folder, f"reads an unknown input {self.input!r}")
        self.max_length = int(self.meta.get("max_length", 64))
        self.temperature = float(self.meta.get("temperature", 1.0))
        self.threshold = float(self.meta.get("threshold", 0.5))
        self.batch_size = int(self.meta.get("batch_size", 128))
        self.model, self.tokenizer = self._load()
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str], float] = OrderedDict()

    def _load(self):
        from games.base_models import BaseModelError, resolve_model

        base = self.meta.get("base_model", "")
        try:
            base_path = resolve_model(base)
        except BaseModelError as err:
            raise PretrainedJudgeError(str(err)) from err
        adapter = self.folder / ADAPTER_DIR
        if not (adapter / "adapter_config.json").is_file():
            raise _error(self.folder, f"has no {ADAPTER_DIR}/adapter_config.json")
        try:
            return load_cross_encoder(base_path, str(adapter), precision=self.precision)
        except Exception as err:  # a truncated file, a base of another shape, ...
            raise _error(self.folder, f"cannot be loaded ({type(err).__name__}: {err})") from err

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """The model's logit of yes for each (secret text, question) pair."""
        out = np.zeros(len(pairs), dtype=np.float32)
        todo: dict[tuple[str, str], list[int]] = {}
        with self._lock:
            for i, pair in enumerate(pairs):
                found = self._cache.get(pair)
                if found is None:
                    todo.setdefault(pair, []).append(i)
                else:
                    self._cache.move_to_end(pair)
                    out[i] = found
        if not todo:
            return out
        unique = list(todo)
        values = self._forward(unique)
        with self._lock:
            for pair, value in zip(unique, values.tolist()):
                for i in todo[pair]:
                    out[i] = value
                self._cache[pair] = value
            while len(self._cache) > MAX_CACHED:
                self._cache.popitem(last=False)
        return out

    def _forward(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        import torch

        encoded = self.tokenizer(
            [first for first, _ in pairs],
            [second for _, second in pairs],
            truncation="longest_first",
            max_length=self.max_length,
        )
        lengths = [len(ids) for ids in encoded["input_ids"]]
        order = sorted(range(len(pairs)), key=lengths.__getitem__)
        out = np.zeros(len(pairs), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                batch = self.tokenizer.pad(
                    {key: [values[i] for i in chunk] for key, values in encoded.items()},
                    return_tensors="pt",
                )
                out[chunk] = self.model(**batch).logits[:, 0].float().numpy()
        return out

    def p_yes(self, logits: np.ndarray) -> np.ndarray:
        """Calibrated probabilities of yes."""
        return 1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64) / self.temperature))


def load_cross_encoder(base_path: str, adapter: str | None, *, precision: str = "float32"):
    """(model, tokenizer): the base as a one-logit sequence classifier, with a peft LoRA adapter
    (and the head it saved in full) merged in when given (in float32); eval mode, CPU, its weights
    then in `precision` (float32 or bfloat16). At bf16 the attention is the plain one: on a
    pair's dozen tokens it is 1.07-1.4x faster than sdpa's flash kernel there (bench.compute's
    judge part); at float32 the two are about even."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    tokenizer = AutoTokenizer.from_pretrained(base_path, local_files_only=True)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the head is new by design: no "newly initialized" report
    hf_logging.disable_progress_bar()  # no "Loading weights" bar in a server's log
    try:
        attention = {"attn_implementation": "eager"} if precision == "bfloat16" else {}
        model = AutoModelForSequenceClassification.from_pretrained(
            base_path, num_labels=1, local_files_only=True, **attention
        )
    finally:
        hf_logging.set_verbosity(verbosity)
    if adapter:
        merge_lora(model, Path(adapter))
    return model.to(precisions.torch_dtype(precision)).eval(), tokenizer


PEFT_PREFIX = "base_model.model."


def merge_lora(model, adapter: Path) -> None:
    """Merge a peft LoRA adapter folder into `model` in place: W += (α / r) · B A for each adapted
    linear layer, and the modules peft saved whole (`modules_to_save`: the head) copied in. What
    peft's `merge_and_unload` computes, without importing peft (2.4 s of a 5 s budget to load)."""
    import torch
    from safetensors.torch import load_file

    settings = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))
    unsupported = [
        key
        for key in ("use_dora", "use_rslora", "fan_in_fan_out", "rank_pattern", "alpha_pattern")
        if settings.get(key)
    ]
    if settings.get("peft_type") != "LORA" or unsupported:
        raise ValueError(f"not a plain LoRA adapter ({settings.get('peft_type')}, {unsupported})")
    scale = float(settings["lora_alpha"]) / float(settings["r"])
    tensors = load_file(str(adapter / "adapter_model.safetensors"))
    parameters = dict(model.named_parameters())
    merged = set()
    with torch.no_grad():
        for key, value in tensors.items():
            name = key.removeprefix(PEFT_PREFIX)
            if ".lora_A." in name:
                module = name.split(".lora_A.")[0]
                b = tensors[key.replace(".lora_A.", ".lora_B.")]
                parameters[f"{module}.weight"] += scale * (b.float() @ value.float())
                merged.add(module)
            elif ".lora_B." not in name:
                if name not in parameters:
                    raise ValueError(f"the adapter's {name} is not a parameter of the base")
                parameters[name].copy_(value)
    if not merged:
        raise ValueError("the adapter has no LoRA weights")


_encoders: dict[tuple[Path, str], CrossEncoder] = {}
_encoders_lock = threading.Lock()


def load_cross_encoder_folder(
    folder: str | Path | None = None, precision: str = "auto"
) -> CrossEncoder:
    """The judge folder's model at `precision`, loaded once per process, folder and resolved
    precision."""
    folder = Path(folder or DEFAULT_DIR).resolve()
    key = (folder, precisions.resolve(precision, "cpu"))
    with _encoders_lock:
        if key not in _encoders:
            if not folder.is_dir():
                raise _error(folder, "does not exist")
            _encoders[key] = CrossEncoder(folder, key[1])
        return _encoders[key]


def combined_p_yes(logits: np.ndarray, learned_p: np.ndarray, weights: dict) -> np.ndarray:
    """sigmoid(a·logit + b·logit(learned P(yes)) + c) with the folder's fitted weights."""
    q = np.clip(np.asarray(learned_p, dtype=np.float64), 1e-6, 1 - 1e-6)
    z = (
        weights["pretrained"] * np.asarray(logits, dtype=np.float64)
        + weights["learned"] * np.log(q / (1 - q))
        + weights["bias"]
    )
    return 1.0 / (1.0 + np.exp(-z))


class PretrainedJudge(Judge):
    """Yes when the calibrated P(yes) reaches the folder's threshold, else no; `unknown` only for
    a question with no words (or within `abstain` of the threshold, when asked to)."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        abstain: float = 0.0,
        name: str | None = None,
        precision: str = "auto",
    ):
        self.model = load_cross_encoder_folder(path, precision)
        self.precision = self.model.precision  # what it reads at: float32 or bfloat16
        if not 0.0 <= abstain < 0.5:
            raise ValueError(f"abstain must be in [0, 0.5), got {abstain}")
        self.abstain = abstain
        self.name = name or ("pretrained" if path is None else f"pretrained:{path}")
        self._kb = None
        if self.model.input == "word+gloss":
            from games.kb import load_kb

            self._kb = load_kb()
        self.combine = self.model.meta.get("combine") or None
        self.learned = None
        if self.combine:
            from games.judges.learned import WeightsError, load_model

            try:
                self.learned = load_model(self.combine.get("path") or None)
            except WeightsError as err:
                raise PretrainedJudgeError(
                    f"the pretrained judge {self.model.folder} combines the learned judge, which "
                    f"cannot be loaded: {err}"
                ) from err

    def secret_text(self, secret: str) -> str:
        return secret_text(secret, self.model.input, self._kb)

    def p_yes(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Calibrated P(yes) of (secret, question) pairs."""
        texts = {s: self.secret_text(s) for s in {s for s, _ in pairs}}
        logits = self.model.logits([(texts[s], q) for s, q in pairs])
        p = self.model.p_yes(logits)
        if self.learned is None or not len(pairs):
            return p
        nouns = {s: self.learned.featurizer.kb.lookup(s) for s in texts}
        known = [i for i, (s, _) in enumerate(pairs) if nouns[s] is not None]
        if known:
            other = self.learned.p_yes([(nouns[pairs[i][0]], pairs[i][1]) for i in known])
            p[known] = combined_p_yes(logits[known], other, self.combine["weights"])
        return p

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        answers: list[JudgeAnswer | None] = [None] * len(requests)
        todo = []
        for i, r in enumerate(requests):
            if not isinstance(r.secret, str) or not r.secret.strip():
                answers[i] = JudgeAnswer(Verdict.UNKNOWN, raw="unknown: no secret")
            elif not isinstance(r.question, str) or not any(c.isalnum() for c in r.question):
                answers[i] = JudgeAnswer(Verdict.UNKNOWN, raw="unknown: no words to read")
            else:
                todo.append(i)
        try:
            probabilities = self.p_yes(
                [(requests[i].secret, requests[i].question[:1000]) for i in todo]
            )
        except Exception as err:  # a judge must answer whatever it is given
            for i in todo:
                answers[i] = JudgeAnswer(Verdict.UNKNOWN, raw=f"error: {type(err).__name__}")
            return answers  # type: ignore[return-value]
        for i, p in zip(todo, probabilities.tolist()):
            answers[i] = self._answer(p)
        return answers  # type: ignore[return-value]

    def _answer(self, p: float) -> JudgeAnswer:
        return probability_answer(p, self.model.threshold, self.abstain, "pretrained")
