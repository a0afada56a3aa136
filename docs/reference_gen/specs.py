"""The judge and guesser specs page (reference/specs.md): the spec kinds of games.registry, the
knowledge base's senses, the natural guesser's settings, the language-model backends and the web
app's model kinds (webapp.catalog)."""

from __future__ import annotations

from .common import cell, setup_django

# What each spec kind of games.registry (GUESSER_KINDS, JUDGE_KINDS) accepts and is. The page lists
# the registry's kinds, so a kind added there without a line here fails the build (and a line for
# a kind the registry lost fails it too).
SPEC_KINDS = {
    "kb": (
        "`kb`, `kb:SENSE`, `kb:closed`, `kb:SENSE:closed`",
        "The knowledge-base judge (WordNet facts about the secret's senses). Open world by "
        "default: a fact it does not store is `unknown`, except categories (hypernyms) outside "
        "WordNet's known gaps, which it answers No; `closed` answers No to every absent fact "
        "(the world the information-gain guesser models).",
    ),
    "pretrained": (
        "`pretrained`, `pretrained:PATH`",
        "The pretrained judge: a LoRA cross-encoder on `minilm-l6` combined with the learned "
        "judge, calibrated (answers carry P(yes)). Without PATH the shipped folder "
        "`games/data/judges/pretrained/`; PATH is a folder a `pretrained_judge` job wrote.",
    ),
    "learned": (
        "`learned`, `learned:PATH`",
        "The learned judge: a small numpy network over the knowledge base's facts and the "
        "question's words. Without PATH the shipped `games/data/judges/learned.npz`; PATH is a "
        "weights file a `judge` job wrote.",
    ),
    "kb+learned": (
        "`kb+learned`, `kb+learned:PATH`",
        "The knowledge-base judge where it vouches for a yes or no, the learned judge (PATH: "
        "its weights) for the rest.",
    ),
    "ensemble": (
        "`ensemble:SPEC,SPEC,...`",
        "Several judges (at least two specs, each without commas) answering by majority (a tie "
        "is `unknown`), with a disagreement flag.",
    ),
    "infogain": (
        "`infogain`",
        "The information-gain guesser: asks the knowledge-base question with the most expected "
        "information over its pool (`--pool`, a job's `pool_word_list`; default every KB noun) "
        "and eliminates candidates on each answer.",
    ),
    "natural": (
        "`natural`, `natural:PATH`, `natural:KEY=VALUE,KEY=VALUE`",
        "The natural guesser: natural questions from a bank, a soft posterior over 13,139 "
        "frequent nouns from P(yes | word, question). PATH is another `natural.npz`; the "
        "settings below tune it.",
    ),
    "random": (
        "`random`",
        "A floor baseline: a random question in the knowledge-base judge's forms, or (a quarter "
        "of the turns) a guess of a random pool word; never the same question twice.",
    ),
    "hf": (
        "`hf:PATH`",
        "A transformers model that asks (a guesser) or answers (an LLM judge): a local folder, a "
        "pretrained base's name (`hf:smollm2-135m-instruct`, see "
        "[Install](../how-to/install.md#pretrained-bases)) or a hub id where a hub is reachable. "
        "A folder a training job wrote plays with the prompt it was trained on, a shipped "
        "guesser's folder with its recorded sampling.",
    ),
    "openai": (
        "`openai:URL#MODEL`",
        "Any OpenAI-compatible chat-completions server (vLLM serve, llama.cpp server, a hosted "
        "API): URL is the API root (`http://host:8000/v1`), MODEL the server's model name; the "
        "key comes from `$OPENAI_API_KEY`. It generates but cannot score given text, so no "
        "ΔBelief and no training.",
    ),
    "vllm": (
        "`vllm:PATH`",
        "A model served by an in-process vLLM engine (GPU workers only; imported lazily).",
    ),
}


def _natural_defaults() -> dict[str, object]:
    import inspect

    from games.guessers.natural import NaturalGuesser

    parameters = inspect.signature(NaturalGuesser.__init__).parameters
    return {name: p.default for name, p in parameters.items()}


def _setting_type(parse: object) -> str:
    return parse.__name__ if isinstance(parse, type) else "bool (1/true/yes)"


def spec_kinds() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The games registry's (guesser kinds, judge kinds)."""
    from games.registry import GUESSER_KINDS, JUDGE_KINDS

    return GUESSER_KINDS, JUDGE_KINDS


def model_kind_specs() -> list[tuple[str, str, str]]:
    """(kind, label, the games spec a ModelSpec of that kind becomes) for every web model kind,
    through webapp.catalog.builders.spec_string on an unsaved example row."""
    setup_django()
    from games.registry import SpecError
    from webapp.catalog.builders import spec_string
    from webapp.catalog.models import ModelKind, ModelSpec

    rows = []
    for kind, label in ModelKind.choices:
        example = ModelSpec(
            name="example", kind=kind, path="PATH", endpoint="URL", remote_model="MODEL"
        )
        try:
            spec = f"`{spec_string(example)}`"
            if kind in (ModelKind.PRETRAINED, ModelKind.LEARNED, ModelKind.HYBRID):
                spec += f" (path empty: `{kind}`, the shipped one)"
            elif kind == ModelKind.NATURAL:
                spec += " (path empty: `natural`)"
            elif kind == ModelKind.KB:
                example.options = {"sense": "any", "closed": True}
                options = '{"sense": "any", "closed": true}'
                spec += f"; options `{options}`: `{spec_string(example)}`"
        except SpecError:
            spec = "none: a base for training only, it neither asks nor answers"
        rows.append((kind, label, spec))
    return rows


def specs_page() -> str:
    from games.kb.knowledge import DEFAULT_SENSE, SENSE_MODES
    from games.llm import BACKEND_KINDS
    from games.llm.chat import JUDGE_PROMPT, JUDGE_SYSTEM_PROMPT
    from games.registry import NATURAL_SETTINGS

    guessers, judges = spec_kinds()
    kinds = list(dict.fromkeys(judges + guessers))
    undocumented = [k for k in kinds if k not in SPEC_KINDS]
    stale = [k for k in SPEC_KINDS if k not in kinds]
    if undocumented or stale:
        raise RuntimeError(
            f"docs/reference_gen/specs.py SPEC_KINDS is out of date with games.registry: "
            f"undocumented {undocumented}, no longer registered {stale}"
        )
    out = [
        "# Judge and guesser specs",
        "",
        "A *spec* is the short string that names a judge or a guesser wherever one is chosen: "
        "`python -m games eval --guesser SPEC --judge SPEC`, the training commands' `--teacher` "
        "and `--judge`, and, in the web app, the model specs of the catalog (each row "
        "becomes a spec, below). Grammar: `KIND` or `KIND:TARGET`; the kind is case-insensitive. "
        "Generated from `games/registry.py` and `webapp/catalog` by `docs/gen_reference.py`. "
        "[Add a judge or guesser backend](../how-to/backends.md) shows them in use.",
        "",
        "## Kinds",
        "",
        "| Kind | Forms | Guesser | Judge | What it is |",
        "|---|---|---|---|---|",
    ]
    for kind in kinds:
        forms, what = SPEC_KINDS[kind]
        roles = ["yes" if kind in guessers else "", "yes" if kind in judges else ""]
        out.append(f"| `{kind}` | {forms} | " + " | ".join(roles) + f" | {cell(what)} |")
    out += [
        "",
        "An unknown kind is refused with the list above (`SpecError`); in the web app before a "
        "job is queued.",
        "",
        "## Knowledge-base senses",
        "",
        "`kb:SENSE` chooses which WordNet senses of the secret the facts come from: "
        + ", ".join(f"`{m}`" for m in SENSE_MODES)
        + f" (default `{DEFAULT_SENSE}`: the senses tagged, add-one smoothed, at least a third as "
        "often as the first in SemCor; `first`: the most frequent only; `any`: every noun "
        "sense). `closed` may follow, e.g. `kb:any:closed`.",
        "",
        "## Natural guesser settings",
        "",
        "`natural:KEY=VALUE,KEY=VALUE` (e.g. `natural:noise=0.1,guess_threshold=0.3`):",
        "",
        "| Setting | Type | Default |",
        "|---|---|---|",
    ]
    defaults = _natural_defaults()
    for key, parse in NATURAL_SETTINGS.items():
        out.append(f"| `{key}` | {_setting_type(parse)} | `{defaults.get(key)!r}` |")
    out += [
        "",
        "## Language-model backends",
        "",
        "`hf`, `vllm` and `openai` specs run through one backend interface (`games/llm`, "
        "`generate` and `score`), whose kinds are "
        + ", ".join(f"`{k}`" for k in BACKEND_KINDS)
        + " (`hf` is `transformers`; `vllm-server` is the GRPO trainer's generation server, "
        "not a spec). An LLM judge is prompted as the ΔBelief-RL paper's judge was and its "
        "verdict read from the last `<answer>…</answer>` (yes, no, finished, invalid, repeated; "
        "anything else is `unknown`):",
        "",
        "```text",
        JUDGE_SYSTEM_PROMPT,
        "",
        JUDGE_PROMPT,
        "```",
        "",
        "## Model specs in the web app",
        "",
        "A catalog row (admin → Model specs, or registered by a job) has a kind, a role "
        "(guesser, judge, both, or base for training only) and the fields its kind reads; "
        "`webapp/catalog/builders.py` turns it into a spec. `path`, `endpoint` and "
        "`remote_model` below stand for the row's fields; an `adapter_path` is loaded on top of "
        "a `transformers` or `vllm` model.",
        "",
        "| Model kind | What | Spec it becomes |",
        "|---|---|---|",
    ]
    for kind, label, spec in model_kind_specs():
        out.append(f"| `{kind}` | {cell(label)} | {cell(spec)} |")
    out.append("")
    return "\n".join(out)
