"""Word-list pages: lists and versions, one version's words, compare two versions, downloads.

Public and read-only: the word lists are the boards' benchmark data (the paper's lists and the
shipped pool are public files already), so every visitor may read what a board was measured on.
New versions come from curation jobs (researchers); a list's provenance and curation job are
shown to researchers only.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, render

from webapp.catalog import selectors
from webapp.catalog.exports import FORMATS, export_bytes, export_filename
from webapp.catalog.models import Split, WordList
from webapp.core.exports import download

SORTS = {
    "word": ("word",),
    "difficulty": ("difficulty", "word"),
    "-difficulty": ("difficulty", "word"),
    "solve_rate": ("solve_rate", "word"),
    "-solve_rate": ("solve_rate", "word"),
}
PAGE_SIZE = 200
MAX_COMPARE_ROWS = 500
MAX_PROVENANCE_CHARS = 50_000


def _filters(request) -> tuple[str | None, str | None]:
    """(split, subset) from the query: no split = any, `none` = words without a split."""
    split = request.GET.get("split") or None
    if split == "none":
        split = ""
    if split is not None and split not in Split.values:
        raise Http404(f"no split {split!r}")
    return split, request.GET.get("subset") or None


def _query(split: str | None, subset: str | None) -> str:
    params = {"split": "none" if split == "" else split, "subset": subset}
    return urlencode({k: v for k, v in params.items() if v})


def _sorted(rows: list[dict], sort: str) -> list[dict]:
    keys = SORTS.get(sort, SORTS["word"])
    reverse = sort.startswith("-")
    present = [r for r in rows if all(r[k] is not None for k in keys)]
    missing = [r for r in rows if any(r[k] is None for k in keys)]
    return sorted(present, key=lambda r: tuple(r[k] for k in keys), reverse=reverse) + missing


def word_lists(request):
    return render(
        request,
        "catalog/word_lists.html",
        {"lists": selectors.word_list_summaries(), "versions": selectors.latest_versions()},
    )


def word_list_detail(request, pk: int):
    word_list = get_object_or_404(
        WordList.objects.select_related("parent", "curation_job", "created_by"), pk=pk
    )
    split, subset = _filters(request)
    all_rows = selectors.word_list_rows(word_list)
    rows = [
        r
        for r in all_rows
        if (split is None or r["split"] == split) and (subset is None or subset in r["subsets"])
    ]
    sort = request.GET.get("sort", "word")
    page = Paginator(_sorted(rows, sort), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "catalog/word_list.html",
        {
            "word_list": word_list,
            "versions": selectors.word_list_versions(word_list.name),
            "page": page,
            "n_rows": len(rows),
            "split_counts": selectors.word_list_split_counts(word_list),
            "subset_counts": selectors.word_list_subset_counts(all_rows),
            "funnel": word_list.provenance.get("funnel") or [],
            "filter_split": split,
            "filter_subset": subset or "",
            "sort": sort,
            "formats": list(FORMATS),
            "splits": [s for s in Split.values if s],
            "query": _query(split, subset),
            "provenance_json": json.dumps(word_list.provenance, indent=1, default=str)[
                :MAX_PROVENANCE_CHARS
            ],
        },
    )


def word_list_compare(request):
    try:
        new = get_object_or_404(WordList, pk=int(request.GET.get("new", "")))
        old_id = request.GET.get("old") or (new.parent_id and str(new.parent_id))
        old = get_object_or_404(WordList, pk=int(old_id)) if old_id else None
    except ValueError:
        raise Http404("old and new must be word-list ids") from None
    diff = selectors.word_list_compare(old=old, new=new) if old is not None else None
    return render(
        request,
        "catalog/compare.html",
        {
            "new": new,
            "old": old,
            "diff": diff,
            "limit": MAX_COMPARE_ROWS,
            "choices": WordList.objects.order_by("name", "-version"),
        },
    )


def word_list_download(request, pk: int, fmt: str):
    if fmt not in FORMATS:
        raise Http404(f"no export format {fmt!r}")
    word_list = get_object_or_404(WordList, pk=pk)
    split, subset = _filters(request)
    rows = selectors.word_list_rows(word_list, split=split, subset=subset)
    suffix = "".join(f"-{v}" for v in (split, subset) if v)
    return download(export_bytes(word_list, rows, fmt), export_filename(word_list, fmt, suffix))
