"""The curation stages before the splits: source, judge filter, solvability games, difficulty.

Each stage takes the words that survived the one before and returns a `Stage` (kept words plus
every dropped word under its reason).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from games import rules
from games.guessers.base import Guesser
from games.judges.base import Judge, JudgeRequest
from games.kb import DEFAULT_SENSE, KnowledgeBase
from games.kb.questions import FUNCTION_WORDS
from games.types import GameConfig, JudgeAnswer, Verdict
from training.common.data import play_pairs
from training.curation.config import CurationConfig
from training.curation.funnel import Stage
from training.curation.normalise import DUPLICATE, Candidate, normalise_entries, split_entries
from training.reporting import Reporter, StopRequested

CHECKPOINT_SECONDS = 120.0
MIN_NOUN_TAGS = (
    5  # top_nouns: SemCor tags of a word's noun senses, evidence that it is used as a noun
)
ISA = 0  # index of "isa" in games.kb.RELATIONS


# -- 1. source --------------------------------------------------------------------------------
def source_lists(lists: dict[str, list[tuple[str, str]]]) -> Stage:
    """The union of word lists ((word, category) pairs each); a word keeps every list it is in."""
    total = sum(len(v) for v in lists.values())
    stage = Stage("source", total, detail={"lists": {name: len(v) for name, v in lists.items()}})
    by_word: dict[str, Candidate] = {}
    changed: dict[str, int] = {}
    for name, entries in lists.items():
        result = normalise_entries(list(entries), source=name)
        for raw, reason in result.dropped:
            stage.drop(raw, reason)
        for cand in result.candidates:
            if cand.word in by_word:  # in an earlier list: one candidate, both sources
                first = by_word[cand.word]
                by_word[cand.word] = Candidate(
                    first.word,
                    first.category or cand.category,
                    first.sources + cand.sources,
                    first.raw,
                )
                stage.drop(cand.raw or cand.word, DUPLICATE)
            else:
                by_word[cand.word] = cand
        for k, v in result.changed.items():
            changed[k] = changed.get(k, 0) + v
    stage.kept = list(by_word.values())
    if changed:
        stage.detail["normalised"] = changed
    return stage


def source_text(text: str) -> Stage:
    result = normalise_entries(split_entries(text), source="text")
    stage = Stage("source", result.n_entries, kept=result.candidates)
    for raw, reason in result.dropped:
        stage.drop(raw, reason)
    if result.changed:
        stage.detail["normalised"] = result.changed
    return stage


def source_top_nouns(kb: KnowledgeBase, n: int) -> Stage:
    """The n most frequent knowledge-base nouns (wordfreq Zipf frequency), skipping function
    words, non-words, inflected forms, plurals of other nouns ("years") and words with little
    evidence of noun use (SemCor tags of their noun senses; wordfreq has no parts of speech)."""
    stage = Stage("source", 0, detail={"top_n": n})
    order = np.argsort(-kb.noun_zipf, kind="stable")
    tags = kb._noun_counts
    for i in order:
        if len(stage.kept) >= n:
            break
        word = kb.nouns[int(i)]
        stage.n_in += 1
        if not word.replace(" ", "").replace("-", "").isalpha():
            stage.drop(word, "not letters only")
        elif len(word) < 3:
            stage.drop(word, "shorter than 3 letters")
        elif word in FUNCTION_WORDS:
            stage.drop(word, "function word")
        elif kb.noun_via[int(i)] != "wordnet":
            stage.drop(word, "not a WordNet lemma (inflected or respelled form)")
        elif any(len(f) >= 3 and f in kb.noun_index for f in rules.singulars(word) - {word}):
            stage.drop(word, "plural of another noun")
        elif int(tags[int(i)].sum()) < MIN_NOUN_TAGS:
            stage.drop(word, f"little evidence of noun use (< {MIN_NOUN_TAGS} SemCor noun tags)")
        else:
            stage.kept.append(Candidate(word, sources=("top_nouns",)))
    return stage


# -- 2. judge filter --------------------------------------------------------------------------
FAIRNESS_PROMPT = (
    "We are choosing secret words for the game of 20 Questions, "
    "where a player must find the secret by asking at most 20 yes/no questions. "
    "Is '{word}' a fair secret: a noun most adults know, concrete or specific "
    "enough to be narrowed down by yes/no questions, and not a proper name?\n\n"
    "Reason in at most one sentence, then answer in the format <answer>[Yes/No]</answer>: "
)


def kb_facts(kb: KnowledgeBase, word: str, sense: str) -> dict | None:
    """What the fairness rules look at, or None for a word outside the knowledge base."""
    noun = kb.lookup(word)
    if noun is None:
        return None
    features = kb.feature_set(noun, sense)
    senses = kb.senses(noun, sense)
    isa = int(np.count_nonzero(kb.feature_relation[list(features)] == ISA)) if features else 0
    return {
        "kb_noun": kb.nouns[noun],
        "lexname": kb.synset_lexnames[senses[0]] if senses else "",
        "features": len(features),
        "hypernyms": isa,
        "senses": len(senses),
    }


def judge_filter(
    candidates: Sequence[Candidate],
    *,
    config: CurationConfig,
    kb: KnowledgeBase,
    judge: Judge,
    fairness=None,
    progress: Callable[[float], None] | None = None,
) -> tuple[Stage, dict[str, dict]]:
    """Rules, in order (the first that fails is the reason): with kb_filter, a knowledge-base noun;
    one word per noun ("mice" and "mouse": the one spelled like the noun, else the first); most
    frequent sense not in an excluded lexical file; at least min_features features and
    min_hypernyms isa concepts. Then
    the game judge must accept the secret, and the optional LLM judge must call it fair."""
    sense = getattr(judge, "sense", DEFAULT_SENSE)
    stage = Stage("judge filter", len(candidates), detail={"sense": sense})
    facts = {c.word: info for c in candidates if (info := kb_facts(kb, c.word, sense)) is not None}
    # one word per noun: the one spelled like the noun ("mouse", not "mice"), else the first
    keeper: dict[str, str] = {}
    for cand in candidates:
        noun = facts.get(cand.word, {}).get("kb_noun")
        if noun is not None and (noun not in keeper or cand.word == noun):
            keeper[noun] = cand.word
    excluded = set(config.exclude_lexnames)
    passed = []
    for cand in candidates:
        info = facts.get(cand.word)
        if config.kb_filter:
            if info is None:
                stage.drop(cand.word, "not a knowledge-base noun")
                continue
            kept_word = keeper[info["kb_noun"]]
            if kept_word != cand.word:
                stage.drop(
                    f"{cand.word} (= {kept_word})", "same knowledge-base noun as another word"
                )
                continue
            if info["lexname"] in excluded:
                stage.drop(cand.word, f"lexical file {info['lexname']}")
                continue
            if info["features"] < config.min_features:
                stage.drop(cand.word, f"fewer than {config.min_features} knowledge-base features")
                continue
            if info["hypernyms"] < config.min_hypernyms:
                stage.drop(cand.word, f"fewer than {config.min_hypernyms} hypernym concepts")
                continue
        try:
            judge.check_secret(cand.word)
        except Exception as err:  # UnknownSecretError, or any judge that cannot take this word
            stage.drop(cand.word, f"the game judge ({judge.name}) cannot play it")
            facts.setdefault(cand.word, {})["judge_error"] = str(err)[:200]
            continue
        passed.append(cand)
    stage.kept = (
        fairness_filter(passed, fairness, stage, progress) if fairness is not None else passed
    )
    return stage, facts


def fairness_filter(
    candidates: list[Candidate], backend, stage: Stage, progress=None, batch: int = 32
) -> list[Candidate]:
    """Ask an LLM backend, per word, whether it is a fair secret (greedy,
    <answer>Yes/No</answer>)."""
    from games.llm.base import SamplingParams
    from games.llm.chat import parse_judge_answer

    sampling = SamplingParams(max_new_tokens=96, temperature=0.0, stop=("</answer>",))
    kept = []
    for offset in range(0, len(candidates), batch):
        chunk = candidates[offset : offset + batch]
        chats = [[{"role": "user", "content": FAIRNESS_PROMPT.format(word=c.word)}] for c in chunk]
        for cand, gen in zip(chunk, backend.generate(chats, sampling)):
            verdict = parse_judge_answer(gen.text)
            if verdict is Verdict.YES:
                kept.append(cand)
            elif verdict is Verdict.NO:
                stage.drop(cand.word, "LLM judge: not a fair secret")
            else:
                stage.drop(cand.word, "LLM judge: no yes/no answer")
        if progress:
            progress((offset + len(chunk)) / len(candidates))
    return kept


# -- 3. solvability ---------------------------------------------------------------------------
class NoisyJudge(Judge):
    """Flips the inner judge's yes/no answers with probability `noise`, seeded by the request seed
    (the engine derives it from the game seed and turn), so the same game is the same game."""

    def __init__(self, inner: Judge, noise: float):
        self.inner, self.noise = inner, noise
        self.name = f"{inner.name}+noise{noise:g}"

    def check_secret(self, secret: str) -> None:
        self.inner.check_secret(secret)

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeAnswer]:
        answers = self.inner.judge_batch(requests)
        out = []
        for request, answer in zip(requests, answers):
            u = (zlib.crc32(f"flip:{request.seed}".encode()) & 0xFFFFFFFF) / 2**32
            if answer.verdict in (Verdict.YES, Verdict.NO) and u < self.noise:
                flipped = Verdict.NO if answer.verdict is Verdict.YES else Verdict.YES
                answer = JudgeAnswer(
                    flipped,
                    raw=f"{answer.raw} (flipped)",
                    votes=answer.votes,
                    disagreement=answer.disagreement,
                )
            out.append(answer)
        return out


@dataclass
class WordGames:
    games: int = 0
    solved: int = 0
    turns_solved: int = 0  # summed over solved games
    turns: int = 0  # summed over all games

    @property
    def solve_rate(self) -> float:
        return self.solved / self.games if self.games else 0.0

    @property
    def mean_questions(self) -> float | None:
        return self.turns_solved / self.solved if self.solved else None


def fingerprint(config: CurationConfig, words: Sequence[str], guesser: str, judge: str) -> str:
    """Identifies a solvability plan, so a checkpoint is only resumed by the same plan."""
    key = [
        list(words),
        config.samples,
        config.seed,
        config.max_turns,
        config.answer_noise,
        guesser,
        judge,
    ]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]


def solvability(
    words: Sequence[str],
    *,
    config: CurationConfig,
    guesser: Guesser,
    judge: Judge,
    reporter: Reporter,
    progress: Callable[[float, str], None],
) -> dict[str, WordGames]:
    """k games per word in lock-step batches (sample-major, so a partial run covers every word).
    Checkpoints every CHECKPOINT_SECONDS and resumes from the last checkpoint of the same plan."""
    if config.answer_noise > 0:
        judge = NoisyJudge(judge, config.answer_noise)
    plan = [(w, s) for s in range(config.samples) for w in words]
    key = fingerprint(config, words, guesser.name, judge.name)
    results, done = _resume(reporter, key)
    if done:
        reporter.log(f"solvability: resuming after {done} of {len(plan)} games")
    results = {w: results.get(w, WordGames()) for w in words}
    game_config = GameConfig(max_turns=config.max_turns)
    start, last_save, played, won = time.perf_counter(), time.monotonic(), 0, 0
    for offset in range(done, len(plan), config.batch_size):
        if reporter.should_stop():
            _save(reporter, key, results, offset)
            raise StopRequested()
        batch = plan[offset : offset + config.batch_size]
        trajectories = play_pairs(guesser, judge, batch, seed=config.seed, config=game_config)
        for (word, _), traj in zip(batch, trajectories):
            r = results[word]
            r.games += 1
            r.turns += traj.n_turns
            if traj.won:
                r.solved += 1
                r.turns_solved += traj.n_turns
        played += len(batch)
        won += sum(t.won for t in trajectories)
        finished = offset + len(batch)
        elapsed = time.perf_counter() - start
        reporter.metrics(
            finished,
            {
                "curation/success_rate": won / played,
                "curation/games_per_second": played / max(elapsed, 1e-9),
            },
        )
        progress(finished / len(plan), f"solvability: {finished}/{len(plan)} games")
        if time.monotonic() - last_save >= CHECKPOINT_SECONDS and finished < len(plan):
            _save(reporter, key, results, finished)
            last_save = time.monotonic()
    return results


def _save(reporter: Reporter, key: str, results: dict[str, WordGames], done: int) -> None:
    path = Path(reporter.output_dir) / "solvability.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(
        json.dumps(
            {
                "fingerprint": key,
                "done": done,
                "results": {
                    w: [r.games, r.solved, r.turns_solved, r.turns] for w, r in results.items()
                },
            }
        )
    )
    tmp.replace(path)
    reporter.checkpoint(done, path, metrics={"games_done": done})


def _resume(reporter: Reporter, key: str) -> tuple[dict[str, WordGames], int]:
    last = reporter.last_checkpoint()
    path = Path(last["path"]) if last else None
    if path is None or not path.is_file():
        return {}, 0
    data = json.loads(path.read_text())
    if data.get("fingerprint") != key:
        reporter.log(
            "solvability: the last checkpoint is of another plan; starting afresh", "warning"
        )
        return {}, 0
    return {w: WordGames(*v) for w, v in data["results"].items()}, int(data["done"])


# -- 4. difficulty ----------------------------------------------------------------------------
def difficulties(
    results: dict[str, WordGames], model: str, player: str = "reference"
) -> dict[str, float]:
    """Higher is harder. `logit`: log((k - c + 1/2) / (c + 1/2)) of c solved in k games. `rasch`:
    the item difficulty b of a Rasch fit of the reference guesser's games (games.rating; centred
    at 0, ridge-regularised so all-solved and never-solved words get finite values)."""
    if model == "logit":
        return {
            w: math.log((r.games - r.solved + 0.5) / (r.solved + 0.5)) for w, r in results.items()
        }
    from games.rating import rasch_fit

    played = {w: r for w, r in results.items() if r.games}
    if not played:
        return {}
    responses = [(player, w, True) for w, r in played.items() for _ in range(r.solved)]
    responses += [(player, w, False) for w, r in played.items() for _ in range(r.games - r.solved)]
    fit = rasch_fit(responses)
    return {w: fit.difficulty(w)[0] for w in played}
