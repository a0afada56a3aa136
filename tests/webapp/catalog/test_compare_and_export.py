import json

import pytest

from webapp.catalog.selectors import word_list_compare, word_list_rows
from webapp.catalog.services import word_list_version_create

pytestmark = pytest.mark.django_db


def entry(word, split, difficulty, solve_rate=None, subsets=()):
    return {
        "word": word,
        "split": split,
        "difficulty": difficulty,
        "solve_rate": solve_rate,
        "mean_questions": 9.5 if solve_rate else None,
        "category": "thing",
        "stats": {"subsets": list(subsets), "games": 4},
    }


@pytest.fixture
def pair(db):
    old = word_list_version_create(
        name="hand/built",
        entries=[
            entry("apple", "val", 0.1, 0.5),
            entry("bread", "test", 1.0, 0.25),
            entry("cheese", "rl", None),
            entry("dog", "sft", 0.5, 0.5),
            entry("fish", "rl", 0.2, 0.75),
        ],
    )
    new = word_list_version_create(
        name="hand/built",
        entries=[
            entry("apple", "val", 0.1, 0.5),
            entry("bread", "rl", 1.0, 0.25, ["curriculum_5"]),
            entry("cheese", "rl", 0.3, 0.5),
            entry("eel", "test", -1.0, 1.0),
            entry("fish", "", -0.4, 0.875),
        ],
    )
    return old, new


def test_compare_reports_added_removed_moved_and_difficulty_changes(pair):
    old, new = pair
    assert (new.version, new.parent) == (2, old)
    diff = word_list_compare(old=old, new=new)
    assert [r["word"] for r in diff["added"]] == ["eel"] and diff["added"][0]["split"] == "test"
    assert [r["word"] for r in diff["removed"]] == ["dog"]
    assert diff["moved"] == [
        {"word": "bread", "from": "test", "to": "rl"},
        {"word": "fish", "from": "rl", "to": ""},
    ]
    assert diff["split_moves"] == {"rl → -": 1, "test → rl": 1}
    changes = {c["word"]: c for c in diff["difficulty_changed"]}
    assert set(changes) == {"cheese", "fish"}  # apple and bread kept their difficulty
    assert (
        changes["cheese"]["from"] is None
        and changes["cheese"]["to"] == 0.3
        and changes["cheese"]["delta"] is None
    )
    assert (
        changes["fish"]["delta"] == pytest.approx(-0.6)
        and changes["fish"]["solve_rate_to"] == 0.875
    )
    assert diff["unchanged"] == 1  # apple
    assert diff["counts"] == {
        "old": 5,
        "new": 5,
        "added": 1,
        "removed": 1,
        "moved": 2,
        "difficulty_changed": 2,
    }


def test_compare_page_and_permissions(pair, client, researcher, player):
    old, new = pair
    # public benchmark data (issue 34 item 21): guests and players read it too
    assert client.get(f"/lists/compare/?new={new.pk}").status_code == 200
    client.force_login(player)
    assert client.get(f"/lists/compare/?new={new.pk}").status_code == 200
    assert client.get(f"/lists/{new.pk}/download/txt/").status_code == 200
    client.force_login(researcher)
    page = client.get(
        f"/lists/compare/?new={new.pk}"
    ).content.decode()  # old defaults to the parent
    assert "test → rl" in page and "eel" in page and "dog" in page
    assert client.get("/lists/compare/?new=abc").status_code == 404
    listing = client.get("/lists/").content.decode()
    assert f"/lists/{new.pk}/" in listing and "v2" in listing
    detail = client.get(f"/lists/{new.pk}/?split=rl&sort=-difficulty").content.decode()
    assert (
        detail.index("bread") < detail.index("cheese")
        and "eel" not in detail.split('id="entries"')[1]
    )


def test_exports_round_trip_as_text_jsonl_and_parquet(pair, client, researcher, tmp_path):
    _, new = pair
    client.force_login(researcher)
    rows = word_list_rows(new)

    text = client.get(f"/lists/{new.pk}/download/txt/")
    assert text["Content-Disposition"] == 'attachment; filename="hand_built-v2.txt"'
    assert text.content.decode().splitlines() == [r["word"] for r in rows]

    assert text["Content-Type"] == "text/plain; charset=utf-8"
    jsonl = client.get(f"/lists/{new.pk}/download/jsonl/")
    assert jsonl["Content-Type"] == "application/jsonl"
    lines = jsonl.content.decode().splitlines()
    parsed = [json.loads(line) for line in lines]
    assert [{k: v for k, v in p.items() if k not in ("list", "version")} for p in parsed] == rows
    assert parsed[0]["list"] == "hand/built" and parsed[0]["version"] == 2

    response = client.get(f"/lists/{new.pk}/download/parquet/")
    path = tmp_path / "words.parquet"
    path.write_bytes(response.content)
    import datasets

    loaded = datasets.load_dataset("parquet", data_files=str(path), split="train")
    assert loaded["word"] == [r["word"] for r in rows] and loaded["split"] == [
        r["split"] for r in rows
    ]
    assert loaded["difficulty"] == [r["difficulty"] for r in rows]
    assert loaded["subsets"][0] == [] and loaded["subsets"][1] == ["curriculum_5"]
    assert [json.loads(s) for s in loaded["stats"]] == [r["stats"] for r in rows]

    only_rl = client.get(
        f"/lists/{new.pk}/download/txt/?split=rl&subset=curriculum_5"
    ).content.decode()
    assert only_rl == "bread\n"
    unassigned = client.get(f"/lists/{new.pk}/download/txt/?split=none").content.decode()
    assert unassigned == "fish\n"
    assert client.get(f"/lists/{new.pk}/download/csv/").status_code == 404
    assert client.get(f"/lists/{new.pk}/download/txt/?split=train").status_code == 404


def test_subset_counts_are_in_natural_order():
    from webapp.catalog.selectors import word_list_subset_counts

    rows = [
        {"subsets": ["rl_band", "curriculum_5", "curriculum_10", "curriculum_66"]},
        {"subsets": ["curriculum_5"]},
    ]
    assert list(word_list_subset_counts(rows).items()) == [
        ("curriculum_5", 2),
        ("curriculum_10", 1),
        ("curriculum_66", 1),
        ("rl_band", 1),
    ]
