"""A provider's settings as the options of one model call (issue 14 point 6): idle and total
timeouts per provider and the transport attempts (the SDKs' retries, before any output, with
backoff honouring ``Retry-After`` / ``retry-after-ms``). Pure."""

from __future__ import annotations

from openwork_core.models.port import ModelCallOptions
from openwork_core.storage.records import ProviderSettings


def call_options(
    settings: ProviderSettings, model_attempt_id: str, *, session_id: str | None = None
) -> ModelCallOptions:
    return ModelCallOptions(
        model_attempt_id=model_attempt_id,
        session_id=session_id,
        idle_timeout_s=settings.idle_timeout_s,
        total_timeout_s=settings.total_timeout_s,
        max_transport_attempts=settings.max_retries + 1,
    )
