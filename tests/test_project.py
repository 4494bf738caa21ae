"""The project's own set-up: conda and pip agree, CI runs the README's test command."""

from __future__ import annotations

import pytest
import yaml

from tests.conftest import ROOT

tomllib = pytest.importorskip("tomllib")


# `all` only names the other extras; `bench` (the peers for benchmarks/bench.py, llama-index and all) is
# kept out of the conda environment as it is out of `all`: `make bench` installs it on demand.
SKIPPED_EXTRAS = {"all", "bench"}


def pyproject_requirements() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = [r for name, reqs in project["optional-dependencies"].items() if name not in SKIPPED_EXTRAS for r in reqs
              if not r.startswith(f"{project['name']}[")]  # an extra naming another extra adds nothing new
    return set(project["dependencies"]) | set(extras)


def test_environment_yml_lists_the_same_requirements_as_pyproject():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert {r for r in pip if not r.startswith("-e")} == pyproject_requirements()


def test_torch_is_pinned_to_the_cpu_wheel_version():
    assert "torch==2.13.0" in pyproject_requirements()


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and "make demo" in readme
    assert (ROOT / ".ci" / "run").read_text().strip().endswith("make test")
