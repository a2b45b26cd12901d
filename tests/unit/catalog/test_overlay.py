from catalog.overlay import Overlay


def test_reads_see_the_base_under_the_changes_and_the_base_stays_unchanged():
    base = {"a": 1, "b": 2}
    view = Overlay(base)
    view["c"] = 3
    del view["a"]
    view["b"] = 20
    assert dict(view) == {"b": 20, "c": 3}
    assert "a" not in view and view.get("a") is None
    assert base == {"a": 1, "b": 2}
    base["d"] = 4  # another transaction's commit shows through
    assert dict(view) == {"b": 20, "c": 3, "d": 4}


def test_apply_makes_the_changes_the_bases_own():
    base = {"a": 1, "b": 2}
    view = Overlay(base)
    del view["a"]
    view["c"] = 3
    view.apply()
    assert base == {"b": 2, "c": 3}


def test_mark_and_restore_undo_later_changes():
    view = Overlay({"a": 1})
    view["b"] = 2
    mark = view.mark()
    view["c"] = 3
    del view["a"]
    view.restore(mark)
    assert dict(view) == {"a": 1, "b": 2}


def test_conflicts_name_what_another_commit_changed_since():
    base = {"a": 1, "b": 2}
    view = Overlay(base)
    view["a"] = 10
    view["b"] = 20
    base["a"] = 100
    assert view.conflicts() == ["a"]


def test_deleting_a_missing_name_is_a_key_error():
    view: Overlay[int] = Overlay({})
    try:
        del view["x"]
    except KeyError:
        return
    raise AssertionError("expected KeyError")
