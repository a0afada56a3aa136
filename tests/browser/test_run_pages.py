"""Issue 34 item 21: the compare page of a finished and a stopped evaluation fits a 1,280 px window
(it was 1,519 px wide) and a phone's: its wide tables scroll in their own box."""

from __future__ import annotations

import pytest

from tests.browser.test_layout import log_in, overflow
from tests.webapp.leaderboards.test_partial_runs import FULL_RESULT

pytestmark = pytest.mark.browser


def test_the_compare_page_is_no_wider_than_the_window(page, live_server, make_user):
    from webapp.jobs.models import Job

    result = {**FULL_RESULT, "guesser": "hf:games/data/models/tiny-20q-starpo", "pool": "x" * 60}
    done = Job.objects.create(kind="evaluation", status="finished", result=result)
    stopped = Job.objects.create(kind="evaluation", status="stopped", config={"samples": 8})
    log_in(page, live_server, make_user("researcher"))
    assert overflow(page, f"/jobs/compare/?ids={done.pk},{stopped.pk}") is None
    # the table itself is wider than the window: it scrolls in its box
    wide = page.locator("#final-results").evaluate("t => t.scrollWidth")
    assert wide > page.viewport_size["width"]
