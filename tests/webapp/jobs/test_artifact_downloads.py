"""The artifact download guard: a researcher downloads what a job exported or checkpointed, and
nothing outside the output folders (no path, no symlink) is ever served."""

from __future__ import annotations

import pytest
from django.conf import settings

from webapp.jobs.models import Artifact, Job, JobStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def dirs(tmp_path, settings):
    """Private export and checkpoint folders, plus a secret file beside them."""
    settings.EXPORTS_DIR = tmp_path / "exports"
    settings.CHECKPOINTS_DIR = tmp_path / "checkpoints"
    for d in (settings.EXPORTS_DIR, settings.CHECKPOINTS_DIR):
        d.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("do not serve me")
    return tmp_path


@pytest.fixture
def artifact(researcher):
    job = Job.objects.create(
        kind="export", config={}, status=JobStatus.FINISHED, created_by=researcher
    )

    def make(path) -> Artifact:
        return Artifact.objects.create(job=job, kind="export-jsonl", name="games", path=str(path))

    return make


def test_an_export_artifact_downloads_with_its_content_and_name(rclient, dirs, artifact):
    path = settings.EXPORTS_DIR / "job-1" / "games.jsonl"
    path.parent.mkdir()
    path.write_bytes(b'{"word": "cat"}\n')
    response = rclient.get(f"/jobs/artifacts/{artifact(path).pk}/download/")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b'{"word": "cat"}\n'
    assert response["Content-Disposition"] == 'attachment; filename="games.jsonl"'
    assert response["Content-Type"] == "application/jsonl"  # as the other JSONL downloads


def test_a_checkpoint_folder_artifact_downloads_too(rclient, dirs, artifact):
    path = settings.CHECKPOINTS_DIR / "job-1" / "metrics.json"
    path.parent.mkdir()
    path.write_text("{}")
    response = rclient.get(f"/jobs/artifacts/{artifact(path).pk}/download/")
    assert response.status_code == 200 and b"".join(response.streaming_content) == b"{}"


@pytest.mark.parametrize(
    ("name", "media_type"),
    [("funnel.json", "application/json"), ("rows.jsonl.gz", "application/gzip")],
)
def test_other_artifacts_keep_their_media_type(rclient, dirs, artifact, name, media_type):
    """Only the export formats' types are the platform's own; any other file is typed by its name
    as before (a curation funnel is JSON, a compressed file gzip), not application/octet-stream."""
    path = settings.CHECKPOINTS_DIR / "job-1" / name
    path.parent.mkdir()
    path.write_bytes(b"{}")
    response = rclient.get(f"/jobs/artifacts/{artifact(path).pk}/download/")
    assert response["Content-Type"] == media_type


@pytest.mark.parametrize(
    "where",
    [
        "{exports}/job-1/../../secret.txt",  # climbs out with ../
        "{exports}/../secret.txt",
        "{root}/secret.txt",  # absolute path outside both folders
        "/etc/passwd",
        "{root}/exports-evil/games.jsonl",  # a sibling whose name merely starts like the folder
        "{exports}/job-1/missing.jsonl",  # inside, but no such file
        "{exports}/job-1",  # a folder, not a file
    ],
)
def test_artifact_paths_outside_the_output_folders_are_404(where, rclient, dirs, artifact):
    (settings.EXPORTS_DIR / "job-1").mkdir()
    (dirs / "exports-evil").mkdir()
    (dirs / "exports-evil" / "games.jsonl").write_text("evil")
    path = where.format(exports=settings.EXPORTS_DIR, root=dirs)
    response = rclient.get(f"/jobs/artifacts/{artifact(path).pk}/download/")
    assert response.status_code == 404
    assert b"do not serve me" not in response.content and b"evil" not in response.content


def test_symlinks_escaping_the_output_folders_are_404(rclient, dirs, artifact):
    job_dir = settings.EXPORTS_DIR / "job-1"
    job_dir.mkdir()
    (job_dir / "games.jsonl").symlink_to(dirs / "secret.txt")
    (job_dir / "up").symlink_to(dirs, target_is_directory=True)
    for path in (job_dir / "games.jsonl", job_dir / "up" / "secret.txt"):
        response = rclient.get(f"/jobs/artifacts/{artifact(path).pk}/download/")
        assert response.status_code == 404, path


def test_a_symlink_staying_inside_the_exports_is_served(rclient, dirs, artifact):
    job_dir = settings.EXPORTS_DIR / "job-1"
    job_dir.mkdir()
    (job_dir / "games-v1.jsonl").write_text("v1")
    (job_dir / "latest.jsonl").symlink_to(job_dir / "games-v1.jsonl")
    response = rclient.get(f"/jobs/artifacts/{artifact(job_dir / 'latest.jsonl').pk}/download/")
    assert response.status_code == 200 and b"".join(response.streaming_content) == b"v1"


def test_downloads_are_for_researchers_only(client, make_user, dirs, artifact):
    path = settings.EXPORTS_DIR / "games.jsonl"
    path.write_text("x")
    url = f"/jobs/artifacts/{artifact(path).pk}/download/"
    assert client.get(url)["Location"] == f"/accounts/login/?next={url}"
    client.force_login(make_user("player"))
    assert client.get(url).status_code == 403
    assert client.get("/jobs/artifacts/999999/download/").status_code == 403
    client.force_login(make_user("researcher"))
    assert client.get("/jobs/artifacts/999999/download/").status_code == 404
