"""What the user is told about a model that cannot work as configured (issue 24 point 4): the
warning codes of a provider's model (``GET /v1/providers``) and of a turn (``GET …/turns/{tid}``,
the ``warning`` session update), and the message of ``context_window_too_small``. Each message
says what was found and what to change, in one line. Pure functions of numbers."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from openwork_core.context.budget import ContextBudgetEstimate

WINDOW_FIX = (
    "give the model a larger window: raise the server's context (Ollama num_ctx or "
    "OLLAMA_CONTEXT_LENGTH, llama.cpp -c, vLLM --max-model-len, LM Studio's context length) and "
    "set OPENWORK_MODEL_CONTEXT_WINDOW (or the provider's context_window) to match"
)


class WarningCode(enum.StrEnum):
    WINDOW_TOO_SMALL = "window_too_small"
    """System Context + Tools + the output reservation leave no room a compaction could make."""
    INPUT_TRUNCATION_SUSPECTED = "input_truncation_suspected"
    """The provider reported far fewer input tokens than were sent."""
    TOOLS_UNSUPPORTED = "tools_unsupported"
    """The server says the model's chat template renders no tools."""
    SERVED_WINDOW_SMALLER = "served_window_smaller"
    """The server serves a smaller window than the one configured (the served one is used)."""
    CACHE_MISS = "cache_miss"
    """The last call missed the prompt cache (the context page, from the inspection's usage)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelWarning:
    code: WarningCode
    message: str


def regions(estimate: ContextBudgetEstimate) -> str:
    return (
        f"System Context ≈ {estimate.system_context_tokens}, Tools ≈ "
        f"{estimate.tool_surface_tokens}, Conversation ≈ {estimate.conversation_tokens} tokens, "
        f"{estimate.reserved_output_tokens} reserved for output"
    )


def window_too_small(estimate: ContextBudgetEstimate, window: int) -> ModelWarning:
    return ModelWarning(
        code=WarningCode.WINDOW_TOO_SMALL,
        message=(
            f"the {window}-token window is too small for this request ({regions(estimate)}) and "
            f"compacting the conversation cannot make room; the request is sent as it is and "
            f"the server may cut it: {WINDOW_FIX}"
        ),
    )


def context_window_too_small(
    estimate: ContextBudgetEstimate, window: int, provider_message: str
) -> str:
    """The ``context_window_too_small`` failure message."""
    return (
        f"the request does not fit the model's {window}-token context window "
        f"({regions(estimate)}; the provider said: {provider_message[:300]}) and compacting the "
        f"conversation cannot make it fit: {WINDOW_FIX}"
    )


def threshold_compaction_failed(estimate: ContextBudgetEstimate, window: int, failure: str) -> str:
    """The ``compaction_error`` message of a threshold compaction (issue 24): what failed, and
    the window whose line the request reached, with its regions and what to change."""
    return (
        f"{failure}; the request had reached the compaction line of the model's {window}-token "
        f"context window ({regions(estimate)}) and the summary that makes room failed: use a "
        f"model that can write it, or {WINDOW_FIX}"
    )


def input_truncation_suspected(estimated: int, reported: int) -> ModelWarning:
    return ModelWarning(
        code=WarningCode.INPUT_TRUNCATION_SUSPECTED,
        message=(
            f"the server reported {reported} input tokens for a request estimated at {estimated}: "
            "it probably dropped part of it (the tools, when its chat template renders none, or "
            f"the start of a request longer than its window): {WINDOW_FIX}, and use a model whose "
            "chat template supports tools"
        ),
    )


def tools_unsupported(server: str, model: str) -> ModelWarning:
    return ModelWarning(
        code=WarningCode.TOOLS_UNSUPPORTED,
        message=(
            f"{server} says the chat template of {model} renders no tools, so the model never "
            "sees them and cannot read, edit or run anything: use a model whose template supports "
            "tools (for llama.cpp, start llama-server with --jinja, and --chat-template-file for a "
            "tool-capable template)"
        ),
    )


def served_window_smaller(server: str, served: int, configured: int) -> ModelWarning:
    return ModelWarning(
        code=WarningCode.SERVED_WINDOW_SMALLER,
        message=(
            f"{server} serves a window of {served} tokens, smaller than the {configured} "
            f"configured; {served} is used: raise the server's context (Ollama num_ctx or "
            "OLLAMA_CONTEXT_LENGTH, llama.cpp -c, vLLM --max-model-len) or lower "
            "OPENWORK_MODEL_CONTEXT_WINDOW to match"
        ),
    )
