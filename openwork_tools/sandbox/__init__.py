"""The Linux sandbox backend: bubblewrap profile, self-check, danger detection.

Names are imported from their modules (``openwork_tools.sandbox.bwrap`` …): ``openwork_tools.context``
imports ``gitdir``, and ``bwrap`` imports ``context`` back, so this ``__init__`` re-exports
nothing (an eager re-export of ``bwrap`` here would close that cycle)."""
