"""What the desktop app reads beyond the core contract (issue 16): session lifecycle, history,
the context page's overview. Pure rules here; I/O in ``storage.postgres`` and ``DesktopQueries``."""
