"""Skills: discovery and parsing of ``$HOME/.agents/skills/<name>/SKILL.md`` (skills.md)."""

__all__: list[str] = []
