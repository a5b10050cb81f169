"""Algorithms of the ``grouping`` family (seed 003): one module per algorithm."""
