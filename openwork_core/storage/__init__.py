"""Durable facts in PostgreSQL."""

__all__: list[str] = []
