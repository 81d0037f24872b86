"""OpenWork core: the runtime daemon behind a coding-agent desktop app (docs/architecture.md).

The root package re-exports nothing: every module of the daemon is inside it, so a re-export here
would import the session runtime with the first ``openwork_core.*`` import, before the daemon
listens. Names are imported from their packages and modules."""
