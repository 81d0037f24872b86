"""ModelRequest → Responses ``input`` (issue 14 points 3 and 10): which reasoning goes back."""

from __future__ import annotations

from openwork_chat_state.messages import (
    ContentBlock,
    Message,
    ProviderOpaqueBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from openwork_core.models.adapters.opaque import OpaqueScope, scoped_block
from openwork_core.models.adapters.openai_responses_encode import (
    DRIVER,
    REASONING_KIND,
    encode_input,
    reasoning_data,
)

SCOPE = OpaqueScope(endpoint="http://h/v1/", model="m")


def reasoning(encrypted: str = "enc", scope: OpaqueScope = SCOPE) -> ProviderOpaqueBlock:
    return scoped_block(DRIVER, REASONING_KIND, scope, reasoning_data(["why"], encrypted))


def assistant(*blocks: ContentBlock) -> Message:
    return Message(role=Role.ASSISTANT, content=blocks)


def kinds(message: Message, scope: OpaqueScope | None = SCOPE) -> list[object]:
    return [item.get("type") for item in encode_input([message], scope)]


def test_reasoning_goes_first_and_carries_no_id() -> None:
    message = assistant(
        ThinkingBlock(thinking="why"),
        TextBlock(text="reading"),
        reasoning(),
        ToolCallBlock(id="c1", name="read", input="{}"),
    )
    items = encode_input([message], SCOPE)
    assert [i.get("type") for i in items] == ["reasoning", "message", "function_call"]
    assert items[0] == {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "why"}],
        "encrypted_content": "enc",
    }
    assert not any("id" in item for item in items)


def test_reasoning_of_another_model_endpoint_or_driver_is_dropped() -> None:
    call = ToolCallBlock(id="c1", name="read", input="{}")
    other_model = OpaqueScope(endpoint=SCOPE.endpoint, model="other")
    other_endpoint = OpaqueScope(endpoint="http://elsewhere/v1/", model="m")
    foreign = ProviderOpaqueBlock(driver="anthropic", kind="reasoning", payload=reasoning().payload)
    for block in (reasoning(scope=other_model), reasoning(scope=other_endpoint), foreign):
        assert kinds(assistant(block, call)) == ["function_call"]
    assert kinds(assistant(reasoning(), call), None) == ["function_call"]


def test_reasoning_without_encrypted_content_or_without_output_is_not_sent() -> None:
    call = ToolCallBlock(id="c1", name="read", input="{}")
    assert kinds(assistant(reasoning(""), call)) == ["function_call"]
    assert kinds(assistant(reasoning())) == []
    assert kinds(assistant(ThinkingBlock(thinking="t"), reasoning())) == []


def test_the_resubmission_drops_every_reasoning_item() -> None:
    message = assistant(reasoning(), TextBlock(text="ok"))
    assert [i.get("type") for i in encode_input([message], SCOPE, reasoning=False)] == ["message"]
