"""Model capabilities: vendor facts and our chosen output budget (model-providers.md §4)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from openwork_chat_state.error_root import OpenWorkError


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
