"""bench.compute: one JSON of every part; --merge keeps the saved parts a run did not measure."""

from bench import compute


def test_a_merged_run_keeps_the_saved_parts_it_did_not_measure():
    saved = {
        "command": "python -m bench.compute",
        "load_average_start": [2.0],
        "speedups": {"sft": 3.1, "judge": 2.5, "generation_b32": 1.4},
        "sft": {"speedup": 3.1},
        "judge": {"speedup": {"shipped": 2.5}},
        "generation": {"old": True},
    }
    new = {
        "command": "python -m bench.compute --parts generation",
        "load_average_start": [1.0],
        "load_average_end": [1.5],
        "speedups": {"generation_b32": 2.0},
        "generation": {"new": True},
    }
    out = compute.merged(saved, new, ["generation"])
    assert out["generation"] == {"new": True}
    assert out["sft"] == {"speedup": 3.1} and out["judge"] == saved["judge"]
    assert out["speedups"] == {"sft": 3.1, "generation_b32": 2.0, "judge": 2.5}
    assert out["runs"]["generation"]["command"].endswith("--parts generation")
    assert out["runs"]["sft"]["command"] == "python -m bench.compute"


def test_the_machine_record_says_what_auto_resolves_to(monkeypatch):
    monkeypatch.setenv("TWENTYQ_CPU_BF16", "0")
    record = compute.machine()
    assert record["cpu_has_bf16"] is False and record["auto_resolves_to"] == "float32"
    assert record["cores"] >= 1


def test_a_part_in_its_own_process_that_fails_is_an_error_not_a_missing_part():
    import pytest

    with pytest.raises(RuntimeError, match="the no-such-part part failed"):
        compute.part_in_own_process("no-such-part", quick=True, threads=1)
