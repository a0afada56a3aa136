import pytest

from tests.sending import tasks_held
from webapp.catalog.services import SeedEntry, seed_model_specs, word_list_create

LIST_A = [
    "dog",
    "cat",
    "horse",
    "apple",
    "banana",
    "car",
    "bicycle",
    "chair",
    "table",
    "guitar",
    "piano",
    "hammer",
]
LIST_B = [
    "kite",
    "moon",
    "river",
    "mountain",
    "shoe",
    "hat",
    "bread",
    "cheese",
    "elephant",
    "spoon",
    "bottle",
    "book",
    "dog",
]


@pytest.fixture
def small_lists(db):
    seed_model_specs()
    word_list_create(name="t/a", entries=[SeedEntry(w, "thing") for w in LIST_A])
    word_list_create(name="t/b", entries=[SeedEntry(w) for w in LIST_B])


@pytest.fixture
def submit(db):
    from webapp.jobs.services import job_submit

    def go(kind="curation", **params):
        with tasks_held():
            return job_submit(kind=kind, params=params)

    return go
