import threading
import time

import pytest

from catalog.ddl_locks import DdlLocks, LockWait, RelationLock
from storage.errors import DeadlockDetected, LockNotAvailable, QueryCanceled


def _wait(timeout_ms: int = 0, check=lambda: None) -> LockWait:
    return LockWait(check, lambda: timeout_ms)


def test_a_holder_takes_its_names_again_without_waiting():
    locks = DdlLocks()
    assert locks.acquire("a", ["t", "u"], _wait()) == ["t", "u"]
    assert locks.acquire("a", ["t"], _wait()) == []
    assert locks.holder("t") == "a"
    locks.release("a", ["t", "u"])
    assert not locks.held


def test_a_second_owner_waits_until_release():
    locks = DdlLocks()
    locks.acquire("a", ["t"], _wait())
    got = threading.Event()

    def take() -> None:
        locks.acquire("b", ["t"], _wait())
        got.set()

    thread = threading.Thread(target=take)
    thread.start()
    time.sleep(0.2)
    assert not got.is_set()
    locks.release("a", ["t"])
    thread.join(5)
    assert got.is_set() and locks.holder("t") == "b"


def test_lock_timeout_is_55P03():
    locks = DdlLocks()
    locks.acquire("a", ["t"], _wait())
    with pytest.raises(LockNotAvailable):
        locks.acquire("b", ["t"], _wait(timeout_ms=100))


def test_a_cancel_ends_the_wait():
    locks = DdlLocks()
    locks.acquire("a", ["t"], _wait())

    def cancelled() -> None:
        raise QueryCanceled("canceling statement due to user request")

    with pytest.raises(QueryCanceled):
        locks.acquire("b", ["t"], _wait(check=cancelled))


def test_waiting_for_a_waiter_that_waits_for_you_is_a_deadlock():
    locks = DdlLocks()
    locks.acquire("a", ["x"], _wait())
    locks.acquire("b", ["y"], _wait())
    errors: list[Exception] = []

    def a_wants_y() -> None:
        try:
            locks.acquire("a", ["y"], _wait(timeout_ms=5000))
        except Exception as exc:
            errors.append(exc)

    thread = threading.Thread(target=a_wants_y)
    thread.start()
    time.sleep(0.2)
    with pytest.raises(DeadlockDetected):
        locks.acquire("b", ["x"], _wait(timeout_ms=5000))
    locks.release("b", ["y"])
    thread.join(5)
    assert not errors and locks.holder("y") == "a"


def test_a_reader_waits_but_takes_nothing():
    locks = DdlLocks()
    locks.acquire("a", ["t"], _wait())
    with pytest.raises(LockNotAvailable):
        locks.wait_until_free("r", ["t"], _wait(timeout_ms=100))
    locks.release("a", ["t"])
    locks.wait_until_free("r", ["t"], _wait())
    assert not locks.held


def test_a_writer_the_build_waits_for_reads_the_builds_relation_without_waiting():
    locks = DdlLocks()
    locks.acquire("build", ["t", "u"], _wait())
    locks.writer_wait("build", ["writer"], ["t"])
    locks.wait_until_free("writer", ["t"], _wait(timeout_ms=100))  # passes at once
    with pytest.raises(LockNotAvailable):  # anyone else waits
        locks.wait_until_free("other", ["t"], _wait(timeout_ms=100))
    locks.writer_wait_over("build")
    with pytest.raises(LockNotAvailable):
        locks.wait_until_free("writer", ["t"], _wait(timeout_ms=100))


def test_a_waiting_writer_is_let_through_once_the_build_waits_for_it():
    locks = DdlLocks()
    locks.acquire("build", ["t"], _wait())
    through = threading.Event()

    def read() -> None:
        locks.wait_until_free("writer", ["t"], _wait())
        through.set()

    thread = threading.Thread(target=read)
    thread.start()
    time.sleep(0.2)
    assert not through.is_set()
    locks.writer_wait("build", ["writer"], ["t"])  # no cycle: that wait is no edge
    thread.join(5)
    assert through.is_set() and locks.holder("t") == "build"


def test_a_build_waiting_for_a_writer_that_waits_for_its_other_relation_is_a_deadlock():
    locks = DdlLocks()
    locks.acquire("build", ["u"], _wait())
    failed: list[BaseException] = []

    def write() -> None:
        try:
            locks.wait_until_free("writer", ["u"], _wait(timeout_ms=5000))
        except DeadlockDetected as exc:
            failed.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    time.sleep(0.2)
    with pytest.raises(DeadlockDetected):
        locks.writer_wait("build", ["writer"], ["t"])
    locks.release("build", ["u"])
    thread.join(5)
    assert not failed


def test_a_writer_waiting_for_a_build_that_waits_for_it_elsewhere_is_a_deadlock():
    locks = DdlLocks()
    locks.acquire("build", ["u"], _wait())
    locks.writer_wait("build", ["writer"], ["t"])
    with pytest.raises(DeadlockDetected):
        locks.wait_until_free("writer", ["u"], _wait(timeout_ms=5000))


def test_two_share_holders_at_once_and_a_writer_waits_for_both():
    locks = DdlLocks()
    assert locks.acquire("a", ["t"], _wait(), RelationLock.SHARE) == ["t"]
    assert locks.acquire("b", ["t"], _wait(timeout_ms=100), RelationLock.SHARE) == ["t"]
    with pytest.raises(LockNotAvailable):
        locks.acquire("c", ["t"], _wait(timeout_ms=100))
    with pytest.raises(LockNotAvailable):
        locks.acquire("c", ["t"], _wait(timeout_ms=100), RelationLock.SHARE_UPDATE_EXCLUSIVE)
    locks.wait_until_free("reader", ["t"], _wait(timeout_ms=100))  # reads go on
    locks.release("a", ["t"])
    with pytest.raises(LockNotAvailable):
        locks.wait_until_free("writer", ["t"], _wait(timeout_ms=100), frozenset({"t"}))
    locks.release("b", ["t"])
    locks.wait_until_free("writer", ["t"], _wait(timeout_ms=100), frozenset({"t"}))
    assert not locks.held


def test_two_share_holders_both_upgrading_is_a_deadlock():
    locks = DdlLocks()
    locks.acquire("a", ["t"], _wait(), RelationLock.SHARE)
    locks.acquire("b", ["t"], _wait(), RelationLock.SHARE)
    caught: list[BaseException] = []

    def upgrade() -> None:
        try:
            locks.acquire("a", ["t"], _wait(timeout_ms=5000))
        except BaseException as exc:  # noqa: BLE001
            caught.append(exc)

    thread = threading.Thread(target=upgrade)
    thread.start()
    time.sleep(0.2)
    with pytest.raises(DeadlockDetected):
        locks.acquire("b", ["t"], _wait(timeout_ms=5000))
    locks.release("b", ["t"])
    thread.join(5)
    assert not caught and locks.holder("t") == "a"


def test_role_names_move_to_the_prepared_transaction_and_a_waiter_learns_it_waited():
    locks = DdlLocks("role")
    locks.acquire("a", ["r1", "r2"], _wait())
    locks.transfer("a", ("prepared", "gid"))
    assert locks.holder("r1") == ("prepared", "gid")
    waited: set[str] = set()
    done = threading.Event()

    def take() -> None:
        locks.acquire("b", ["r2", "r3"], _wait(), waited=waited)
        done.set()

    thread = threading.Thread(target=take)
    thread.start()
    deadline = time.monotonic() + 5
    while locks.waiting_for("b") != "r2" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert locks.waiting_for("b") == "r2"
    locks.release(("prepared", "gid"))  # an equal owner, not the same object: COMMIT PREPARED
    thread.join(5)
    assert done.is_set() and waited == {"r2"}
    assert locks.holder("r1") is None and locks.holder("r3") == "b"


def test_a_role_deadlock_names_the_role():
    locks = DdlLocks("role")
    locks.acquire("a", ["r1"], _wait())
    locks.acquire("b", ["r2"], _wait())
    thread = threading.Thread(target=lambda: locks.acquire("a", ["r2"], _wait(timeout_ms=5000)))
    thread.start()
    deadline = time.monotonic() + 5
    while locks.waiting_for("a") is None and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(DeadlockDetected) as caught:
        locks.acquire("b", ["r1"], _wait())
    assert 'role "r1"' in str(caught.value.detail)
    locks.release("b")
    thread.join(5)
