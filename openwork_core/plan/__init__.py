"""update_plan: the per-Turn checklist control tool (update-plan.md)."""

__all__: list[str] = []
