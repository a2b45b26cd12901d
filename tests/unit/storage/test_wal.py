import errno
import os
import struct

import pytest

from storage.errors import DataCorrupted, DiskFull, IoError
from storage.options import StorageOptions
from storage.wal import Wal, frame, segment_name

OPTIONS = StorageOptions(fsync=False)


def _write(wal_dir, payloads, options=OPTIONS):
    wal = Wal.open(wal_dir, options)
    for payload in payloads:
        wal.sync(wal.append(payload))
    wal.close()


def _replay(wal_dir, options=OPTIONS):
    return list(Wal.open(wal_dir, options).replay())


def test_records_replay_in_order_across_reopens(tmp_path):
    _write(tmp_path, [b"one", b"two"])
    _write(tmp_path, [b"three"])
    assert _replay(tmp_path) == [b"one", b"two", b"three"]


def test_segments_roll_over_at_the_size_option(tmp_path):
    options = StorageOptions(fsync=False, wal_segment_size_bytes=64)
    payloads = [bytes([i]) * 30 for i in range(10)]
    _write(tmp_path, payloads, options)
    wal = Wal.open(tmp_path, options)
    assert len(wal.segments) >= 4
    assert wal.segments[0].name == segment_name(1) == "wal-0000000000000001.log"
    assert list(wal.replay()) == payloads


def test_lsns_count_records_and_sync_is_idempotent(tmp_path):
    _write(tmp_path, [b"a", b"b"])
    wal = Wal.open(tmp_path, StorageOptions(fsync=True))
    assert wal.append(b"c") == 3
    wal.sync(3)
    wal.sync(1)
    assert wal.durable_lsn == 3
    wal.close()


@pytest.mark.parametrize(
    "tail",
    [
        b"\x05",  # a header cut short
        struct.pack("<II", 100, 0) + b"partial",  # a payload cut short
        frame(b"zeroed")[:8] + b"\x00" * 6,  # a payload that never reached the disk
        b"\x00" * 32,  # preallocated zeros
    ],
)
def test_torn_tail_is_truncated_and_appends_continue(tmp_path, tail):
    _write(tmp_path, [b"kept", b"also kept"])
    segment = tmp_path / segment_name(1)
    size = segment.stat().st_size
    with open(segment, "ab") as f:
        f.write(tail)
    assert _replay(tmp_path) == [b"kept", b"also kept"]
    assert segment.stat().st_size == size
    _write(tmp_path, [b"after"])
    assert _replay(tmp_path) == [b"kept", b"also kept", b"after"]


def test_bad_checksum_in_the_middle_raises_data_corrupted(tmp_path):
    _write(tmp_path, [b"first", b"second", b"third"])
    segment = tmp_path / segment_name(1)
    data = bytearray(segment.read_bytes())
    data[data.index(b"second")] ^= 0xFF
    segment.write_bytes(bytes(data))
    with pytest.raises(DataCorrupted):
        Wal.open(tmp_path, OPTIONS)


def test_damage_in_an_earlier_segment_raises_data_corrupted(tmp_path):
    options = StorageOptions(fsync=False, wal_segment_size_bytes=16)
    _write(tmp_path, [b"x" * 20, b"y" * 20, b"z" * 20], options)
    first = tmp_path / segment_name(1)
    first.write_bytes(first.read_bytes()[:-3])
    with pytest.raises(DataCorrupted):
        Wal.open(tmp_path, options)


def test_bad_checksum_on_the_last_record_is_a_torn_tail(tmp_path):
    _write(tmp_path, [b"first", b"last"])
    segment = tmp_path / segment_name(1)
    data = bytearray(segment.read_bytes())
    data[-1] ^= 0xFF
    segment.write_bytes(bytes(data))
    assert _replay(tmp_path) == [b"first"]


def test_a_segment_with_a_foreign_header_is_refused(tmp_path):
    (tmp_path / segment_name(1)).write_bytes(b"NOTAWAL!" + b"\x00" * 20)
    with pytest.raises(DataCorrupted):
        Wal.open(tmp_path, OPTIONS)


def test_append_after_close_is_refused(tmp_path):
    from storage.errors import AdminShutdown

    wal = Wal.open(tmp_path, OPTIONS)
    wal.close()
    with pytest.raises(AdminShutdown):
        wal.append(b"late")


def test_an_empty_last_segment_from_a_crash_is_removed(tmp_path):
    """Killed after creating a segment but before writing its header: the empty file must
    not end up in the middle of the log once later segments are written."""
    _write(tmp_path, [b"kept"])
    (tmp_path / segment_name(2)).write_bytes(b"")
    _write(tmp_path, [b"after"])
    assert _replay(tmp_path) == [b"kept", b"after"]


def _failing(real, error_number, *, after_bytes=None):
    """``os.write``/``os.fsync`` that fails once with ``error_number`` (a partial write first)."""
    state = {"armed": True}

    def call(fd, *args):
        if state["armed"]:
            state["armed"] = False
            if after_bytes is not None:
                real(fd, bytes(args[0][:after_bytes]))
            raise OSError(error_number, os.strerror(error_number))
        return real(fd, *args)

    return call


def test_a_full_disk_fails_the_append_with_53100_and_leaves_the_log_whole(tmp_path, monkeypatch):
    wal = Wal.open(tmp_path, OPTIONS)
    wal.sync(wal.append(b"before"))
    monkeypatch.setattr(os, "write", _failing(os.write, errno.ENOSPC, after_bytes=5))
    with pytest.raises(DiskFull) as full:
        wal.append(b"x" * 100)
    assert full.value.sqlstate == "53100"
    wal.sync(wal.append(b"after"))  # space came back: writes resume
    wal.close()
    assert _replay(tmp_path) == [b"before", b"after"]


def test_a_failed_fsync_is_never_retried_as_a_success(tmp_path, monkeypatch):
    options = StorageOptions(fsync=True)
    wal = Wal.open(tmp_path, options)
    wal.sync(wal.append(b"durable"))
    monkeypatch.setattr(os, "fdatasync", _failing(os.fdatasync, errno.EIO))  # a commit's sync
    lsn = wal.append(b"in doubt")
    with pytest.raises(IoError) as failed:
        wal.sync(lsn)
    assert failed.value.sqlstate == "58030"
    assert wal.durable_lsn < lsn
    with pytest.raises(IoError):
        wal.sync(lsn)  # the next fsync would succeed: it must not vouch for the lost pages
    with pytest.raises(IoError):
        wal.append(b"later")


def test_a_failed_fsync_when_a_segment_rolls_over_is_final_too(tmp_path, monkeypatch):
    options = StorageOptions(fsync=True, wal_segment_size_bytes=64)
    wal = Wal.open(tmp_path, options)
    wal.sync(wal.append(b"a" * 40))
    lsn = wal.append(b"b" * 40)
    monkeypatch.setattr(os, "fsync", _failing(os.fsync, errno.EIO))
    with pytest.raises(IoError):
        wal.append(b"c" * 40)  # rolling over fsyncs the full segment, and that fails
    with pytest.raises(IoError):
        wal.sync(lsn)
