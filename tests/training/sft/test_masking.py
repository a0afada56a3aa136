"""Which tokens turn-level SFT trains: checked by hand on a 2-turn example, in TRL's prepared
dataset (what the trainer really sees) and in training.common.chat (shared with GRPO)."""

from __future__ import annotations

import copy

import pytest

from games.llm.base import encode_prompt
from games.llm.chat import GuesserFormat
from games.types import Verdict
from tests.training.sft.helpers import trajectory
from training.common.chat import IGNORE, encode_chat, encode_prompt_completion
from training.common.models import DeviceSetup, has_generation_markers, load_model
from training.sft.config import SFTJobConfig
from training.sft.data import turn_examples

CPU = DeviceSetup("cpu", "float32")


@pytest.fixture(scope="module")
def model_and_tokenizer(tiny_dir):
    return load_model(str(tiny_dir))


@pytest.fixture(scope="module")
def two_turn_example():
    game = trajectory(
        "dog", [("Is it an animal?", Verdict.YES), ("Is it a dog?", Verdict.FINISHED)]
    )
    return turn_examples([game], GuesserFormat())[1]  # context: system, prompt, question 1, "Yes."


def _trained(ids, labels):
    return [(i, t) for i, (t, lab) in enumerate(zip(ids, labels)) if lab != IGNORE]


def test_trl_labels_mask_exactly_the_context(model_and_tokenizer, two_turn_example, tmp_path):
    from training.sft.trainer import build_sft_trainer

    model, tok = model_and_tokenizer
    config = SFTJobConfig(base_model="x", global_batch_size=8, max_steps=1)
    trainer = build_sft_trainer(
        config, copy.deepcopy(model), tok, [two_turn_example], output_dir=tmp_path, setup=CPU
    )
    row = trainer.train_dataset[0]
    ids, labels = row["input_ids"], row["labels"]
    text = tok.decode(ids)
    assert text.endswith(
        "<|assistant|>\nIs it an animal?<|end|>\n<|user|>\nYes.<|end|>\n"
        "<|assistant|>\nIs it a dog?<|end|>\n"
    )
    # the context is exactly what a guesser sees at inference: encode_prompt of the history
    context = encode_prompt(tok, two_turn_example["prompt"])
    assert ids[: len(context)] == context
    question = tok("Is it a dog?", add_special_tokens=False)["input_ids"] + [
        tok.convert_tokens_to_ids("<|end|>")
    ]
    assert ids[len(context) : len(context) + len(question)] == question
    # labels: -100 on every context token (system prompt, question 1, the judge's "Yes.", chat
    # tokens) and on the newline after <|end|>; the input ids on the question and its <|end|>
    assert labels[: len(context)] == [IGNORE] * len(context)
    assert labels[len(context) : len(context) + len(question)] == question
    assert labels[len(context) + len(question) :] == [IGNORE] * (
        len(ids) - len(context) - len(question)
    )
    assert tok.decode([t for _, t in _trained(ids, labels)]) == "Is it a dog?<|end|>"


def test_shared_helper_agrees_with_trl(model_and_tokenizer, two_turn_example, tmp_path):
    from training.sft.trainer import build_sft_trainer

    model, tok = model_and_tokenizer
    trainer = build_sft_trainer(
        SFTJobConfig(base_model="x", global_batch_size=8),
        copy.deepcopy(model),
        tok,
        [two_turn_example],
        output_dir=tmp_path,
        setup=CPU,
    )
    mine = encode_prompt_completion(tok, two_turn_example["prompt"], two_turn_example["completion"])
    assert mine.input_ids == trainer.train_dataset[0]["input_ids"]
    assert mine.labels == trainer.train_dataset[0]["labels"]
    assert mine.prompt_length == len(encode_prompt(tok, two_turn_example["prompt"]))


def test_train_all_masks_only_the_environment(model_and_tokenizer, two_turn_example):
    _, tok = model_and_tokenizer
    chat = two_turn_example["prompt"] + two_turn_example["completion"]
    last, every = encode_chat(tok, chat, train="last"), encode_chat(tok, chat, train="all")
    assert last.input_ids == every.input_ids and len(every.spans) == 2
    assert (
        tok.decode([t for _, t in _trained(every.input_ids, every.labels)])
        == "Is it an animal?<|end|>Is it a dog?<|end|>"
    )
    with pytest.raises(ValueError):
        encode_chat(tok, chat[:-1])  # must end with the assistant turn
    with pytest.raises(ValueError):
        encode_chat(tok, chat, train="some")


def test_templates_without_generation_markers_fall_back_to_prefix_rendering(
    model_and_tokenizer, two_turn_example
):
    _, tok = model_and_tokenizer
    plain = copy.deepcopy(tok)
    plain.chat_template = tok.chat_template.replace("{% generation %}", "").replace(
        "{% endgeneration %}", ""
    )
    assert has_generation_markers(tok) and not has_generation_markers(plain)
    chat = two_turn_example["prompt"] + two_turn_example["completion"]
    marked, fallback = encode_chat(tok, chat, train="all"), encode_chat(plain, chat, train="all")
    assert marked.input_ids == fallback.input_ids
    # without markers a span is what rendering one message further adds: the reply, <|end|> and "\n"
    assert [tok.decode(fallback.input_ids[a:b]) for a, b in fallback.spans] == [
        "Is it an animal?<|end|>\n",
        "Is it a dog?<|end|>\n",
    ]


def test_untrained_prefix_trains_only_the_rest_of_the_completion(
    model_and_tokenizer, two_turn_example, tmp_path
):
    """Naming rows: "Is it" is context, " a dog?<|end|>" is trained; a mixed batch is tokenised by
    training.common.chat and the plain rows keep TRL's labels."""
    from training.sft.trainer import build_sft_trainer

    model, tok = model_and_tokenizer
    plain = encode_prompt_completion(
        tok, two_turn_example["prompt"], two_turn_example["completion"]
    )
    naming = {**two_turn_example, "untrained_prefix": "Is it"}
    cut = encode_prompt_completion(
        tok, naming["prompt"], naming["completion"], untrained_prefix="Is it"
    )
    assert cut.input_ids == plain.input_ids
    assert tok.decode([t for _, t in _trained(cut.input_ids, cut.labels)]) == " a dog?<|end|>"
    assert (
        tok.decode([t for _, t in _trained(plain.input_ids, plain.labels)]) == "Is it a dog?<|end|>"
    )
    trainer = build_sft_trainer(
        SFTJobConfig(base_model="x", global_batch_size=8),
        copy.deepcopy(model),
        tok,
        [two_turn_example, naming],
        output_dir=tmp_path,
        setup=CPU,
    )
    assert trainer.train_dataset[0]["labels"] == plain.labels
    assert trainer.train_dataset[1]["labels"] == cut.labels
    with pytest.raises(ValueError, match="token boundary"):
        encode_prompt_completion(
            tok, naming["prompt"], naming["completion"], untrained_prefix="Is i"
        )
