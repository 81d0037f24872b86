"""In-process runtime harness: a real OpenWorkCore on real PostgreSQL with a scripted model."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from openwork_core.models.adapters.scripted import ScriptedModel
from openwork_core.models.port import ModelPort
from openwork_core.provider_runtime import STARTUP_TASK, probe_task_name
from openwork_core.service import OpenWorkCore
from openwork_core.session.compaction.generation import SummarySettings
from openwork_core.session.input import TextInput
from openwork_core.session.registry import LoadLimits
from openwork_core.session.runner.context import SessionServices
from openwork_core.session.updates import SessionUpdateEnvelope, TurnFinished
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import ProviderKind, ProviderModel, ProviderRecord
from openwork_tools.modes import SandboxMode, SandboxStatus

TEST_PROVIDER = ProviderRecord(
    id="default",
    kind=ProviderKind.OPENAI_CHAT,
    base_url="http://127.0.0.1:9",
    api_key_env=None,
    models=(
        ProviderModel(name="scripted-model", context_window=200_000, max_output_tokens=32_000),
    ),
)


def provider_with_window(context_window: int, max_output_tokens: int) -> ProviderRecord:
    model = ProviderModel(
        name="scripted-model", context_window=context_window, max_output_tokens=max_output_tokens
    )
    return ProviderRecord(
        id="default",
        kind=ProviderKind.OPENAI_CHAT,
        base_url="http://127.0.0.1:9",
        api_key_env=None,
        models=(model,),
    )


@dataclass
class Runtime:
    core: OpenWorkCore
    model: ScriptedModel
    workspace: Path
    services: dict[str, SessionServices] = field(default_factory=dict)
    """Each loaded session's services, as last built (white-box fault injection)."""

    async def new_session(self, mode: SandboxMode = SandboxMode.AUTO) -> str:
        record = await self.core.create_session(workspace=str(self.workspace), permission_mode=mode)
        return record.id

    async def run_turn(
        self,
        session_id: str,
        text: str,
        *,
        client_request_id: str | None = None,
        timeout: float = 20,
    ) -> tuple[str, list[SessionUpdateEnvelope]]:
        """Start a turn and collect its updates until turn_finished (bounded)."""
        _, subscription = await self.core.subscribe(session_id, None)
        try:
            accepted = await self.core.start_turn(
                session_id,
                client_request_id=client_request_id or f"req-{text[:20]}-{id(text)}",
                inputs=[TextInput(text=text)],
            )
            seen: list[SessionUpdateEnvelope] = []
            async with asyncio.timeout(timeout):
                while True:
                    envelope = await subscription.queue.get()
                    if envelope.turn_id != accepted.turn_id:
                        continue
                    seen.append(envelope)
                    if isinstance(envelope.update, TurnFinished):
                        return accepted.turn_id, seen
        finally:
            subscription.close()

    async def window_probed(self, provider_id: str) -> None:
        """The providers' start-up work, then the provider's current window probe, have ended:
        the tasks ``ProviderRuntime`` runs, found by their names (the daemon itself never waits
        for a probe)."""
        for name in (STARTUP_TASK, probe_task_name(provider_id)):
            tasks = [t for t in asyncio.all_tasks() if t.get_name() == name]
            if tasks:
                await asyncio.wait(tasks)


@asynccontextmanager
async def runtime(
    store: PostgresStore,
    tmp_path: Path,
    model: ScriptedModel | None = None,
    sandbox: SandboxStatus | None = None,
    skill_root: Path | None = None,
    provider: ProviderRecord = TEST_PROVIDER,
    load_limits: LoadLimits | None = None,
) -> AsyncIterator[Runtime]:
    scripted = model or ScriptedModel()
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)

    def ports(_provider: ProviderRecord, _key: str | None) -> ModelPort:
        return scripted

    await store.upsert_provider(provider)
    services: dict[str, SessionServices] = {}
    core = OpenWorkCore(
        store=store,
        home=tmp_path / "home",
        sandbox=sandbox or SandboxStatus(available=False, reason="not probed in this test"),
        model_ports=ports,
        app_version="test",
        skill_root=skill_root,
        summary_settings=SummarySettings(retry_pause_s=0, attempt_timeout_s=20),
        observe_sessions=services.__setitem__,
        load_limits=load_limits,
    )
    await core.start()
    try:
        yield Runtime(core, scripted, workspace, services)
    finally:
        await core.shutdown()
