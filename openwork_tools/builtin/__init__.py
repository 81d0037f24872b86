"""The seven built-in tools (tools.md §7)."""
