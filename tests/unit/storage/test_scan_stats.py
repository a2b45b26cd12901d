"""ScanStats: counters merge and read back as a dict."""

from storage.scan_stats import ScanStats


def test_merge_and_as_dict():
    a = ScanStats(blocks_read=2, rows_returned=5)
    a.merge(ScanStats(blocks_read=1, blocks_skipped=4))
    assert a.as_dict()["blocks_read"] == 3 and a.blocks_skipped == 4 and a.rows_returned == 5
