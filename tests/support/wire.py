"""Reading recorded provider request bodies (OpenAI Chat Completions wire format)."""

from __future__ import annotations

from collections.abc import Mapping


def chat_user_texts(body: Mapping[str, object]) -> list[str]:
    """The text of every user message of a Chat Completions request body, in order."""
    messages = body["messages"]
    assert isinstance(messages, list)
    texts: list[str] = []
    for message in messages:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.append("".join(p.get("text", "") for p in content))
    return texts
