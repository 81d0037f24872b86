"""The optional TOML configuration file (issue 15 point 4; daemon-api.md §1): the same settings
as the environment, the environment wins; every problem is a ConfigError naming the setting."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from openwork_core.config import ConfigError, config_file_path, load_settings, unknown_settings

EXAMPLE = Path(__file__).resolve().parents[3] / "config.example.toml"


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("OPENWORK_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def _write(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "openwork.toml"
    path.write_text(text)
    monkeypatch.setenv("OPENWORK_CONFIG", str(path))
    return path


def test_the_file_gives_settings_and_the_environment_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(
        tmp_path,
        'listen = "127.0.0.1:9000"\nmodel = "from-file"\nprovider = "openai-chat"\n',
        monkeypatch,
    )
    monkeypatch.setenv("OPENWORK_MODEL", "from-env")
    settings = load_settings()
    assert settings.listen == "127.0.0.1:9000"
    assert settings.model == "from-env"


def test_without_openwork_config_the_platform_config_dir_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = config_file_path()
    assert path == tmp_path / "xdg" / "openwork" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('listen = "127.0.0.1:9111"\n')
    assert load_settings().listen == "127.0.0.1:9111"


def test_an_unknown_key_in_the_file_is_one_warning_naming_the_closest_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 24 point 6: a typo in the file is one warning line naming the closest known
    setting; the key is ignored and the start goes on."""
    path = _write(tmp_path, 'listne = "127.0.0.1:9000"\nmodel = "m"\n', monkeypatch)
    assert load_settings().model == "m"
    assert unknown_settings() == [f"{path}: listne is not a setting (did you mean listen?)"]


def test_an_unknown_openwork_variable_is_one_warning_naming_the_closest_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 24 point 6: ``OPENWORK_MODLE`` (a typo) is named with ``OPENWORK_MODEL``; a name
    like no setting says it is ignored; settings and the process's own variables are silent."""
    monkeypatch.setenv("OPENWORK_MODLE", "qwen3")
    monkeypatch.setenv("OPENWORK_ZZZ", "1")
    monkeypatch.setenv("OPENWORK_MODEL", "qwen3")
    monkeypatch.setenv("OPENWORK_FAULTPOINT", "x")
    assert unknown_settings() == [
        "OPENWORK_MODLE is not a setting (did you mean OPENWORK_MODEL?)",
        "OPENWORK_ZZZ is not a setting (it is ignored)",
    ]


def test_a_bad_value_in_the_file_names_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, 'provider = "openai"\n', monkeypatch)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert caught.value.setting == "OPENWORK_PROVIDER"


def test_a_missing_or_broken_file_named_by_openwork_config_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENWORK_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings()
    _write(tmp_path, "listen = \n", monkeypatch)
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings()


def test_the_commented_example_in_the_repository_is_a_valid_config_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The example uncommented line by line still loads: every key in it is a setting."""
    import tomllib

    from openwork_core.config import OpenWorkSettings

    keys = set()
    for line in EXAMPLE.read_text().splitlines():
        if re.match(r"^# [a-z_]+ = ", line):
            keys.update(tomllib.loads(line.removeprefix("# ")))
    assert keys == set(OpenWorkSettings.model_fields)
    monkeypatch.setenv("OPENWORK_CONFIG", str(EXAMPLE))
    load_settings()  # as shipped (all commented out): valid


@pytest.mark.parametrize(
    ("listen", "message"),
    [
        ("localhost", "host:port"),
        ("127.0.0.1:99999", "host:port"),
        ("example.org:80", "IP address"),
    ],
)
def test_listen_must_be_an_address_and_a_port(
    monkeypatch: pytest.MonkeyPatch, listen: str, message: str
) -> None:
    monkeypatch.setenv("OPENWORK_LISTEN", listen)
    with pytest.raises(ConfigError, match=message) as caught:
        load_settings()
    assert caught.value.setting == "OPENWORK_LISTEN"


def test_secrets_are_not_echoed_in_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENWORK_DATABASE_URL", "mysql://u:hunter2@h/db")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "hunter2" not in str(caught.value)


def test_the_sandbox_settings_default_to_no_network_and_the_documented_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 22 points 2 and 5: OPENWORK_SANDBOX_NETWORK is off unless set to on; memory 4096 MB
    and 512 processes by default; anything but off/on names the setting."""
    from openwork_tools.policy import NetworkSetting, SandboxSettings

    assert load_settings().sandbox_settings == SandboxSettings()
    assert SandboxSettings().memory_mb == 4096 and SandboxSettings().max_processes == 512
    monkeypatch.setenv("OPENWORK_SANDBOX_NETWORK", "on")
    monkeypatch.setenv("OPENWORK_SANDBOX_MEMORY_MB", "1024")
    settings = load_settings().sandbox_settings
    assert (settings.network, settings.memory_mb) == (NetworkSetting.ON, 1024)
    monkeypatch.setenv("OPENWORK_SANDBOX_NETWORK", "sometimes")
    with pytest.raises(ConfigError) as raised:
        load_settings()
    assert raised.value.setting == "OPENWORK_SANDBOX_NETWORK"
    assert "use off (the default) or on" in str(raised.value)
