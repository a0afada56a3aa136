"""A tiny Llama model and tokenizer built from scratch, so everything runs offline on a CPU.

    python -m training.tiny build DIR [--vocab-size 8192 --hidden 64 --layers 2 --heads 4 \
        --kv-heads 1 --seed 0]

The tokenizer is a byte-level BPE (any text encodes) trained on the shipped word lists and the
20Q question/answer language; the model is randomly initialised. Both are saved with
`save_pretrained`, so `AutoTokenizer/AutoModelForCausalLM.from_pretrained(DIR)` load them.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import asdict, dataclass
from pathlib import Path

from games import rules

WORDLISTS = Path(__file__).resolve().parent.parent / "games" / "data" / "wordlists"

BOS, EOT, PAD = "<|bos|>", "<|end|>", "<|pad|>"
ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>")

# Role markers are literal tokens; `{% generation %}` marks what the assistant produced, so
# `apply_chat_template(..., return_assistant_tokens_mask=True)` works for SFT. (transformers
# renders with trim_blocks, hence the newline after `endgeneration` written as an expression.)
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% if message['role'] == 'system' %}<|system|>\n{{ message['content'] }}<|end|>\n"
    "{% elif message['role'] == 'user' %}<|user|>\n{{ message['content'] }}<|end|>\n"
    "{% elif message['role'] == 'assistant' %}<|assistant|>\n"
    "{% generation %}{{ message['content'] }}<|end|>{% endgeneration %}{{ '\\n' }}"
    "{% else %}{{ raise_exception('unknown role: ' + message['role']) }}{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

QUESTION_TEMPLATES = (
    "Is it a kind of {w}?",
    "Is it a {w}?",
    "Is it an {w}?",
    "Does it have a {w}?",
    "Does it have {w}?",
    "Is it part of a {w}?",
    "Is it made of {w}?",
    "Is it used for {w}?",
    "Is it found in a {w}?",
    "Is it related to {w}?",
    "Is it '{w}'?",
    "Is the secret {w}?",
    "Can you find it in a {w}?",
)
GENERIC_QUESTIONS = (
    "Is it a living thing?",
    "Is it an animal?",
    "Is it a plant?",
    "Is it a person?",
    "Is it an object?",
    "Is it man-made?",
    "Is it bigger than a breadbox?",
    "Can you hold it in your hand?",
    "Is it edible?",
    "Is it found indoors?",
    "Is it an abstract concept?",
    "Is it a place?",
    "Is it an event?",
    "Is it used every day?",
    "Does it use electricity?",
    "Is it a tool?",
    "Is it a feeling?",
)


@dataclass(frozen=True)
class TinyConfig:
    """Size of the tiny model and its tokenizer."""

    vocab_size: int = 8192  # BPE target; the model uses the trained tokenizer's actual size
    hidden: int = 64
    layers: int = 2
    heads: int = 4
    # Grouped-query attention, 4 query heads per key/value head as in Llama 3: a small KV cache,
    # which is what batched rollouts on a CPU spend their time reading.
    kv_heads: int = 1
    intermediate: int = 256
    max_positions: int = 4096
    seed: int = 0

    def __post_init__(self) -> None:
        if self.vocab_size < 512:
            raise ValueError("vocab_size must be >= 512 (256 byte symbols plus merges)")
        if self.hidden % self.heads or self.heads % self.kv_heads:
            raise ValueError("hidden must be divisible by heads, and heads by kv_heads")
        if min(self.layers, self.intermediate, self.max_positions) < 1:
            raise ValueError("layers, intermediate and max_positions must be >= 1")


def load_words() -> list[str]:
    """Every word in the shipped word lists, lowercased and deduplicated, in a stable order."""
    words: set[str] = set()
    for path in sorted(WORDLISTS.glob("*/*.txt")):
        words.update(
            rules.clean_word(w) for w in path.read_text(encoding="utf-8").splitlines() if w.strip()
        )
    for path in sorted(WORDLISTS.glob("*/*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            words.update(rules.clean_word(part) for part in line.split("\t") if part.strip())
    return sorted(words)


def corpus(words: list[str], seed: int = 0) -> list[str]:
    """The tokenizer's training text: 20Q questions, answers, feedback and prompts."""
    from games import rules
    from games.llm import chat

    rng = random.Random(seed)
    lines = [
        chat.GUESSER_SYSTEM_PROMPT,
        chat.GUESSER_PROMPT,
        chat.JUDGE_SYSTEM_PROMPT,
        chat.JUDGE_PROMPT,
        *rules.VERDICT_FEEDBACK.values(),
        *GENERIC_QUESTIONS,
        "<answer>Yes</answer>",
        "<answer>No</answer>",
        "<answer>Invalid</answer>",
        "<answer>Finished</answer>",
    ]
    for word in words:
        lines.append(word)
        lines.extend(t.format(w=word) for t in rng.sample(QUESTION_TEMPLATES, 3))
        lines.append(rng.choice(("Yes.", "No.", "I don't know.")))
    return lines


def build_tokenizer(words: list[str], config: TinyConfig):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    # Punctuation is split off before the byte-level split, so "'cat'" tokenises "cat" on its own.
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Punctuation("isolated"), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tok.decoder = decoders.ByteLevel()
    specials = [PAD, BOS, EOT, *ROLE_TOKENS]
    trainer = trainers.BpeTrainer(
        vocab_size=config.vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(
        corpus(words), trainer=trainer
    )  # the same vocabulary for every model seed
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOT,
        pad_token=PAD,
        additional_special_tokens=list(ROLE_TOKENS),
        chat_template=CHAT_TEMPLATE,
        padding_side="left",
        model_max_length=config.max_positions,
    )


def build_tiny_model(out_dir: str | Path, **overrides) -> Path:
    """Build and save the tiny tokenizer + randomly initialised Llama model; returns `out_dir`."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    config = TinyConfig(**overrides)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(load_words(), config)
    model_config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden,
        intermediate_size=config.intermediate,
        num_hidden_layers=config.layers,
        num_attention_heads=config.heads,
        num_key_value_heads=config.kv_heads,
        max_position_embeddings=config.max_positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        model = LlamaForCausalLM(model_config)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    tokenizer.save_pretrained(out)
    model.save_pretrained(out)
    (out / "tiny_config.json").write_text(json.dumps(asdict(config), indent=2) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.tiny", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="build the tiny model and tokenizer into DIR")
    build.add_argument("dir")
    defaults = TinyConfig()
    for name in (
        "vocab_size",
        "hidden",
        "layers",
        "heads",
        "kv_heads",
        "intermediate",
        "max_positions",
        "seed",
    ):
        build.add_argument(f"--{name.replace('_', '-')}", type=int, default=getattr(defaults, name))
    args = parser.parse_args(argv)
    overrides = {k: v for k, v in vars(args).items() if k not in ("command", "dir")}
    out = build_tiny_model(args.dir, **overrides)
    print(json.dumps({"dir": str(out), **overrides}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
