"""Helpers shared by the tests: programs, fake measurers, interpreters and checks.

``tests`` is on ``sys.path`` while testing (pytest's ``pythonpath`` in pyproject.toml),
so a test imports them as ``from helpers.schedule_testing import ...``.
"""
