"""The built-in model catalog (model-providers.md §4; issue 14 point 8): vendor facts of current
well-known models, so a session naming one needs no manual numbers. Pure data and one lookup.

Numbers are the vendors' published limits: ``context_window`` (tokens of input + output),
``max_output_tokens`` (the largest output the vendor allows; the output budget we reserve),
``reasoning`` (a reasoning model), ``images`` (accepts image/data blocks). Provider settings and
the provider's model rows override an entry; a local server's served window wins when smaller.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogEntry:
    name: str
    """The model id, or the prefix of a family of ids (``claude-sonnet-4-5`` covers
    ``claude-sonnet-4-5-20250929``)."""
    display_name: str
    context_window: int
    max_output_tokens: int
    reasoning: bool = False
    images: bool = False
    reasoning_efforts: tuple[str, ...] = ()
    default_effort: str | None = None


def _e(
    name: str,
    display: str,
    window: int,
    output: int,
    *,
    reasoning: bool = False,
    images: bool = False,
    efforts: tuple[str, ...] = (),
    default: str | None = None,
) -> CatalogEntry:
    return CatalogEntry(
        name=name,
        display_name=display,
        context_window=window,
        max_output_tokens=output,
        reasoning=reasoning,
        images=images,
        reasoning_efforts=efforts,
        default_effort=default,
    )


_OPENAI_EFFORTS = ("minimal", "low", "medium", "high")
_SPEC_EFFORTS = ("low", "medium", "high", "max")

CATALOG: tuple[CatalogEntry, ...] = (
    # OpenAI
    _e("gpt-4.1", "GPT-4.1", 1_047_576, 32_768, images=True),
    _e("gpt-4.1-mini", "GPT-4.1 mini", 1_047_576, 32_768, images=True),
    _e("gpt-4.1-nano", "GPT-4.1 nano", 1_047_576, 32_768, images=True),
    _e("gpt-4o", "GPT-4o", 128_000, 16_384, images=True),
    _e("gpt-4o-mini", "GPT-4o mini", 128_000, 16_384, images=True),
    _e("o3", "o3", 200_000, 100_000, reasoning=True, images=True, efforts=_OPENAI_EFFORTS[1:]),
    _e("o3-mini", "o3-mini", 200_000, 100_000, reasoning=True, efforts=_OPENAI_EFFORTS[1:]),
    _e("o4-mini", "o4-mini", 200_000, 100_000, reasoning=True, images=True),
    _e("gpt-5", "GPT-5", 400_000, 128_000, reasoning=True, images=True, efforts=_OPENAI_EFFORTS),
    _e("gpt-5-mini", "GPT-5 mini", 400_000, 128_000, reasoning=True, images=True),
    _e("gpt-5-nano", "GPT-5 nano", 400_000, 128_000, reasoning=True, images=True),
    _e("gpt-oss", "gpt-oss", 131_072, 32_768, reasoning=True, efforts=("low", "medium", "high")),
    # Anthropic
    _e("claude-opus-4", "Claude Opus 4", 200_000, 32_000, reasoning=True, images=True),
    _e("claude-opus-4-1", "Claude Opus 4.1", 200_000, 32_000, reasoning=True, images=True),
    _e("claude-opus-4-5", "Claude Opus 4.5", 200_000, 64_000, reasoning=True, images=True),
    _e("claude-sonnet-4", "Claude Sonnet 4", 200_000, 64_000, reasoning=True, images=True),
    _e("claude-sonnet-4-5", "Claude Sonnet 4.5", 200_000, 64_000, reasoning=True, images=True),
    _e("claude-haiku-4-5", "Claude Haiku 4.5", 200_000, 64_000, reasoning=True, images=True),
    _e("claude-3-5-haiku", "Claude Haiku 3.5", 200_000, 8_192, images=True),
    # DeepSeek (API names)
    _e("deepseek-chat", "DeepSeek V3", 128_000, 8_192),
    _e("deepseek-reasoner", "DeepSeek R1", 128_000, 64_000, reasoning=True),
    _e("deepseek-r1", "DeepSeek R1 (local)", 131_072, 32_768, reasoning=True),
    # Qwen (API and Ollama / Hugging Face names)
    _e("qwen3", "Qwen3", 40_960, 16_384, reasoning=True),
    _e("qwen3-coder", "Qwen3 Coder", 262_144, 65_536),
    _e("qwen2.5-coder", "Qwen2.5 Coder", 32_768, 8_192),
    _e("qwen-plus", "Qwen Plus", 1_000_000, 32_768, reasoning=True),
    # Llama (Ollama and Hugging Face names)
    _e("llama3.1", "Llama 3.1", 131_072, 8_192),
    _e("llama3.2", "Llama 3.2", 131_072, 8_192),
    _e("llama3.3", "Llama 3.3", 131_072, 8_192),
    _e("llama-3.1", "Llama 3.1", 131_072, 8_192),
    _e("llama-3.3", "Llama 3.3", 131_072, 8_192),
    _e("meta-llama-3.1", "Llama 3.1", 131_072, 8_192),
    # Others often served locally
    _e("mistral-small", "Mistral Small", 131_072, 8_192, images=True),
    _e("devstral", "Devstral", 131_072, 8_192),
    _e("gemma3", "Gemma 3", 131_072, 8_192, images=True),
    # The spec's bundled entries (model-providers.md §4)
    _e("gpt-6-astra", "GPT-6 Astra", 1_050_000, 128_000, reasoning=True, images=True,
       efforts=_SPEC_EFFORTS, default="medium"),
    _e("gpt-6.1-sol", "GPT-6.1 Sol", 1_050_000, 128_000, reasoning=True, images=True,
       efforts=_SPEC_EFFORTS, default="medium"),
    _e("gpt-6-luna", "GPT-6 Luna", 1_050_000, 128_000, reasoning=True, images=True,
       efforts=("none", *_SPEC_EFFORTS), default="medium"),
    _e("deepseek-flash", "DeepSeek Flash", 1_048_576, 393_216, reasoning=True, images=True,
       efforts=("none", "low", "high", "max"), default="high"),
    _e("deepseek-v4-pro", "DeepSeek V4 Pro", 1_048_576, 393_216, reasoning=True,
       efforts=("none", "low", "high", "max"), default="high"),
    _e("kimi-k3", "Kimi K3", 1_048_576, 131_072, reasoning=True, images=True,
       efforts=("low", "high", "max"), default="max"),
    _e("glm-5.3", "GLM-5.3", 1_048_576, 131_072, reasoning=True,
       efforts=("low", "high", "max"), default="max"),
)  # fmt: skip

_BY_NAME = {entry.name: entry for entry in CATALOG}
_BOUNDARY = frozenset("-:._@ ")


def _normalised(model: str) -> str:
    """Lower case, without a router's vendor prefix (``anthropic/claude-sonnet-4`` and
    ``hf.co/Qwen/Qwen3-Coder`` look up ``claude-sonnet-4`` and ``qwen3-coder``)."""
    return model.strip().lower().rsplit("/", 1)[-1]


def catalog_entry(model: str) -> CatalogEntry | None:
    """The exact entry, else the longest entry that is a prefix of the name ending at a
    separator (``gpt-4o`` covers ``gpt-4o-2024-08-06``, not ``gpt-4oz``), else None."""
    name = _normalised(model)
    exact = _BY_NAME.get(name)
    if exact is not None:
        return exact
    covering = [
        entry
        for entry in CATALOG
        if name.startswith(entry.name) and name[len(entry.name)] in _BOUNDARY
    ]
    return max(covering, key=lambda entry: len(entry.name), default=None)
