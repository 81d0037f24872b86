"""Sub-agents: control state, mailbox, agent messages, control tools, reconciliation
(multi-agent.md). Pure building blocks; the session runtime wires them in
(docs/multi-agent.md)."""

__all__: list[str] = []
