"""Issue 34 item 9: the information-gain guesser people play against by default ships a measured
evaluation beside the tiny guessers' (same words, judge, k, turns and rule), so the boards and the
home page's "Top models" start with the strong baseline."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from dataclasses import replace

import pytest

from tests.webapp.catalog.test_shipped_guessers import snapshot
from webapp.catalog import shipped
from webapp.catalog.services import seed_model_specs


def test_the_infogain_snapshot_is_a_measured_run_with_its_provenance():
    index = json.loads((shipped.EVALUATION_DIR / "evaluation.json").read_text())["guessers"]
    meta, tiny = index["infogain"], index["tiny-20q-sft"]
    assert meta["command"] == (
        "python -m games eval --guesser=infogain --judge=kb:closed "
        "--words=games/data/models/pool/test.txt --samples=8 --max-turns=20 --win-rule=lemma "
        "--seed=0 --json --save-games=games/data/models/evaluation/infogain.jsonl.gz"
    )
    for flag in ("--judge=", "--words=", "--samples=", "--max-turns="):  # as the tiny guessers'
        assert re.search(f"{flag}\\S+", meta["command"])[0] in tiny["command"]
    assert meta["win_rule"] == tiny["win_rule"] == "lemma" and meta["spec_kind"] == "infogain"
    assert re.fullmatch("[0-9a-f]{40}", meta["commit"])
    games = (shipped.EVALUATION_DIR / meta["file"]).read_bytes()
    assert hashlib.sha256(games).hexdigest() == meta["digest"]
    summary = meta["summary"]
    assert (summary["n_games"], summary["n_words"], summary["k"]) == (1200, 150, 8)
    assert summary["success_rate"] > 0.9  # measured: 94.0% [90.2, 97.8]


@pytest.mark.django_db
def test_the_seed_puts_infogain_first_on_the_board_and_the_home_page(tmp_path, client):
    seed_model_specs()
    shipped.seed_pool_word_list()
    shipped.seed_guesser_specs()
    tiny = snapshot(tmp_path, "tiny-20q-sft")  # wins 1 of its 2 games
    strong = {**snapshot(tmp_path, "infogain"), "spec_kind": "infogain"}
    games = shipped.read_snapshot(tmp_path / "infogain.jsonl.gz")
    won = [replace(games[0], secret=secret) for secret in ("rocket", "anatomy")]  # wins both
    with gzip.open(tmp_path / "infogain.jsonl.gz", "wt") as out:
        out.writelines(json.dumps(g.to_dict()) + "\n" for g in won)
    index = {"guessers": {"tiny-20q-sft": tiny, "infogain": strong}}
    (tmp_path / "evaluation.json").write_text(json.dumps(index))
    assert shipped.seed_shipped_evaluations(tmp_path) == ["tiny-20q-sft", "infogain"]
    html = client.get("/").content.decode()
    top = re.search(r'id="top-models">.*?</ol>', html, re.S)[0]
    assert top.index(">infogain</a>") < top.index(">tiny-20q-sft</a>")
