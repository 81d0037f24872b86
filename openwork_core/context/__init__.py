"""The context engine: pure functions that turn the three materialized regions into one
provider-neutral request (context-window.md). World State lives in ``world_state``. Names are
imported from their modules."""

__all__: list[str] = []
