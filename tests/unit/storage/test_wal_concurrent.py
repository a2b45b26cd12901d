import os
import threading

from storage.options import StorageOptions
from storage.wal import Wal


def test_group_commit_covers_concurrent_committers_with_fewer_fsyncs(tmp_path, monkeypatch):
    wal = Wal.open(tmp_path, StorageOptions(fsync=True))
    fsyncs = 0
    real_fsync = os.fdatasync
    count_lock = threading.Lock()

    def slow_fsync(fd: int) -> None:
        nonlocal fsyncs
        with count_lock:
            fsyncs += 1
        threading.Event().wait(0.005)
        real_fsync(fd)

    wal.sync(wal.append(b"warm up"))
    monkeypatch.setattr(os, "fdatasync", slow_fsync)
    threads_n, commits_per_thread = 8, 20
    barrier = threading.Barrier(threads_n)
    errors: list[BaseException] = []

    def committer(thread_idx: int) -> None:
        try:
            barrier.wait()
            for commit_idx in range(commits_per_thread):
                lsn = wal.append(f"{thread_idx}:{commit_idx}".encode())
                wal.sync(lsn)
                assert wal.durable_lsn >= lsn
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=committer, args=(i,)) for i in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    monkeypatch.setattr(os, "fdatasync", real_fsync)
    assert not errors
    total = threads_n * commits_per_thread
    assert fsyncs < total / 2
    wal.close()
    replayed = list(Wal.open(tmp_path, StorageOptions(fsync=False)).replay())
    assert len(replayed) == total + 1
    for thread_idx in range(threads_n):
        mine = [p for p in replayed if p.startswith(f"{thread_idx}:".encode())]
        assert mine == [f"{thread_idx}:{i}".encode() for i in range(commits_per_thread)]
