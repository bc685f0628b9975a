"""The README's flag/env table says what app.py accepts and which BATCHBOT_* variables the code reads.

A flag added to app.py, or an environment variable read anywhere in the app's packages, without a row in the
README table fails here; so does a row for something the code no longer reads.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app import build_parser, parse_args

ROOT = Path(__file__).resolve().parent.parent
TABLE_HEADER = "| flag | env | default |"
_ENV_LITERAL = re.compile(r"""["'](BATCHBOT_[A-Z0-9_]+)["']""")  # a name the code passes to os.environ / env.get
_ENV_NAME = re.compile(r"BATCHBOT_[A-Z0-9_]+")
_FLAG = re.compile(r"`(--[a-z][a-z0-9-]*)")


def _readme_table() -> list[tuple[str, str]]:
    """(flag cell, env cell) of every row of the README's flag/env table."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index(TABLE_HEADER) + 2  # skip the header and the |---| line
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]  # "\|" is a pipe in a cell
        rows.append((cells[0], cells[1]))
    return rows


def _readme_flags() -> set[str]:
    return {f for flag_cell, _ in _readme_table() for f in _FLAG.findall(flag_cell)}


def _readme_env() -> set[str]:
    return {e for _, env_cell in _readme_table() for e in _ENV_NAME.findall(env_cell)}


def _parser_flags() -> set[str]:
    return {
        opt
        for action in build_parser(env={})._actions
        for opt in action.option_strings
        if opt.startswith("--") and opt != "--help"
    }


def _env_read_by_code() -> set[str]:
    files = [ROOT / "app.py"] + [p for pkg in ("calculators", "rag", "ui") for p in (ROOT / pkg).rglob("*.py")]
    return {name for f in files for name in _ENV_LITERAL.findall(f.read_text(encoding="utf-8"))}


def test_the_table_is_found_and_has_rows() -> None:
    assert len(_readme_table()) >= 10


def test_every_flag_of_app_py_is_in_the_readme_table_and_no_other() -> None:
    assert _parser_flags() == _readme_flags()


def test_every_batchbot_variable_the_code_reads_is_in_the_readme_table_and_no_other() -> None:
    read = _env_read_by_code()
    assert "BATCHBOT_TORCH_THREADS" in read and "BATCHBOT_PORT" in read  # the scan itself works
    assert read == _readme_env()


@pytest.mark.parametrize(
    ("env", "flag"),
    [
        ({"BATCHBOT_PORT": "0"}, "--port"),
        ({"BATCHBOT_PORT": "80a"}, "--port"),
        ({"BATCHBOT_TORCH_THREADS": "x"}, "--torch-threads"),
        ({"BATCHBOT_TORCH_THREADS": "0"}, "--torch-threads"),
    ],
)
def test_a_bad_environment_value_is_a_usage_error_naming_the_flag(
    env: dict[str, str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args([], env=env)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}:" in err and "Traceback" not in err


def test_torch_threads_default_and_override() -> None:
    assert parse_args([], env={}).torch_threads == 1
    assert parse_args([], env={"BATCHBOT_TORCH_THREADS": "4"}).torch_threads == 4
    assert parse_args(["--torch-threads", "2"], env={"BATCHBOT_TORCH_THREADS": "4"}).torch_threads == 2
