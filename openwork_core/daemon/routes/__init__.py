"""The daemon's routers, one module per resource; ``create_app`` includes each with one line."""
