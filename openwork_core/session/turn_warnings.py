"""A turn's warnings (issue 24 point 4): each code at most once per turn, sent at once as a
``warning`` session update and written to ``turn_warnings`` (``GET …/turns/{tid}``). A warning
is advice: a failed write is logged and the turn goes on."""

from __future__ import annotations

from collections.abc import Callable

import structlog

from openwork_core.ids import TurnId
from openwork_core.models.served_window import ServedWindow
from openwork_core.models.warnings import (
    ModelWarning,
    WarningCode,
    input_truncation_suspected,
    tools_unsupported,
)
from openwork_core.session.storage import SessionStorage
from openwork_core.session.updates import SessionUpdate, WarningRaised
from openwork_core.storage.records import TurnWarningRecord
from openwork_core.storage.usage_records import ModelCallRecord

log = structlog.get_logger(__name__)


class TurnWarnings:
    def __init__(
        self, turn_id: TurnId, storage: SessionStorage, emit: Callable[[SessionUpdate], None]
    ) -> None:
        self._turn_id = turn_id
        self._storage = storage
        self._emit = emit
        self._raised: set[WarningCode] = set()

    async def raise_once(self, warning: ModelWarning, model_call: int) -> None:
        if warning.code in self._raised:
            return
        self._raised.add(warning.code)
        log.warning("turn.warning", code=warning.code.value, model_call=model_call)
        self._emit(WarningRaised(code=warning.code, message=warning.message, model_call=model_call))
        record = TurnWarningRecord(
            code=warning.code.value, message=warning.message, model_call=model_call
        )
        try:
            await self._storage.record_turn_warning(self._turn_id, record)
        except Exception as exc:  # advice only: never the turn's fate
            log.warning("turn.warning_not_written", code=warning.code.value, error=repr(exc))

    async def before_submission(
        self, served: ServedWindow | None, model: str, has_tools: bool, model_call: int
    ) -> None:
        """``tools_unsupported``: the request carries tools the server says it cannot render."""
        if has_tools and served is not None and served.supports_tools is False:
            await self.raise_once(tools_unsupported(served.server, model), model_call)

    async def after_submission(self, record: ModelCallRecord) -> None:
        """``input_truncation_suspected``: the provider counted far fewer input tokens."""
        reported = record.usage.input_tokens
        if record.input_truncation_suspected and reported is not None:
            warning = input_truncation_suspected(record.estimated_input_tokens, reported)
            await self.raise_once(warning, record.model_call)
