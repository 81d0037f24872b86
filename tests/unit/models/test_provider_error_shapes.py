"""Every vendor's real error body is classified to the kind a runtime can act on (issue 14 points
1 and 6; model-providers.md §3; compaction.md §1, §8.2): overflow from OpenAI, Azure, Anthropic,
llama.cpp, vLLM, LM Studio and Ollama becomes ``context_overflow``; unknown models, bad keys and
rate limits become the turn failure codes a user can act on."""

from __future__ import annotations

import httpx
import pytest

from openwork_core.failure_codes import FailureCode
from openwork_core.models.errors import (
    http_error,
    is_overflow_message,
    stream_error,
    turn_failure_code,
    unreachable,
)
from openwork_core.models.port import DeliveryState, ModelError, ModelErrorKind, RetryHint
from openwork_core.session.compaction.policy import overflow_due
from tests.fakes.provider_error_fixtures import error_fixture, fixture_names

K = ModelErrorKind
NO_HEADERS = httpx.Headers()

OVERFLOW_FIXTURES = [
    "openai_context_length_exceeded",
    "openai_responses_context_length_exceeded",
    "azure_context_length_exceeded",
    "anthropic_prompt_too_long",
    "llamacpp_exceed_context_size",
    "vllm_maximum_context_length",
    "vllm_v1_longer_than_max_model_len",
    "lmstudio_context_overflow",
    "lmstudio_tokens_to_keep",
    "ollama_input_exceeds_context",
]


def test_every_fixture_is_listed_in_one_of_the_tables_below() -> None:
    listed = set(OVERFLOW_FIXTURES) | {name for name, _, _ in OTHER_FIXTURES}
    assert set(fixture_names()) == listed


@pytest.mark.parametrize("name", OVERFLOW_FIXTURES)
def test_each_vendors_overflow_body_is_a_context_overflow_the_runtime_compacts(name: str) -> None:
    """§3 / compaction.md §1: caller_decision, no semantic output, so the runner may compact."""
    fixture = error_fixture(name)
    error = http_error(fixture.status, fixture.body, NO_HEADERS)
    assert error.kind is K.CONTEXT_OVERFLOW
    assert error.retry is RetryHint.CALLER_DECISION
    assert error.delivery is DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT
    assert overflow_due(error)
    assert turn_failure_code(error) is FailureCode.MODEL_ERROR


@pytest.mark.parametrize("name", OVERFLOW_FIXTURES)
def test_each_vendors_overflow_body_is_an_overflow_inside_a_stream_too(name: str) -> None:
    assert stream_error(error_fixture(name).body).kind is K.CONTEXT_OVERFLOW


OTHER_FIXTURES = [
    ("ollama_model_not_found", K.MODEL_NOT_FOUND, FailureCode.MODEL_NOT_FOUND),
    ("openai_model_not_found", K.MODEL_NOT_FOUND, FailureCode.MODEL_NOT_FOUND),
    ("anthropic_model_not_found", K.MODEL_NOT_FOUND, FailureCode.MODEL_NOT_FOUND),
    ("openai_invalid_api_key", K.AUTHENTICATION, FailureCode.PROVIDER_AUTH_FAILED),
    ("anthropic_authentication_error", K.AUTHENTICATION, FailureCode.PROVIDER_AUTH_FAILED),
    ("openai_rate_limited", K.RATE_LIMITED, FailureCode.PROVIDER_RATE_LIMITED),
]


@pytest.mark.parametrize(("name", "kind", "code"), OTHER_FIXTURES)
def test_auth_rate_limit_and_unknown_model_bodies_have_their_own_failure_codes(
    name: str, kind: ModelErrorKind, code: FailureCode
) -> None:
    fixture = error_fixture(name)
    error = http_error(fixture.status, fixture.body, NO_HEADERS)
    assert error.kind is kind
    assert turn_failure_code(error) is code


def test_a_403_is_an_auth_failure_the_user_can_act_on() -> None:
    body = {"type": "error", "error": {"type": "permission_error", "message": "no access"}}
    assert turn_failure_code(http_error(403, body, NO_HEADERS)) is FailureCode.PROVIDER_AUTH_FAILED


def test_a_404_names_the_url_it_called() -> None:
    """Issue 14 point 2: a wrong base URL shows where the request went."""
    url = "http://127.0.0.1:1234/v1/v1/messages"
    error = http_error(404, {"error": {"message": "Not Found"}}, NO_HEADERS, url=url)
    assert url in error.message
    assert error.kind is K.MODEL_NOT_FOUND


def test_an_unreachable_provider_names_the_url_and_has_its_own_code() -> None:
    error = unreachable("http://10.0.0.1:11434/v1/chat/completions", "Connection error.")
    assert "http://10.0.0.1:11434/v1/chat/completions" in error.message
    assert turn_failure_code(error) is FailureCode.PROVIDER_UNREACHABLE


def test_a_stream_cut_after_the_provider_answered_is_not_unreachable() -> None:
    cut = ModelError.network("stream ended").with_delivery(
        DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT
    )
    assert turn_failure_code(cut) is FailureCode.MODEL_ERROR


@pytest.mark.parametrize(
    "message",
    [
        "maximum context length exceeded",
        "please keep the context length short",
        "prompt is too long",
        "the input is long",
    ],
)
def test_loose_text_that_only_mentions_context_is_not_an_overflow(message: str) -> None:
    """The shapes are anchored vendor sentences with their numbers, not keywords."""
    assert not is_overflow_message(message)
    assert http_error(400, {"error": {"message": message}}, NO_HEADERS).kind is K.INVALID_REQUEST


def test_an_overflow_sentence_on_a_429_stays_a_rate_limit() -> None:
    body = {"error": {"message": "This model's maximum context length is 10 tokens"}}
    assert http_error(429, body, NO_HEADERS).kind is K.RATE_LIMITED
