"""Fixtures for the integration tools tests: those of tests/support/tools.py."""

from tests.support.tools import home, make_session, outside, session, tmp_path, toolset, workspace

__all__ = ["home", "make_session", "outside", "session", "tmp_path", "toolset", "workspace"]
