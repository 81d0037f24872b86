"""The model port, its errors and capabilities (model-providers.md). Adapters live in
``openwork_core.models.adapters`` (part of the session runtime: they pull in the SDKs).
Names are imported from their modules."""

__all__: list[str] = []
