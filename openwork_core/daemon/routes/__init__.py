"""One router per resource of daemon-api.md; each calls only the ``OpenWorkCore`` facade."""
