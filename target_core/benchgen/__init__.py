"""Benchmark builder: SQL templates -> sampled SQL -> questions -> review -> dataset (seed 002)."""
