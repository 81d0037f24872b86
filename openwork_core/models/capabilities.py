"""Model capabilities: vendor facts and our chosen output budget (model-providers.md §4), and
their resolution from settings, the model row, the catalog and a served window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from openwork_chat_state.error_root import OpenWorkError
from openwork_core.models.catalog import catalog_entry
from openwork_core.storage.records import ProviderModel, ProviderSettings


class CapabilityError(OpenWorkError, ValueError):
    """A ValueError too, so that pydantic reports it as a field error of a request body."""

    code: ClassVar[str] = "invalid_capabilities"
    http_status: ClassVar[int] = 400

    @property
    def public_message(self) -> str:
        return f"the provider's model is misconfigured: {self}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCapabilities:
    context_window_tokens: int
    max_output_tokens: int
    max_reasoning_tokens: int | None = None
    accepts_data_blocks: bool = True

    def __post_init__(self) -> None:
        if self.context_window_tokens <= 0:
            raise CapabilityError("contextWindowTokens must be positive")
        if self.max_output_tokens <= 0:
            raise CapabilityError("maxOutputTokens must be positive")
        reserve = self.max_output_tokens + (self.max_reasoning_tokens or 0)
        if reserve >= self.context_window_tokens:
            raise CapabilityError(
                f"output and reasoning reserve {reserve} tokens, which must be less than the "
                f"{self.context_window_tokens}-token context window"
            )


FALLBACK_CAPABILITIES = ModelCapabilities(
    context_window_tokens=128_000, max_output_tokens=8_192, accepts_data_blocks=False
)


CapabilitySource = Literal["configured", "catalog", "fallback"]

SMALL_WINDOW_TOKENS = 32_768
"""Below this window the output reservation is capped by ``small_window_reservation``."""
MIN_SMALL_WINDOW_RESERVATION = 1_024


def small_window_reservation(window: int, output: int) -> int:
    """Issue 24 point 2 (docs/compaction.md "A reservation that fits the window"): under a
    32 768-token window the reservation is min(output, max(1 024, window ÷ 8)), so that System
    Context + Tools (about 4 000 tokens) + a working Conversation still fit under the
    compaction line: 8 192 reserves 1 024 (line 6 093), 16 384 reserves 2 048. From 32 768 up the
    chosen output stands."""
    if window >= SMALL_WINDOW_TOKENS:
        return output
    return min(output, max(MIN_SMALL_WINDOW_RESERVATION, window // 8))


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedCapabilities:
    capabilities: ModelCapabilities
    source: CapabilitySource
    """Where the window came from (model-providers.md §4 ``CapabilitySource``)."""
    served_window_tokens: int | None
    """The window a local server reported serving, when it was asked."""
    limited_by_server: bool
    """The served window was smaller than the configured / catalog one and won."""


def resolve_capabilities(
    model: ProviderModel, settings: ProviderSettings, served_window: int | None = None
) -> ResolvedCapabilities:
    """model-providers.md §4 resolution, with issue 14 point 8: provider settings, then the
    model row, then the catalog (exact, then longest prefix), then ``FALLBACK_CAPABILITIES``;
    a smaller served window wins; under 32 768 tokens the output reservation is capped by
    ``small_window_reservation`` (issue 24), and it shrinks to a quarter of what is left when it
    would still not fit (``CapabilityError`` only for impossible configured rows)."""
    entry = catalog_entry(model.name)
    configured = settings.context_window or model.context_window
    source: CapabilitySource = (
        "configured" if configured is not None else "catalog" if entry is not None else "fallback"
    )
    fallback = FALLBACK_CAPABILITIES
    window = configured or (entry.context_window if entry else fallback.context_window_tokens)
    chosen_output = settings.max_output_tokens or model.max_output_tokens
    output = chosen_output or (entry.max_output_tokens if entry else fallback.max_output_tokens)
    data_blocks = model.accepts_data_blocks
    if data_blocks is None:
        data_blocks = entry.images if entry else fallback.accepts_data_blocks
    reasoning = model.max_reasoning_tokens or 0
    limited = served_window is not None and 0 < served_window < window
    if limited and served_window is not None:
        window = served_window
    if output + reasoning >= window and (limited or chosen_output is None):
        output = max(1, (window - reasoning) // 4)
    if output + reasoning < window:  # configured numbers that cannot fit stay refused below
        output = small_window_reservation(window, output)
    return ResolvedCapabilities(
        capabilities=ModelCapabilities(
            context_window_tokens=window,
            max_output_tokens=output,
            max_reasoning_tokens=reasoning or None,
            accepts_data_blocks=data_blocks,
        ),
        source=source,
        served_window_tokens=served_window,
        limited_by_server=limited,
    )
