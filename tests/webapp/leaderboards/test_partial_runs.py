"""Issue 34 item 21: what the leaderboard text promises of a stopped evaluation ("a stopped or
cancelled one shows its partial results on its run page") holds where a researcher stops it (the
run page's status block, swapped in by htmx, carries them) and on the compare page, whose tables
scroll in their own box instead of widening the page."""

from __future__ import annotations

import re

import pytest

from webapp.jobs.models import Job

# the scalar keys a real evaluation stores (games eval's summary): the compare table's columns
FULL_RESULT = {
    "n_games": 1200, "n_words": 150, "k": 8, "success_rate": 0.94,
    "success_ci95": [0.90, 0.98], "win_rule": "lemma", "strict_success_rate": 0.58,
    "strict_success_ci95": [0.5, 0.65], "reference_success_rate": 0.876,
    "reference_success_ci95": [0.82, 0.93], "pass_at_k": 0.94, "mean_turns": 14.1,
    "mean_turns_solved": 13.8, "invalid_rate": 0.0, "repeated_rate": 0.0, "unknown_rate": 0.0,
    "guesser": "infogain", "judge": "kb-closed", "words": "bench-learning/pool", "seconds": 183.5,
}  # fmt: skip


@pytest.fixture
def stopped(researcher, spec, word_list, make_game, client):
    kb, guesser = spec("kb", role="judge", kind="kb"), spec("quitter")
    job = Job.objects.create(
        kind="evaluation", status="stopped", progress=0.25, config={"samples": 8}
    )
    for i, won in enumerate([True, True, False]):
        make_game(f"w{i}", won, 6, guesser=guesser, judge=kb, word_list=word_list, job=job)
    client.force_login(researcher)
    return job


def test_the_status_block_htmx_swaps_in_carries_the_partial_results(client, stopped):
    block = client.get(f"/jobs/{stopped.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert block.startswith('<div id="job-status"')  # the block the Cancel button swaps
    assert 'id="partial-results"' in block and "stopped, partial" in block
    assert "<td>66.7% [" in block


def test_a_run_stopped_before_any_game_says_so_under_results(client, researcher):
    job = Job.objects.create(kind="evaluation", status="stopped", config={"samples": 8})
    client.force_login(researcher)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert 'id="partial-results"' in page and "before it stored a game" in page


def test_the_compare_page_shows_a_stopped_runs_partial_results_in_a_scrolling_box(client, stopped):
    done = Job.objects.create(kind="evaluation", status="finished", result=FULL_RESULT)
    page = client.get(f"/jobs/compare/?ids={done.pk},{stopped.pk}").content.decode()
    table = page[page.index('id="final-results"') : page.index("</table>")]
    row = table[table.index(f">job {stopped.pk}</a>") :]
    assert "stopped, partial" in row
    cells = re.findall(r"<td>([^<]*)</td>", row)
    # kind, then n games, n words, k and success (they were dashes: the result was empty)
    assert cells[1:4] == ["3", "3", "1"] and cells[4].startswith("66.7% [")
    assert 'id="compare-partial"' in page
    assert page.count('<div class="table-scroll"><table class="data') == 2
