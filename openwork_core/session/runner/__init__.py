"""The turn runner, split by step."""

__all__: list[str] = []
