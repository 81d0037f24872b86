"""How a stdio server is started (issue 27 point 2; docs/mcp.md "Sandbox").

In the sandbox (the default, ``sandbox = true``) the server runs in the bubblewrap profile of a
bash command of an ``auto`` session whose workspace is the server's ``cwd`` (``$HOME`` when it has
none, so nothing but the temp dirs is writable): the whole filesystem read-only, credential
directories and the daemon's home hidden, and no network — its own network namespace with only a
loopback of its own (``--unshare-net``), so it reaches neither the internet nor a host socket. A
sandboxed server is not started while the sandbox is unavailable. ``sandbox = false`` runs the
command as it is, like any program of the user.

The environment is never the daemon's: the host variables bash gets (``HOST_ENV_KEYS``), the
server's ``env`` and the daemon variables it names in ``env_vars``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from openwork_core.mcp.config import McpServerConfig
from openwork_tools.context import HOST_ENV_KEYS, ToolSessionContext
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.policy import SandboxPolicy
from openwork_tools.sandbox.bwrap import bwrap_argv, sandbox_environment
from openwork_tools.sandbox.seccomp import native_program

NO_NETWORK = "--unshare-net"


class SandboxRefused(RuntimeError):
    """The server asks for the sandbox and there is none."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StdioLaunch:
    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: str | None
    seccomp: bytes | None = None
    """The sandbox's seccomp filter: the transport hands it to bwrap on a descriptor that
    replaces ``SECCOMP_FD_ARG`` in ``argv`` (as bash's launch does)."""


def _environment(config: McpServerConfig, environ: Mapping[str, str]) -> dict[str, str]:
    env = {k: environ[k] for k in HOST_ENV_KEYS if k in environ}
    env.update({k: environ[k] for k in config.env_vars if k in environ})
    env.update(config.env)
    return env


def stdio_launch(
    config: McpServerConfig,
    *,
    sandbox: SandboxStatus,
    daemon_home: Path,
    environ: Mapping[str, str] | None = None,
) -> StdioLaunch:
    """Blocking (the profile checks which paths exist): run it in a worker thread."""
    assert config.command is not None
    source = os.environ if environ is None else environ
    env = _environment(config, source)
    argv = (config.command, *config.args)
    if not config.sandbox:
        return StdioLaunch(argv=argv, env=env, cwd=config.cwd)
    seccomp = native_program()
    if not sandbox.available or seccomp is None:
        raise SandboxRefused(
            f"the sandbox is unavailable ({sandbox.reason or 'no seccomp filter for this machine'}); "
            "set sandbox = false to run this server outside it"
        )
    home = Path(source.get("HOME") or Path.home())
    workspace = Path(config.cwd) if config.cwd else home
    session = ToolSessionContext(
        working_directory=workspace if workspace.is_dir() else Path("/"),
        sandbox=sandbox,
        home=home,
        protected_roots=(daemon_home,),
        secret_dirs=(daemon_home,),
        environment=env,
    )
    wrapped = bwrap_argv(session, SandboxPolicy(mode=SandboxMode.AUTO), list(argv))
    if NO_NETWORK not in wrapped[: wrapped.index("--")]:
        wrapped.insert(wrapped.index("--"), NO_NETWORK)
    return StdioLaunch(
        argv=tuple(wrapped), env=sandbox_environment(session) | env, cwd=None, seccomp=seccomp
    )
