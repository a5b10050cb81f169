"""Algorithms of the ``split`` family (seeds 000 and 002): one module per algorithm."""
