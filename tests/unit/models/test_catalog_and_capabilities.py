"""The built-in catalog and the capability resolution order (model-providers.md §4; issue 14
point 8): provider settings, then the model row, then the catalog (exact, longest prefix), then
the fallback; a smaller served window wins."""

from __future__ import annotations

import pytest

from openwork_core.models.capabilities import (
    FALLBACK_CAPABILITIES,
    CapabilityError,
    resolve_capabilities,
)
from openwork_core.models.catalog import CATALOG, catalog_entry
from openwork_core.storage.records import ProviderModel, ProviderSettings

DEFAULTS = ProviderSettings()


@pytest.mark.parametrize(
    ("name", "entry", "window"),
    [
        ("gpt-4.1", "gpt-4.1", 1_047_576),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini", 1_047_576),
        ("gpt-4o-2024-08-06", "gpt-4o", 128_000),
        ("o3", "o3", 200_000),
        ("o4-mini", "o4-mini", 200_000),
        ("gpt-5", "gpt-5", 400_000),
        ("gpt-5.1", "gpt-5", 400_000),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", 200_000),
        ("claude-opus-4-1", "claude-opus-4-1", 200_000),
        ("claude-haiku-4-5", "claude-haiku-4-5", 200_000),
        ("anthropic/claude-sonnet-4", "claude-sonnet-4", 200_000),
        ("deepseek-chat", "deepseek-chat", 128_000),
        ("qwen3-coder:30b", "qwen3-coder", 262_144),
        ("qwen3:8b", "qwen3", 40_960),
        ("llama3.1:8b", "llama3.1", 131_072),
        ("Meta-Llama-3.1-8B-Instruct", "meta-llama-3.1", 131_072),
    ],
)
def test_well_known_models_are_found_exactly_or_by_their_longest_prefix(
    name: str, entry: str, window: int
) -> None:
    found = catalog_entry(name)
    assert found is not None
    assert (found.name, found.context_window) == (entry, window)


@pytest.mark.parametrize("name", ["gpt-4oz", "my-finetune", "o33", ""])
def test_a_prefix_counts_only_up_to_a_separator(name: str) -> None:
    assert catalog_entry(name) is None


def test_every_catalog_entry_is_valid_capabilities() -> None:
    for entry in CATALOG:
        resolved = resolve_capabilities(ProviderModel(name=entry.name), DEFAULTS)
        assert resolved.source == "catalog"
        assert resolved.capabilities.context_window_tokens == entry.context_window
        assert resolved.capabilities.accepts_data_blocks is entry.images


def test_a_session_naming_a_well_known_model_needs_no_numbers() -> None:
    resolved = resolve_capabilities(ProviderModel(name="claude-sonnet-4-5"), DEFAULTS)
    caps = resolved.capabilities
    assert (caps.context_window_tokens, caps.max_output_tokens) == (200_000, 64_000)
    assert caps.accepts_data_blocks


def test_the_model_row_overrides_the_catalog_and_settings_override_both() -> None:
    row = ProviderModel(name="gpt-4o", context_window=64_000, max_output_tokens=4_000)
    assert resolve_capabilities(row, DEFAULTS).capabilities.context_window_tokens == 64_000
    assert resolve_capabilities(row, DEFAULTS).source == "configured"
    settings = ProviderSettings(context_window=32_000, max_output_tokens=2_000)
    caps = resolve_capabilities(row, settings).capabilities
    assert (caps.context_window_tokens, caps.max_output_tokens) == (32_000, 2_000)


def test_an_unknown_model_gets_the_fallback() -> None:
    resolved = resolve_capabilities(ProviderModel(name="my-finetune"), DEFAULTS)
    assert resolved.source == "fallback"
    assert resolved.capabilities == FALLBACK_CAPABILITIES


def test_a_smaller_served_window_wins_and_the_output_budget_shrinks_to_fit() -> None:
    row = ProviderModel(name="llama3.1:8b", context_window=131_072, max_output_tokens=8_192)
    resolved = resolve_capabilities(row, DEFAULTS, served_window=4_096)
    assert resolved.limited_by_server
    assert resolved.capabilities.context_window_tokens == 4_096
    assert resolved.capabilities.max_output_tokens == 1_024


def test_a_larger_served_window_never_grows_the_configured_one() -> None:
    row = ProviderModel(name="m", context_window=8_192, max_output_tokens=1_024)
    resolved = resolve_capabilities(row, DEFAULTS, served_window=32_768)
    assert not resolved.limited_by_server
    assert resolved.capabilities.context_window_tokens == 8_192


def test_a_configured_window_with_only_a_catalog_output_shrinks_the_output() -> None:
    """Issue 24 point 2: under 32 768 tokens min(output, max(1 024, window ÷ 8))."""
    row = ProviderModel(name="gpt-4.1", context_window=8_000)
    assert resolve_capabilities(row, DEFAULTS).capabilities.max_output_tokens == 1_024


@pytest.mark.parametrize(
    ("window", "output", "reserved"),
    [
        (4_096, 2_048, 1_024),
        (8_192, 2_048, 1_024),
        (8_192, 512, 512),
        (16_384, 4_096, 2_048),
        (24_576, 8_192, 3_072),
        (32_768, 4_096, 4_096),
        (131_072, 8_192, 8_192),
    ],
)
def test_a_window_under_32768_tokens_reserves_at_most_an_eighth_of_it_and_at_least_1024(
    window: int, output: int, reserved: int
) -> None:
    """Issue 24 point 2 (docs/compaction.md "A reservation that fits the window"): a served or
    configured window under 32 768 reserves min(output, max(1 024, window ÷ 8)); from 32 768 up
    the chosen output stands."""
    configured = ProviderModel(name="m", context_window=window, max_output_tokens=output)
    assert resolve_capabilities(configured, DEFAULTS).capabilities.max_output_tokens == reserved
    served = ProviderModel(name="m", context_window=200_000, max_output_tokens=output)
    capabilities = resolve_capabilities(served, DEFAULTS, served_window=window).capabilities
    assert capabilities.max_output_tokens == reserved


def test_configured_numbers_that_cannot_fit_are_refused() -> None:
    row = ProviderModel(name="m", context_window=1_000, max_output_tokens=1_000)
    with pytest.raises(CapabilityError):
        resolve_capabilities(row, DEFAULTS)
