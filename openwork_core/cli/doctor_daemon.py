"""``openwork doctor`` with a daemon running (issue 24 point 5): the daemon's own facts, asked
over its API — its database, providers (with what their servers said they serve, and the
warnings that follow), sandbox verdict and effective settings — not this shell's environment,
which may differ from the daemon's in every variable."""

from __future__ import annotations

from pydantic import JsonValue

from openwork_core.cli.client import DaemonClient, Discovery, objects
from openwork_core.cli.doctor_checks import Check, Verdict


def _text(value: JsonValue) -> str:
    return "" if value is None else str(value)


def _model_checks(provider: dict[str, JsonValue]) -> list[Check]:
    checks: list[Check] = []
    for model in objects(provider, "models"):
        served = model.get("served")
        if isinstance(served, dict):
            said = served.get("supports_tools")
            tools = "not said" if not isinstance(said, bool) else "yes" if said else "no"
            detail = (
                f"{model.get('name')}: {served.get('server')} serves "
                f"{served.get('context_window')} tokens, renders tools: {tools}"
            )
        else:
            detail = f"{model.get('name')}: the server was not asked or did not say its window"
        checks.append(Check("model", Verdict.OK, detail))
        checks.extend(
            Check("model", Verdict.WARN, f"{model.get('name')}: {w.get('message')}")
            for w in objects(model, "warnings")
        )
    return checks


def daemon_checks(found: Discovery) -> tuple[list[Check], dict[str, str]]:
    """The running daemon's checks and its effective settings (``CliError`` when it cannot
    be asked)."""
    with DaemonClient(found) as client:
        diagnostics = client.get("/v1/diagnostics")
        listing = client.get("/v1/providers")
    facts = diagnostics if isinstance(diagnostics, dict) else {}
    checks = [
        Check(
            "daemon",
            Verdict.OK,
            f"running at {found.url} (pid {found.pid}); the checks below are its own, asked "
            "over its API",
        ),
        Check(
            "database",
            Verdict.OK if facts.get("database") == "ok" else Verdict.FAIL,
            f"{_text(facts.get('database_location'))}: {_text(facts.get('database'))}",
        ),
    ]
    providers = objects(listing, "providers")
    if not providers:
        checks.append(
            Check(
                "provider",
                Verdict.FAIL,
                "the daemon has no provider (a turn fails with no_provider)",
            )
        )
    for provider in providers:
        where = f" at {provider['base_url']}" if provider.get("base_url") else ""
        key = "key set" if provider.get("has_key") else "no key"
        checks.append(
            Check(
                "provider",
                Verdict.OK,
                f"{provider.get('id')}: {provider.get('kind')}{where}, {key}",
            )
        )
        checks.extend(_model_checks(provider))
    available = facts.get("sandbox_available") is True
    checks.append(
        Check(
            "sandbox",
            Verdict.OK if available else Verdict.WARN,
            "bubblewrap self-check passed"
            if available
            else f"unavailable: {_text(facts.get('sandbox_reason'))} (bash cannot run commands)",
        )
    )
    settings = facts.get("settings")
    effective = {str(k): str(v) for k, v in settings.items()} if isinstance(settings, dict) else {}
    return checks, effective
