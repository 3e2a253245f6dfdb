"""``deploy/local.py``: ``serve`` (and ``demo``) install the project's runtime dependencies only,
``test`` the test tools too. Read from pyproject.toml and from what local.py asks pip for."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
TEST_TOOLS = {
    "pytest",
    "pytest-xdist",
    "fakeredis",
    "hypothesis",
    "playwright",
    "ruff",
    "mypy",
    "schemathesis",
}


def local() -> ModuleType:
    spec = importlib.util.spec_from_file_location("deploy_local", ROOT / "deploy" / "local.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower() for requirement in requirements}


def test_the_runtime_dependencies_hold_no_test_tool_and_the_dev_extra_holds_them_all() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = names(project["dependencies"])
    assert runtime and not runtime & TEST_TOOLS, runtime & TEST_TOOLS
    assert names(project["optional-dependencies"]["dev"]) >= TEST_TOOLS
    for requirement in project["dependencies"]:  # a lower bound on every runtime dependency
        assert ">=" in requirement, requirement


def test_serve_and_demo_ask_pip_for_the_project_alone_and_test_for_its_dev_extra() -> None:
    module = local()
    assert module.install_target("serve") == str(ROOT)
    assert module.install_target("demo") == str(ROOT)
    assert module.install_target("test") == f"{ROOT}[dev]"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(module.EXTRAS.values()) - {""} <= set(extras)


def test_the_suite_runs_with_bytecode_caches_on_whatever_the_caller_set_and_keeps_the_rest() -> None:
    environ = {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin", "CI": "true"}
    assert local().test_environment(environ) == {"PATH": "/usr/bin", "CI": "true"}
