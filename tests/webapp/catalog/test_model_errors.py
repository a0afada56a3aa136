"""A model that cannot be built or used: people read why only when the project wrote the reason for
them (a weights file and how to rebuild it); any other error's text stays in the log."""

from __future__ import annotations

import logging

from games.judges.learned import WeightsError
from webapp.catalog.builders import model_unusable


def test_an_explained_error_is_shown_with_its_reason():
    err = WeightsError("the learned judge's weights /x/missing.npz are missing; rebuild them")
    text = model_unusable("The model “learned”", err)
    assert text == f"The model “learned” cannot be used right now ({err})."


def test_any_other_error_is_logged_not_shown(caplog):
    err = ConnectionError("10.0.0.7:8000 refused; token sk-secret")
    with caplog.at_level(logging.ERROR, logger="webapp.catalog.builders"):
        text = model_unusable("The judge “remote”", err)
    assert text == "The judge “remote” cannot be used right now."
    assert "10.0.0.7" not in text and caplog.records[0].exc_info[1] is err
