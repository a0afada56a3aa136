"""LLM judge and guesser: prompts, parsing, batching and what they record."""

from __future__ import annotations

import json

import pytest

from games.engine import TwentyQuestions
from games.guessers.base import GuesserState
from games.guessers.llm import LLMGuesser, turn_seed
from games.judges.base import JudgeRequest
from games.judges.llm import LLMJudge
from games.llm.base import SamplingParams, encode_prompt
from games.llm.chat import (
    GUESSER_PROMPT,
    MODEL_RUN_CONFIG,
    GuesserFormat,
    belief_reply,
    extract_question,
    guesser_messages,
    judge_messages,
    model_guesser_prompt,
    parse_judge_answer,
)
from games.types import Turn, Verdict

HISTORY = [
    Turn(0, "Is it alive?", Verdict.YES, "Yes."),
    Turn(1, "Is it red", Verdict.INVALID, "Ask again."),
]


@pytest.mark.parametrize(
    "text, verdict",
    [
        ("<answer>Yes</answer>", Verdict.YES),
        ("It is a fruit. <answer> no </answer>", Verdict.NO),
        ("<ANSWER>[Finished]</ANSWER>", Verdict.FINISHED),
        ("<answer>Invalid.</answer>", Verdict.INVALID),
        ("<answer>repeated</answer>", Verdict.REPEATED),
        ("<answer>No</answer> wait <answer>Yes</answer>", Verdict.YES),  # the last tag counts
        ("thinking... <answer>Yes", Verdict.YES),  # left open by a stop string
        ("<answer>[Yes/No/Invalid/Finished]</answer>", None),  # the echoed format
        ("<answer>maybe</answer>", None),
        ("Yes", None),
        ("", None),
    ],
)
def test_parse_judge_answer(text, verdict):
    assert parse_judge_answer(text) is verdict


@pytest.mark.parametrize(
    "text, reply, first_question",
    [
        ("Is it an animal?\nMore text", "Is it an animal?\nMore text", "Is it an animal?"),
        ("\n  Is it big? Is it small?", "Is it big? Is it small?", "Is it big?"),
        ("<think>hmm?</think><question>Is it a tool?</question>", "Is it a tool?", "Is it a tool?"),
        ("<think>hmm?</think>\n\nIs it a tool?  ", "Is it a tool?", "Is it a tool?"),
        ("<question>\nDoes it fly?", "Does it fly?", "Does it fly?"),
        (
            "<question>Is it a tool?</question> trailing <question>Is it red?</question>",
            "Is it a tool?",
            "Is it a tool?",
        ),
        ("no question here\nIs it x?", "no question here\nIs it x?", "no question here"),
        ("<think>unfinished thought? Is it", "", ""),
        ("", "", ""),
    ],
)
def test_extract_question(text, reply, first_question):
    # `reply` (the default, the paper's) keeps what the model wrote; `first_question` is the
    # ablation
    assert extract_question(text) == extract_question(text, "reply") == reply
    assert extract_question(text, "first_question") == first_question


def test_extract_question_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="reply, first_question"):
        extract_question("Is it?", "last_question")


def test_guesser_messages_layout():
    msgs = guesser_messages(HISTORY, max_turns=50)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "maximum of 50 questions" in msgs[0]["content"] and msgs[1]["content"] == GUESSER_PROMPT
    assert msgs[2]["content"] == "Is it alive?" and msgs[3]["content"] == "Yes."
    repeated = GuesserFormat(repeat_prompt=True, system_prompt="").messages(HISTORY)
    assert repeated[0]["role"] == "user" and repeated[2]["content"] == "Yes. " + GUESSER_PROMPT
    reply, (a, b) = belief_reply("ice cream")
    assert reply == "Is it 'ice cream'?" and reply[a:b] == "ice cream"


def test_judge_messages_hold_secret_question_and_optional_history():
    msgs = judge_messages("apple", "Is it a fruit?", HISTORY, with_history=True)
    assert msgs[0]["role"] == "system" and "'apple'" in msgs[1]["content"]
    assert (
        "Question: 'Is it a fruit?'" in msgs[1]["content"]
        and "Is it alive?; Is it red" in msgs[1]["content"]
    )
    assert "Is it alive?" not in judge_messages("apple", "Is it a fruit?", HISTORY)[1]["content"]


def test_llm_judge_batches_and_parses(scripted_backend):
    replies = {
        "Is it a fruit?": "<answer>Yes</answer>",
        "Is it blue?": "Surely <answer>No</answer>",
        "Is it?": "I refuse.",
    }
    backend = scripted_backend(
        lambda chat, seed: next(v for k, v in replies.items() if f"'{k}'" in chat[-1]["content"])
    )
    judge = LLMJudge(backend)
    requests = [JudgeRequest("apple", q, (), seed=i) for i, q in enumerate(replies)]
    answers = judge.judge_batch(requests)
    # a reply without a readable verdict is the judge's failure: unknown (a turn), not invalid (-5)
    assert [a.verdict for a in answers] == [Verdict.YES, Verdict.NO, Verdict.UNKNOWN]
    assert answers[2].raw == "I refuse."  # unparseable text is kept
    assert len(backend.calls) == 1 and backend.calls[0][2] == [0, 1, 2]
    assert backend.calls[0][1].greedy and "</answer>" in backend.calls[0][1].stop
    assert judge.judge_batch([]) == [] and len(backend.calls) == 1


def test_llm_judge_finished_without_naming_the_secret_becomes_yes(scripted_backend):
    env = TwentyQuestions(
        LLMJudge(scripted_backend(lambda chat, seed: "<answer>Finished</answer>"))
    )
    env.reset("apple", seed=1)
    assert env.step("Is it a fruit?").turn.verdict is Verdict.YES
    assert env.step("Is it an apple?").turn.verdict is Verdict.FINISHED


def test_llm_guesser_one_generate_per_batch(scripted_backend):
    backend = scripted_backend(
        lambda chat, seed: f"<question>Is it number {len(chat)}?</question> trailing"
    )
    guesser = LLMGuesser(backend, sampling=SamplingParams(max_new_tokens=20, temperature=0.5))
    states = [GuesserState(seed=3), GuesserState(seed=4, history=list(HISTORY))]
    asks = guesser.ask_batch(states)
    assert [a.question for a in asks] == ["Is it number 2?", "Is it number 6?"]
    assert len(backend.calls) == 1
    chats, sampling, seeds = backend.calls[0]
    assert seeds == [turn_seed(3, 0), turn_seed(4, 2)] and sampling.temperature == 0.5
    extra = asks[1].extra
    assert extra["messages"] == chats[1] == guesser_messages(HISTORY)
    assert extra["token_ids"] == [1, 2, 3] and extra["logprobs"] == [-0.5, -0.25, -0.125]
    assert extra["prompt_token_ids"] == [7, 8] and extra["completion"].endswith("trailing")
    assert guesser.ask_batch([]) == [] and len(backend.calls) == 1


def test_llm_guesser_on_the_tiny_model_records_json_ready_tokens(tiny_backend):
    guesser = LLMGuesser(tiny_backend, sampling=SamplingParams(max_new_tokens=10, temperature=1.0))
    states = [GuesserState(seed=1), GuesserState(seed=2, history=list(HISTORY))]
    asks = guesser.ask_batch(states)
    again = guesser.ask_batch(states)  # seeded by (game seed, turn); now on a warm prefix cache
    for a, b in zip(asks, again):
        assert a.question == b.question and a.extra["token_ids"] == b.extra["token_ids"]
        assert a.extra["logprobs"] == pytest.approx(b.extra["logprobs"], abs=1e-5)
    for ask, state in zip(asks, states):
        extra = json.loads(json.dumps(ask.extra))
        assert extra["prompt_token_ids"] == encode_prompt(
            tiny_backend.tokenizer, guesser_messages(state.history)
        )
        assert len(extra["token_ids"]) == len(extra["logprobs"]) == 10
        assert all(lp <= 0 for lp in extra["logprobs"])
        assert ask.question == extract_question(extra["completion"])


def test_named_guesser_formats_and_the_prompt_a_model_folder_records(tmp_path):
    short = GuesserFormat.named("short", max_turns=7)
    system, prompt = short.messages([])
    assert (
        system["content"] == "20 Questions: find the secret noun with at most 7 yes/no questions."
    )
    assert prompt == {"role": "user", "content": "Your question:"}
    assert GuesserFormat.named("paper") == GuesserFormat()
    with pytest.raises(ValueError, match="paper, short"):
        GuesserFormat.named("long")

    adapter, base, bare = tmp_path / "adapter", tmp_path / "base", tmp_path / "bare"
    recorded = {
        adapter: {"resolved": {"examples": 3}},
        base: {"resolved": {"guesser_prompt": "short"}},
    }
    for folder, run_config in recorded.items():
        folder.mkdir()
        (folder / MODEL_RUN_CONFIG).write_text(json.dumps(run_config))
    bare.mkdir()
    (bare / MODEL_RUN_CONFIG).write_text("not json")
    assert (
        model_guesser_prompt(adapter, base) == "short"
    )  # the adapter's run records none: its base's
    assert model_guesser_prompt(None, bare, "Qwen/Qwen3-0.6B") is None  # unreadable, or a hub id
    assert GuesserFormat.for_model(None, adapter, base, max_turns=7) == short
    assert GuesserFormat.for_model(bare) == GuesserFormat()


def test_registry_guesser_plays_with_the_prompt_its_folder_records(tiny_model_dir, tmp_path):
    import shutil

    from games.registry import build_guesser

    assert build_guesser(f"hf:{tiny_model_dir}").chat_format == GuesserFormat()
    trained = tmp_path / "trained"
    shutil.copytree(tiny_model_dir, trained)
    (trained / MODEL_RUN_CONFIG).write_text(json.dumps({"resolved": {"guesser_prompt": "short"}}))
    guesser = build_guesser(f"hf:{trained}")
    assert guesser.chat_format == GuesserFormat.named("short")
    ask = guesser.ask(guesser.start(seed=1))
    assert ask.extra["messages"][-1]["content"] == "Your question:"


def test_the_whole_reply_is_judged_unless_the_first_question_ablation_is_chosen(scripted_backend):
    from games.engine import TwentyQuestions
    from games.judges.kb import KBJudge

    backend = scripted_backend(lambda chat, seed: "Is it an animal? Is it a dog?")
    for extraction, question, verdict, raw in (
        ("reply", "Is it an animal? Is it a dog?", Verdict.INVALID, "rule: several questions"),
        ("first_question", "Is it an animal?", Verdict.YES, None),
    ):
        guesser = LLMGuesser(backend, question_extraction=extraction)
        ask = guesser.ask(guesser.start(seed=1))
        assert (
            ask.question == question and ask.extra["completion"] == "Is it an animal? Is it a dog?"
        )
        env = TwentyQuestions(KBJudge())
        env.reset("dog", seed=1)
        turn = env.step(ask.question).turn
        assert turn.verdict is verdict and (raw is None or turn.judge_raw == raw)
    with pytest.raises(ValueError, match="question_extraction"):
        LLMGuesser(backend, question_extraction="last")


def test_registry_passes_the_question_extraction_to_llm_guessers(tiny_model_dir):
    from games.registry import build_guesser

    assert build_guesser(f"hf:{tiny_model_dir}").question_extraction == "reply"
    assert (
        build_guesser(
            f"hf:{tiny_model_dir}", question_extraction="first_question"
        ).question_extraction
        == "first_question"
    )
