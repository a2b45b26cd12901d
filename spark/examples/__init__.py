"""Runnable examples of the nyala data source (``python -m spark.examples.pipeline``)."""
