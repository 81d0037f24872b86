"""The user's own MCP servers as tools (issue 27; docs/mcp.md).

``config`` (one server's settings), ``names`` and ``schema`` (pure: what the model is shown),
``results`` (pure: what a call returns), ``store`` (where PUT servers live), ``transport`` and
``connection`` (one supervised client per server), ``manager`` (every server of the daemon),
``tool`` (a listed tool as a registry tool, and the frozen surface of one session load).

Submodules are imported directly; the SDK (``mcp``) is imported only by ``connection`` and
``transport``, and only once a server is configured."""
