"""World State (context-window.md §3): capture the four sources, diff against the baseline.

``capture_world_state`` (I/O, off the event loop) → ``render_diff`` (pure, read-only) → the runner
persists each ``WorldStateUpdate`` as ``world_state_message_id(...)``, appends it to Chat State,
then advances the baseline with ``WorldStateBaseline.advanced``.
"""

__all__: list[str] = []
