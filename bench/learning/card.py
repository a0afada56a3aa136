"""The model card (MODEL_CARD.md) of a guesser shipped by bench.learning.ship, from its settings."""

from __future__ import annotations

SPLIT_NAMES = {
    "test": "test (held out)",
    "val": "validation (held out)",
    "rl": "GRPO's own secrets",
}


def percent(share: dict | None) -> str:
    if not share:
        return "–"
    lo, hi = share["ci95"]
    return f"{100 * share['rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def invalid_share(result: dict) -> str:
    verdicts = result.get("verdicts") or {}
    total = sum(verdicts.values())
    return f"{100 * verdicts.get('invalid', 0) / total:.1f}%" if total else "–"


def results_rows(results: dict) -> list[str]:
    rows = [
        "| weights | secrets | words × games | success (mean@8, T=1, 95% CI) | strict success "
        "| valid questions | invalid verdicts | bits gained | reached ≤ 2 candidates |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for source in ("shipped", "recorded"):
        for split, name in SPLIT_NAMES.items():
            r = results.get(source, {}).get(split)
            if not r:
                continue
            rows.append(
                f"| {source} | {name} | {r['success']['words']} × {r['samples_per_word']} "
                f"| {percent(r['success'])} | {percent(r['strict_success'])} "
                f"| {percent(r['valid_questions'])} | {invalid_share(r)} "
                f"| {r['bits_gained']:.2f} of {r['bits_available']:.2f} "
                f"| {percent(r['reached_2_candidates'])} |"
            )
    return rows


def model_card(name: str, settings: dict) -> str:
    p, play = settings["provenance"], settings
    scale = p["scale"]
    results = settings["results"]
    cli = results.get("cli")
    test_success = (
        cli["success_rate"]
        if cli
        else (results["shipped"].get("test") or results["recorded"]["test"])["success"]["rate"]
    )
    fp16 = settings["fp16_check"]
    lines = [
        f"# {name}",
        "",
        f"A {scale['hidden']}-wide, {scale['layers']}-layer Llama (about 1.4M parameters, a "
        f"{scale['vocab']}-token BPE tokenizer) trained from scratch on this project's CPU in the "
        "knowledge-base world of `bench.learning` (DESIGN §6). "
        f"{p['trained']}.",
        "",
        "**What it can do.** It knows only its pool: the 400 knowledge-base nouns in "
        f"`{play['pool']}`. It asks well-formed yes/no questions about them and narrows the "
        f"candidates, but it names a word it never played in game form only rarely: "
        f"{100 * test_success:.1f}% of games on the 150 held-out test words"
        f"{' (measured on these weights below)' if cli else ''}. "
        "Think of a word outside the pool and it cannot win; pick one from the pool to give it a "
        "chance.",
        "",
        "## How it was trained",
        f"- Command: `{p['command']}` (bench commit `{p['bench_commit']}`), training seed "
        f"{p['seed']}, world seed {p['world_seed']} (the pool, its splits, the tiny model and the "
        "knowledge stage).",
        "- Stages: a tiny Llama built from scratch (`training.tiny`) → a knowledge stage on every "
        "pool word and its facts, held-out words included (what an LLM gets from pretraining) → "
        f"SFT on an imperfect information-gain teacher's games for {scale['sft']} secrets "
        f"(teacher temperature {scale['teacher_temperature']} bits; {scale['sft_epochs']:g} "
        f"epochs, lr {scale['sft_lr']:g}), recovery rows and naming rows for the {scale['rl']} "
        "RL secrets"
        + (
            f" → GRPO ({scale['grpo_steps']} steps × {scale['grpo_secrets']} secrets × "
            f"{scale['grpo_generations']} games, lr {scale['grpo_lr']:g}, full weights) on the RL "
            "and SFT secrets."
            if p["arm"] != "sft"
            else "."
        ),
        *matches_line(p),
        "- No game-format row is about a validation or test word. The full settings are in "
        "`guesser.json` (`provenance.scale`) and the run's config in `training_config.json`.",
        f"- Trained at {p.get('precision', 'float32')} (games.precision). Checkpoint shipped: "
        f"`{p['checkpoint']}`, saved in float16 (an adapter, if any, "
        "merged). The benchmark played the float32 weights: on "
        f"{fp16['games']} seeded validation games the float16 weights played "
        f"{fp16['identical_games']} identical games (success {100 * fp16['fp32']['success']:.1f}%"
        f" → {100 * fp16['fp16']['success']:.1f}%, invalid "
        f"{100 * fp16['fp32']['invalid_rate']:.1f}% → {100 * fp16['fp16']['invalid_rate']:.1f}%).",
        "",
        "## How it plays",
        f"The `{play['guesser_prompt']}` guesser prompt, sampling at temperature "
        f"{play['sampling']['temperature']:g} with at most {play['sampling']['max_new_tokens']} "
        f"new tokens, against the `{play['judge']}` judge (the knowledge base, No to every fact it "
        f"does not store), {play['max_turns']} questions, the `{play['win_rule']}` win rule. "
        "`guesser.json` records these, and `hf:` specs of this folder play with them.",
        "",
        "## Held-out results",
        "Success is mean@8 over words at temperature 1 with its 95% interval over words (the "
        "paper's metric); `recorded` is the seed-"
        f"{p['seed']} entry of `{settings['results']['recorded']['source']}`, `shipped` (when the "
        "run got that far) its own evaluation stages of these weights; the shipped float16 "
        "weights themselves are measured under Reproduce.",
        "",
        *results_rows(settings["results"]),
        "",
        "Valid questions are those the judge answered (yes, no, or the win); the closed-world "
        'judge answers unknown to a question about a concept it does not store ("Is it an '
        'orctor?"), which is not an invalid question: invalid verdicts (not a question, several '
        "questions, too long) are the column beside.",
        "",
        "## Reproduce",
        "```",
        f"python -m games eval --guesser hf:games/data/models/{name} --judge {play['judge']} \\",
        f"  --words {play['held_out']} --pool {play['pool']} --samples 8 --seed 0 --json",
        "```",
        *cli_lines(settings),
        "",
        *MORE,
    ]
    return "\n".join(lines)


# the card's last section: where the docs say the rest (paths from games/data/models/<name>/)
DOCS = "../../../../docs"
MORE = [
    "## More",
    "",
    "This guesser beside the other two and the information-gain baseline, and how they were "
    f"shipped: [Shipped trained guessers]({DOCS}/explanation/guessers.md#shipped-trained-guessers)."
    " The protocol and why held-out naming fails: "
    f"[The learning benchmark]({DOCS}/explanation/learning-benchmark.md). Every metric above: "
    f"[the metrics glossary]({DOCS}/reference/metrics.md).",
    "",
]


def cli_lines(settings: dict) -> list[str]:
    """The measured `python -m games eval` run (the web app's seeded evaluation), if any."""
    cli = settings["results"].get("cli")
    if not cli:
        return []
    lo, hi = cli["success_ci95"]
    recorded = (settings["results"]["recorded"].get("test") or {}).get("success")
    inside = (
        f"; inside the recorded interval [{100 * recorded['ci95'][0]:.1f}, "
        f"{100 * recorded['ci95'][1]:.1f}]"
        if recorded and recorded["ci95"][0] <= cli["success_rate"] <= recorded["ci95"][1]
        else "; outside the recorded interval"
        if recorded
        else ""
    )
    return [
        "",
        f"Measured with that command ({cli['played_at']}, commit `{cli['commit'][:12]}`): "
        f"success {100 * cli['success_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] over "
        f"{cli['n_words']} words × {cli['k']} games{inside}; invalid verdicts "
        f"{100 * cli['invalid_rate']:.1f}%, unknown {100 * cli['unknown_rate']:.1f}%, repeated "
        f"{100 * cli['repeated_rate']:.1f}%. These games are the web app's seeded evaluation "
        "(`games/data/models/evaluation/`).",
    ]


def matches_line(provenance: dict) -> list[str]:
    match = provenance.get("training_matches_recorded")
    if not match or not match["compared"]:
        return []
    verdict = "the same as" if match["same"] else "different from"
    return [
        f"- This run's training ({', '.join(match['compared'])}) is {verdict} the recorded run's "
        "(bench/results/learning.json)."
    ]
