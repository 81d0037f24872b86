"""Chat State: the single writer of the model-visible Conversation.

Names are imported from their modules (``openwork_chat_state.actor`` …): the package re-exports
nothing, so the daemon's start path imports the Chat State types without its actor."""

__all__: list[str] = []
