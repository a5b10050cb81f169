"""Shared named test cases (instances with their known optimum), importable as ``cases.<name>``
(``tests`` is on the pytest path, see ``pyproject.toml``)."""
