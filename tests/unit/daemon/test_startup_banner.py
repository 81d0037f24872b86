"""Start-up helpers (issue 15 point 3): the database URL without its password, the warnings for
a missing provider, model or key, and the banner."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from openwork_core.daemon.startup import (
    BannerFacts,
    banner_lines,
    provider_in_use,
    provider_warnings,
    redact_database_url,
)
from openwork_core.storage.records import ProviderKind, ProviderModel, ProviderRecord
from openwork_tools.modes import SandboxStatus


def _provider(kind: ProviderKind, base_url: str | None, models: tuple[str, ...]) -> ProviderRecord:
    return ProviderRecord(
        id="default",
        kind=kind,
        base_url=base_url,
        api_key_env=None,
        models=tuple(ProviderModel(name=m) for m in models),
    )


def test_the_database_url_is_shown_without_its_password() -> None:
    assert redact_database_url("postgresql://u:p%40ss@db:5432/x?sslmode=require") == (
        "postgresql://u@db:5432/x?sslmode=require"
    )
    assert redact_database_url("postgresql://u@db/x") == "postgresql://u@db/x"
    assert redact_database_url("postgresql://:pw@[::1]:5432/x") == "postgresql://[::1]:5432/x"


def test_warnings_for_no_provider_no_model_and_no_key() -> None:
    assert provider_warnings(None, [], False)[0].startswith("no model provider")
    stored = _provider(ProviderKind.ANTHROPIC, None, ("c",))
    assert provider_warnings(None, [stored], False) == []  # one was configured over HTTP
    no_model = provider_warnings(_provider(ProviderKind.OPENAI_CHAT, "http://l/v1", ()), [], False)
    assert [w.split(":")[0] for w in no_model] == ["no model"]
    hosted = provider_warnings(_provider(ProviderKind.OPENAI_RESPONSES, None, ("m",)), [], False)
    assert [w.split(":")[0] for w in hosted] == ["no API key"]
    local = provider_warnings(_provider(ProviderKind.OPENAI_CHAT, "http://l/v1", ("m",)), [], False)
    assert local == []


def test_the_banner_lists_what_a_user_needs_first() -> None:
    facts = BannerFacts(
        version="1.2.3",
        url="http://127.0.0.1:7420",
        discovery=Path("/h/daemon.json"),
        database="embedded (/h/pgdata)",
        provider=_provider(ProviderKind.OPENAI_CHAT, "http://l/v1", ("qwen3",)),
        key_set=False,
        sandbox=SandboxStatus(available=False, reason="bwrap is not installed"),
        config_file=None,
        log_file=Path("/h/logs/openwork.log"),
        warnings=("something",),
    )
    assert banner_lines(facts) == [
        "OpenWork 1.2.3 listening on http://127.0.0.1:7420",
        "  daemon.json  /h/daemon.json (URL and bearer token, mode 0600)",
        "  database     embedded (/h/pgdata)",
        "  provider     openai-chat at http://l/v1, model qwen3, no key",
        "  sandbox      unavailable: bwrap is not installed (bash cannot run commands)",
        "  config       no file (environment only)",
        "  logs         /h/logs/openwork.log",
        "warning: something",
    ]


def test_a_root_daemon_says_in_one_line_what_the_sandbox_does_about_it() -> None:
    """Issue 22 point 1: as root the banner (and doctor) adds one line: bash is root only in its
    own user namespace, and whether a cgroup bounds its processes."""
    from openwork_tools.sandbox.probe import root_note

    assert root_note(1000, cgroup_available=False) is None
    bounded = root_note(0, cgroup_available=True)
    unbounded = root_note(0, cgroup_available=False)
    assert bounded is not None and "its own cgroup" in bounded
    assert unbounded is not None and "run the daemon as a normal user" in unbounded
    assert "no capabilities" in bounded and "no capabilities" in unbounded
    facts = BannerFacts(
        version="1",
        url="http://127.0.0.1:7420",
        discovery=Path("/h/daemon.json"),
        database="embedded",
        provider=None,
        key_set=False,
        sandbox=SandboxStatus(available=True),
        config_file=None,
        log_file=None,
        warnings=(),
    )
    lines = banner_lines(facts)
    assert not any(line.startswith("  as root") for line in lines)
    with_note = banner_lines(dataclasses.replace(facts, root_note=bounded))
    assert with_note == [*lines[:5], f"  as root      {bounded}", *lines[5:]]


def test_the_banner_names_the_stored_provider_when_the_environment_has_none() -> None:
    """Issue 24 point 5: after a restart without the provider variables, new sessions use the
    stored ``default``; the banner says so instead of ``provider none``."""
    stored = _provider(ProviderKind.OPENAI_CHAT, "http://l/v1", ("qwen3",))
    other = dataclasses.replace(stored, id="other")
    assert provider_in_use(None, [other, stored]) is stored
    assert provider_in_use(None, [other]) is None
    from_env = dataclasses.replace(stored, base_url="http://env/v1")
    assert provider_in_use(from_env, [stored]) is from_env
    facts = BannerFacts(
        version="1",
        url="http://127.0.0.1:7420",
        discovery=Path("/h/daemon.json"),
        database="d",
        provider=stored,
        provider_stored=True,
        key_set=True,
        sandbox=SandboxStatus(available=True, reason=None),
        config_file=None,
        log_file=None,
        warnings=(),
    )
    assert banner_lines(facts)[3] == (
        "  provider     openai-chat at http://l/v1, model qwen3, key set (stored)"
    )
