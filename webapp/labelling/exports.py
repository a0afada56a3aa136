"""Labels out: every item with its labels, votes and gold as JSONL/Parquet, and the gold set as a
judge-SFT dataset (the LLM judge's chat, games.llm.chat.judge_messages, with an <answer> target).

Parquet files are written with explicit schemas (nested lists of structs), so `datasets` loads them
even when a column happens to be empty.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from games.llm.chat import judge_messages
from webapp.core import exports
from webapp.labelling import selectors
from webapp.labelling.models import DisagreementItem
from webapp.labelling.votes import history_turns
from webapp.play.models import Turn

HISTORY_FIELDS = ("index", "question", "verdict", "feedback")  # of each earlier turn
SFT_TARGETS = {"yes": "Yes", "no": "No", "invalid": "Invalid"}  # gold "unclear" has no target


def _schemas():
    import pyarrow as pa

    history = pa.list_(pa.struct(exports.model_columns(Turn, HISTORY_FIELDS)))
    labels = pa.list_(
        pa.struct(
            [
                ("annotator", pa.string()),
                ("verdict", pa.string()),
                ("seconds", pa.float64()),
                ("created_at", pa.string()),
            ]
        )
    )
    votes = pa.list_(
        pa.struct(
            [
                ("judge", pa.string()),
                ("verdict", pa.string()),
                ("raw", pa.string()),
                ("job_id", pa.int64()),
            ]
        )
    )
    items = pa.schema(
        [
            ("id", pa.int64()),
            ("secret", pa.string()),
            ("question", pa.string()),
            ("history", history),
            ("is_control", pa.bool_()),
            ("job_id", pa.int64()),
            ("source_turn_id", pa.int64()),
            ("labels_needed", pa.int64()),
            ("labels_count", pa.int64()),
            ("gold", pa.string()),
            ("gold_source", pa.string()),
            ("adjudicated_by", pa.string()),
            ("labels", labels),
            ("votes", votes),
        ]
    )
    message = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    sft = pa.schema(
        [
            ("messages", message),
            ("item_id", pa.int64()),
            ("secret", pa.string()),
            ("question", pa.string()),
            ("gold", pa.string()),
            ("gold_source", pa.string()),
        ]
    )
    return {"items": items, "sft": sft}


def _history(history: list[dict]) -> list[dict]:
    return [
        {
            "index": int(h.get("index", i)),
            "question": str(h.get("question", "")),
            "verdict": str(h.get("verdict", "")),
            "feedback": str(h.get("feedback", "")),
        }
        for i, h in enumerate(history or [])
    ]


def label_rows() -> list[dict]:
    gold = selectors.gold_labels()
    items = (
        DisagreementItem.objects.select_related("adjudicated_by")
        .prefetch_related("labels__annotator", "votes")
        .order_by("id")
    )
    rows = []
    for item in items:
        label, source = gold.get(item.pk, ("", ""))
        rows.append(
            {
                "id": item.pk,
                "secret": item.secret,
                "question": item.question,
                "history": _history(item.history),
                "is_control": item.is_control,
                "job_id": item.job_id,
                "source_turn_id": item.source_turn_id,
                "labels_needed": item.labels_needed,
                "labels_count": item.labels_count,
                "gold": label,
                "gold_source": source,
                "adjudicated_by": item.adjudicated_by.username if item.adjudicated_by else None,
                "labels": [
                    {
                        "annotator": lab.annotator.username,
                        "verdict": lab.verdict,
                        "seconds": lab.seconds,
                        "created_at": lab.created_at.isoformat(),
                    }
                    for lab in sorted(item.labels.all(), key=lambda x: x.id)
                ],
                "votes": [
                    {"judge": v.judge_name, "verdict": v.verdict, "raw": v.raw, "job_id": v.job_id}
                    for v in sorted(item.votes.all(), key=lambda x: x.id)
                ],
            }
        )
    return rows


def sft_rows() -> list[dict]:
    """One chat per gold item with a yes/no/invalid gold: the judge prompt and
    `<answer>…</answer>`."""
    gold = selectors.gold_labels()
    rows = []
    for item in DisagreementItem.objects.filter(pk__in=gold).order_by("id"):
        label, source = gold[item.pk]
        if label not in SFT_TARGETS:
            continue
        messages = judge_messages(item.secret, item.question, history_turns(_history(item.history)))
        messages.append({"role": "assistant", "content": f"<answer>{SFT_TARGETS[label]}</answer>"})
        rows.append(
            {
                "messages": messages,
                "item_id": item.pk,
                "secret": item.secret,
                "question": item.question,
                "gold": label,
                "gold_source": source,
            }
        )
    return rows


def parquet_bytes(rows: list[dict], schema: str = "items") -> bytes:
    return exports.parquet_bytes(rows, _schemas()[schema])


def sft_dataset_write(*, when: datetime | None = None) -> tuple[Path, list[Path], int]:
    """Write the judge-SFT dataset (JSONL and Parquet) under EXPORTS_DIR/labelling/; returns the
    folder, the files and the number of examples."""
    rows = sft_rows()
    stamp = (when or timezone.now()).strftime("%Y%m%d-%H%M%S-%f")
    folder = Path(settings.EXPORTS_DIR) / "labelling" / f"judge-sft-{stamp}"
    folder.mkdir(parents=True, exist_ok=True)
    files = [folder / "train.jsonl", folder / "train.parquet"]
    files[0].write_bytes(exports.jsonl_bytes(rows))
    files[1].write_bytes(parquet_bytes(rows, "sft"))
    return folder, files, len(rows)
