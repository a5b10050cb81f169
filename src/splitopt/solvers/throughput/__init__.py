"""Algorithms of the ``throughput`` family (seed 004): one module per algorithm."""
