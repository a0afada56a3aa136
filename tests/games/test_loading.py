import threading
import time

from games.loading import once_per_path


def test_once_per_path_loads_each_resolved_path_once_even_when_called_concurrently(tmp_path):
    calls = []

    @once_per_path(tmp_path / "default.bin")
    def load(path):
        calls.append(path)
        time.sleep(0.05)  # slow enough that the threads below overlap
        return object()

    results = []
    threads = [threading.Thread(target=lambda: results.append(load())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [(tmp_path / "default.bin").resolve()] and all(r is results[0] for r in results)
    assert (
        load(str(tmp_path / "sub" / ".." / "default.bin")) is results[0]
    )  # the same file, resolved
    other = load(tmp_path / "other.bin")
    assert other is not results[0] and load(tmp_path / "other.bin") is other and len(calls) == 2
