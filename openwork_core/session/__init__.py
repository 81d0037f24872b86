"""Sessions (session-runtime.md): the actor and its command union, the turn runner, the storage
port, the registry of live sessions and the sub-agent host (docs/architecture.md).

Names are imported from their modules (``openwork_core.session.actor`` …): the package
re-exports nothing, so importing a light module of it does not import the runtime."""

__all__: list[str] = []
