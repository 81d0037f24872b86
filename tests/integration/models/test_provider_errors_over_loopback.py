"""Every vendor's real error body through the official SDK over HTTP (issue 14 points 1, 2, 6;
model-providers.md §3): overflow shapes reach the runtime as ``context_overflow``; unknown models,
bad keys and rate limits keep their kind; a 404 and an unreachable server name the URL called;
the SDK's retries honour ``retry-after-ms`` before any output."""

from __future__ import annotations

import pytest

from openwork_chat_state.messages import user_text
from openwork_core.failure_codes import FailureCode
from openwork_core.models.adapters import build_model_port
from openwork_core.models.call_options import call_options
from openwork_core.models.errors import turn_failure_code
from openwork_core.models.port import ModelCallOptions, ModelErrorKind, ModelRequest
from openwork_core.session.compaction.policy import overflow_due
from openwork_core.storage.records import ProviderSettings
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import ErrorReply, Gate, Held, Reply
from tests.fakes.provider_error_fixtures import error_fixture, fixture_names
from tests.integration.models.loopback import SYSTEM, completed, failure, outcome
from tests.support.ports import refused_port

K = ModelErrorKind


def _request() -> ModelRequest:
    return ModelRequest(
        model="fake-model", messages=(SYSTEM, user_text("hi")), tools=(), max_output_tokens=256
    )


EXPECTED: dict[str, ModelErrorKind] = {
    "ollama_model_not_found": K.MODEL_NOT_FOUND,
    "openai_model_not_found": K.MODEL_NOT_FOUND,
    "anthropic_model_not_found": K.MODEL_NOT_FOUND,
    "openai_invalid_api_key": K.AUTHENTICATION,
    "anthropic_authentication_error": K.AUTHENTICATION,
    "openai_rate_limited": K.RATE_LIMITED,
}


@pytest.mark.parametrize("name", fixture_names())
async def test_each_vendor_error_body_keeps_its_kind_through_the_sdk(
    fake: FakeProvider, name: str
) -> None:
    fixture = error_fixture(name)
    port = build_model_port(fixture.protocol, fake.url, "sk-test")  # type: ignore[arg-type]
    fake.push(fixture.reply())
    _, error = await failure(port, _request())
    assert error.kind is EXPECTED.get(name, K.CONTEXT_OVERFLOW), error.message
    assert error.http_status == fixture.status
    if error.kind is K.CONTEXT_OVERFLOW:
        assert overflow_due(error)


@pytest.mark.parametrize("protocol", ["openai-chat", "openai-responses", "anthropic"])
async def test_a_404_names_the_url_the_adapter_called(fake: FakeProvider, protocol: str) -> None:
    """A base URL with a doubled version path: the message shows where the request went."""
    port = build_model_port(protocol, f"{fake.url}/v1/v1", None)  # type: ignore[arg-type]
    fake.push(ErrorReply(status=404, code="not_found", message="no such route"))
    _, error = await failure(port, _request())
    assert f"{fake.url}/v1/v1/" in error.message
    assert turn_failure_code(error) is FailureCode.MODEL_NOT_FOUND


@pytest.mark.parametrize("protocol", ["openai-chat", "openai-responses", "anthropic"])
async def test_an_unreachable_provider_fails_provider_unreachable_naming_the_url(
    protocol: str,
) -> None:
    with refused_port() as refusing:
        base = f"http://127.0.0.1:{refusing}"
        port = build_model_port(protocol, base, None)  # type: ignore[arg-type]
        _, error = await failure(port, _request())
    assert base in error.message
    assert "unreachable" in error.message
    assert turn_failure_code(error) is FailureCode.PROVIDER_UNREACHABLE


@pytest.mark.parametrize("protocol", ["openai-chat", "openai-responses", "anthropic"])
async def test_a_rate_limit_is_retried_after_retry_after_ms_then_completes(
    fake: FakeProvider, protocol: str
) -> None:
    """Issue 14 point 6: retries before any output, honouring the provider's wait."""
    port = build_model_port(protocol, fake.url, "sk-test")  # type: ignore[arg-type]
    limited = error_fixture("openai_rate_limited").reply(headers=(("retry-after-ms", "20"),))
    fake.push(limited, Reply(text="after the wait"))
    options = ModelCallOptions(model_attempt_id="a", max_transport_attempts=2)
    events, error = await outcome(port, _request(), options)
    assert error is None
    assert completed(events).text == "after the wait"
    assert len(fake.requests) == 2


@pytest.mark.parametrize("protocol", ["openai-chat", "openai-responses", "anthropic"])
async def test_a_rate_limit_that_outlasts_the_retries_is_provider_rate_limited(
    fake: FakeProvider, protocol: str
) -> None:
    port = build_model_port(protocol, fake.url, "sk-test")  # type: ignore[arg-type]
    limited = error_fixture("openai_rate_limited").reply(headers=(("retry-after-ms", "10"),))
    fake.push(limited, limited, limited)
    options = ModelCallOptions(model_attempt_id="a", max_transport_attempts=3)
    _, error = await failure(port, _request(), options)
    assert len(fake.requests) == 3
    assert error.kind is K.RATE_LIMITED
    assert turn_failure_code(error) is FailureCode.PROVIDER_RATE_LIMITED


@pytest.mark.parametrize("protocol", ["openai-chat", "openai-responses", "anthropic"])
async def test_a_providers_idle_timeout_bounds_a_silent_server(
    fake: FakeProvider, protocol: str
) -> None:
    """Issue 14 point 6: the per-provider idle timeout (``ProviderSettings``) ends the call."""
    gate = Gate()
    fake.push(Held(Reply(text="too late"), gate))
    port = build_model_port(protocol, fake.url, "sk-test")  # type: ignore[arg-type]
    settings = ProviderSettings(idle_timeout_s=0.3, total_timeout_s=60, max_retries=0)
    try:
        _, error = await failure(port, _request(), call_options(settings, "a"))
    finally:
        gate.release()
    assert error.kind is K.TIMEOUT
    assert len(fake.requests) == 1, "max_retries 0: one attempt"


def test_provider_settings_become_the_call_options() -> None:
    settings = ProviderSettings(idle_timeout_s=7, total_timeout_s=70, max_retries=4)
    options = call_options(settings, "t-model-1")
    assert (options.idle_timeout_s, options.total_timeout_s, options.max_transport_attempts) == (
        7,
        70,
        5,
    )
