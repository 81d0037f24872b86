"""OpenWork tools: contract, registry, built-in tools, path fence, results and the sandbox.

Must not import ``openwork_core``; from ``openwork_chat_state`` only ``messages``.
Names are imported from their modules: the package re-exports nothing, so a light module
(``openwork_tools.results`` …) is imported without the built-in tools.
"""

__all__: list[str] = []
