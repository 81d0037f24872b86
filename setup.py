"""Packages for setuptools (everything else is in pyproject.toml).

The SQL migrations stay in the top-level ``migrations/`` folder and ship in the wheel as the
data-only package ``openwork_migrations`` (a mapped directory), which
``openwork_core.storage.migrate`` finds with importlib when there is no source tree beside it.
"""

from setuptools import find_namespace_packages, setup

PACKAGES = ["openwork_core", "openwork_chat_state", "openwork_tools"]

setup(
    packages=[
        # namespace-aware: a folder without __init__.py (openwork_core/session) is a package too
        *find_namespace_packages(
            include=[name for p in PACKAGES for name in (p, f"{p}.*")], exclude=["*.__pycache__"]
        ),
        "openwork_migrations",
    ],
    package_dir={"openwork_migrations": "migrations"},
    package_data={
        "openwork_core": ["py.typed", "daemon/ui/*.html", "daemon/ui/*.js", "daemon/ui/*.css"],
        "openwork_chat_state": ["py.typed"],
        "openwork_tools": ["py.typed"],
        "openwork_migrations": ["*.sql"],
    },
    include_package_data=False,
)
