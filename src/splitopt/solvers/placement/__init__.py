"""Algorithms of the ``placement`` family (issue 22; the dnn-partitioning device model): one module per algorithm, ``auto`` the default."""
