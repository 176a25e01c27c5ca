"""Benchmarks and paper reproduction targets (``reproduce``)."""
