"""The deployment files (issue 15 point 6). No container engine runs here, so: the compose
file's structure (services, volumes, healthchecks, the daemon's setting names) and the Dockerfile's
shape; tests/integration/packaging/test_dockerfile_lint.py lints it with hadolint."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from openwork_core.config import ENV_PREFIX, OpenWorkSettings, listen_host_port

REPO = Path(__file__).resolve().parents[3]
SETTING_NAMES = {ENV_PREFIX + name.upper() for name in OpenWorkSettings.model_fields}


def _compose() -> dict[str, Any]:
    data = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def _interpolated(value: str) -> str:
    """``${NAME:-default}`` → default, ``${NAME:?message}`` → ``<NAME>`` (as compose would)."""
    value = re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", value)
    return re.sub(r"\$\{([A-Z_]+):\?[^}]*\}", r"<\1>", value)


def test_compose_runs_postgres_with_a_volume_and_a_healthcheck() -> None:
    compose = _compose()
    db = compose["services"]["db"]
    assert db["image"].startswith("postgres:")
    (volume,) = db["volumes"]
    name, target = volume.split(":", 1)
    assert target == "/var/lib/postgresql/data"
    assert name in compose["volumes"]
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])


def test_compose_builds_the_daemon_from_the_dockerfile_after_the_database_is_healthy() -> None:
    daemon = _compose()["services"]["openwork"]
    assert daemon["build"] == "."
    assert (REPO / "Dockerfile").is_file()
    assert daemon["depends_on"]["db"]["condition"] == "service_healthy"


def test_every_openwork_variable_in_compose_is_a_daemon_setting() -> None:
    environment = _compose()["services"]["openwork"]["environment"]
    names = {name for name in environment if name.startswith(ENV_PREFIX)}
    assert names <= SETTING_NAMES, sorted(names - SETTING_NAMES)
    assert {"OPENWORK_DATABASE_URL", "OPENWORK_LISTEN", "OPENWORK_TOKEN"} <= names


def test_the_database_url_points_at_the_db_service_with_its_credentials() -> None:
    compose = _compose()
    db_env = {k: _interpolated(str(v)) for k, v in compose["services"]["db"]["environment"].items()}
    url = urlsplit(
        _interpolated(compose["services"]["openwork"]["environment"]["OPENWORK_DATABASE_URL"])
    )
    assert url.scheme == "postgresql"
    assert url.hostname == "db" and url.port == 5432
    assert (url.username, url.password) == (db_env["POSTGRES_USER"], db_env["POSTGRES_PASSWORD"])
    assert url.path == "/" + db_env["POSTGRES_DB"]


def test_the_daemon_listens_beyond_loopback_with_the_token_from_the_environment() -> None:
    daemon = _compose()["services"]["openwork"]
    env = daemon["environment"]
    host, port = listen_host_port(env["OPENWORK_LISTEN"])
    assert host == "0.0.0.0"
    assert str(env["OPENWORK_ALLOW_REMOTE"]).lower() == "true"
    assert re.fullmatch(r"\$\{OPENWORK_TOKEN:\?[^}]+\}", env["OPENWORK_TOKEN"])  # required
    published = [p for p in daemon["ports"] if p.endswith(f":{port}")]
    assert published == [f"127.0.0.1:{port}:{port}"]
    settings = OpenWorkSettings(
        listen=env["OPENWORK_LISTEN"], allow_remote=env["OPENWORK_ALLOW_REMOTE"], token="t"
    )
    assert settings.allow_remote is True


def test_the_daemons_healthcheck_asks_v1_health_on_the_listening_port() -> None:
    daemon = _compose()["services"]["openwork"]
    _, port = listen_host_port(daemon["environment"]["OPENWORK_LISTEN"])
    test = " ".join(daemon["healthcheck"]["test"])
    assert f"http://127.0.0.1:{port}/v1/health" in test


def test_the_dockerfile_is_multi_stage_slim_non_root_with_bubblewrap_and_a_healthcheck() -> None:
    text = (REPO / "Dockerfile").read_text()
    stages = re.findall(r"^FROM (\S+)", text, flags=re.MULTILINE)
    assert len(stages) >= 2
    assert stages[-1].endswith("-slim")
    final = text[text.rindex("\nFROM ") :]
    assert "apt-get install" in final and "bubblewrap" in final
    users = re.findall(r"^USER (\S+)", final, flags=re.MULTILINE)
    assert users and users[-1] not in ("root", "0")
    assert re.search(r"^HEALTHCHECK .*", final, flags=re.MULTILINE | re.DOTALL)
    assert "/v1/health" in final
    _, port = listen_host_port(re.search(r"OPENWORK_LISTEN=(\S+)", final).group(1))  # type: ignore[union-attr]
    assert f"EXPOSE {port}" in final
    for source in re.findall(r"^COPY (?!--from)(.+) \S+$", text, flags=re.MULTILINE):
        for path in source.split():
            assert (REPO / path).exists(), (
                f"the Dockerfile copies {path}, which is not in the repository"
            )
    env_names = set(re.findall(r"\b(OPENWORK_[A-Z_]+)=", final))
    assert env_names <= SETTING_NAMES
    home = re.search(r"OPENWORK_HOME=(\S+)", final).group(1)  # type: ignore[union-attr]
    assert re.search(rf"install -d -o {users[-1]} -g {users[-1]} [^\n]*{re.escape(home)}", final)


def test_the_volumes_of_the_daemon_are_where_the_image_keeps_its_data() -> None:
    """The named volume is mounted on OPENWORK_HOME of the image (created there for the user)."""
    dockerfile = (REPO / "Dockerfile").read_text()
    home = re.search(r"OPENWORK_HOME=(\S+)", dockerfile).group(1)  # type: ignore[union-attr]
    compose = _compose()
    mounts = {
        target: source
        for source, target in (
            _interpolated(v).rsplit(":", 1) for v in compose["services"]["openwork"]["volumes"]
        )
    }
    assert mounts[home] in compose["volumes"]
    assert "/workspaces" in mounts
