"""Test doubles shared by the suites: the scripted fake provider on loopback."""
