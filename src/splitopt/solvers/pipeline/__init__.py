"""Algorithms of the ``pipeline`` family (seed 001), one module each."""
