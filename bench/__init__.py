"""Benchmarks: scripts that measure and print figures, never pass/fail tests.

Run one with ``.venv/bin/python -m bench.<name>``. Each compares against a baseline measured in the
same run and prints ratios, because the machines here are noisy.
"""
