"""The embedded broker survives a message it cannot read yet (issue 34 item 22): writes are atomic,
a half-written file is re-read until complete, and garbage is set aside with a log line."""

from __future__ import annotations

import json
import logging
import os
import threading
import time

import pytest
from kombu import Connection
from kombu.transport.virtual import Empty

from workers import broker


@pytest.fixture
def channel(tmp_path):
    folders = {name: tmp_path / name for name in ("queue", "processed", "control")}
    for folder in folders.values():
        folder.mkdir()
    options = {
        "data_folder_in": str(folders["queue"]),
        "data_folder_out": str(folders["queue"]),
        "processed_folder": str(folders["processed"]),
        "control_folder": str(folders["control"]),
    }
    with Connection("filesystem://", transport=broker.Transport, transport_options=options) as c:
        yield c.default_channel


def message_files(folder) -> list[str]:
    return sorted(os.listdir(folder))


def test_a_put_message_appears_whole_and_leaves_no_partial_file(channel, tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace

    def replace(src, dst):  # what a reader listing the folder could see before the rename
        seen.append((message_files(tmp_path / "queue"), os.path.basename(src)))
        real_replace(src, dst)

    monkeypatch.setattr(broker.os, "replace", replace)
    channel._put("cpu", {"body": "x" * 10_000})
    [(listing, partial)] = seen
    assert listing == [partial] and partial.partition(".")[2] != "cpu.msg"  # no reader takes it
    [name] = message_files(tmp_path / "queue")
    assert name.endswith(".cpu.msg")
    assert channel._get("cpu") == {"body": "x" * 10_000}


def test_a_message_still_being_written_is_read_once_complete(channel, tmp_path):
    # kombu's own writer (or any other) writes in place: the reader claims it half-written
    text = json.dumps({"body": "hello", "headers": {}})
    path = tmp_path / "queue" / "1_a.housekeeping.msg"
    writer = open(path, "w")  # noqa: SIM115 - held open across the claim, as a writer would
    writer.write(text[:7])
    writer.flush()

    def finish():
        time.sleep(0.25)
        writer.write(text[7:])
        writer.close()

    thread = threading.Thread(target=finish)
    thread.start()
    try:
        assert channel._get("housekeeping") == {"body": "hello", "headers": {}}
    finally:
        thread.join()
    assert message_files(tmp_path / "queue") == [] and message_files(tmp_path / "processed") == []


def test_an_unreadable_message_is_set_aside_with_a_log_line(channel, tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(broker, "READ_FIRST_WAIT", 0.01)
    (tmp_path / "queue" / "1_a.housekeeping.msg").write_text('{"body": "trunc')
    (tmp_path / "queue" / "2_b.housekeeping.msg").write_text('{"body": "next"}')
    with caplog.at_level(logging.ERROR, logger="workers.broker"):
        assert channel._get("housekeeping") == {"body": "next"}  # the worker carries on
        with pytest.raises(Empty):
            channel._get("housekeeping")
    assert message_files(tmp_path / "unreadable") == ["1_a.housekeeping.msg"]
    assert "set aside an unreadable broker message" in caplog.text
    assert "1_a.housekeeping.msg" in caplog.text


def test_the_app_uses_this_transport_on_the_filesystem_broker(settings):
    from workers.celery import app

    if not settings.CELERY_BROKER_URL.startswith("filesystem://"):
        pytest.skip("the embedded broker is not in use")
    assert app.connection_for_write().get_transport_cls() is broker.Transport
    assert app.connection_for_read().get_transport_cls() is broker.Transport


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_survives_an_unreadable_message_and_runs_the_next_job(start_worker, tmp_path):
    from tests.workers.conftest import wait_for
    from tests.workers.test_round_trip import publish, status_of
    from webapp.jobs.models import Job, JobStatus

    worker = start_worker("filesystem://", tmp_path)
    (tmp_path / "broker" / "queue" / "0_garbage.cpu.msg").write_text('{"body": "half-writ')
    job = Job.objects.create(kind="smoke", config={"message": "after garbage", "steps": 1})
    publish(job, "filesystem://", {**filesystem_options(tmp_path)})
    wait_for(
        lambda: status_of(job) == JobStatus.FINISHED,
        what=f"job to finish; worker log:\n{worker.log()}",
    )
    wait_for(lambda: "set aside an unreadable broker message" in worker.log(), timeout=30)
    assert worker.proc.poll() is None  # no "Unrecoverable error"
    assert (tmp_path / "broker" / "unreadable" / "0_garbage.cpu.msg").exists()


def filesystem_options(data_dir) -> dict:
    from tests.workers.conftest import filesystem_transport_options

    return filesystem_transport_options(data_dir)
