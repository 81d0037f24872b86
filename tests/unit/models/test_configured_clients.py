"""ConfiguredClients: an SDK client is configured once per distinct retries/timeout pair, not
once per model call (issue 13: ``with_options`` copies the client and re-reads platform
headers on a worker thread before the copy's first request)."""

from __future__ import annotations

from openwork_core.models.adapters.raw_body import ConfiguredClients
from openwork_core.models.port import ModelCallOptions


def test_calls_with_the_same_options_share_one_configured_client() -> None:
    made: list[tuple[int, float]] = []

    def configure(retries: int, timeout_s: float) -> object:
        made.append((retries, timeout_s))
        return object()

    clients = ConfiguredClients(configure)
    first = clients.get(ModelCallOptions(model_attempt_id="a", max_transport_attempts=3))
    again = clients.get(ModelCallOptions(model_attempt_id="b", max_transport_attempts=3))
    other = clients.get(
        ModelCallOptions(model_attempt_id="c", max_transport_attempts=1, idle_timeout_s=5.0)
    )
    assert first is again
    assert other is not first
    assert made == [(2, 120.0), (0, 5.0)]


def test_the_kept_clients_are_bounded() -> None:
    clients: ConfiguredClients[tuple[int, float]] = ConfiguredClients(lambda r, t: (r, t))
    for n in range(ConfiguredClients.LIMIT * 3):
        options = ModelCallOptions(model_attempt_id="a", idle_timeout_s=float(n + 1))
        assert clients.get(options) == (2, float(n + 1))
    assert len(clients._clients) <= ConfiguredClients.LIMIT
