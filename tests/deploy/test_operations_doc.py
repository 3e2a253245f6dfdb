"""The operators' documents say only what the code does: every claim these tests can extract from
``docs/operations.md``, ``docs/alerts.md``, ``docs/restore.md`` and ``deploy/README.md`` is checked
against the code, so a renamed setting, flag, metric, alert, file or route fails here, naming the
document, the line and the claim.

What is checked: every ``TABLESTREAM_*`` variable is a field of ``Settings`` (or one of the few
variables read outside it) and every default the documents give it is the code's; every
``tablestream <command> ...`` of a code block parses with that command's own argparse parser, and
every ``--flag`` named beside a command in the prose is one it accepts; every ``tablestream_*``
metric is in a real ``/metrics`` scrape of the app; every alert named exists in
``deploy/prometheus/alerts.yaml``, and every alert there has its section in ``docs/alerts.md``;
every repository path in backticks exists (a ``path::test`` names a test of that file); every HTTP
route named is one of the app's router."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import re
import shlex
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from starlette.routing import Route
from starlette.testclient import TestClient

from services.api.app import create_app
from services.cli import main as cli_main
from services.cli import verify, witness
from services.cli.backup import COMMANDS as BACKUP_COMMANDS
from services.operating.config import ENV_PREFIX, Settings
from services.telemetry import metrics, structured_logging
from workers.backup import cli as backup

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("docs/operations.md", "docs/alerts.md", "docs/restore.md", "deploy/README.md")
ADMIN_TOKEN = "operations-doc-token"

OUTSIDE_SETTINGS = {structured_logging.LEVEL_VARIABLE: "info"}
"""Variables read outside ``Settings``, with their defaults: the log level is read before any
setting, by ``services/telemetry/structured_logging.py``."""

NOT_EXPORTED = {
    "tablestream_http_requests_per_second": "deploy/k8s/prometheus-adapter-values.yaml",
}
"""Metric names the documents give that the service does not export, each with the file that
defines it: the request rate per pod is prometheus-adapter's custom metric, made from
``tablestream_http_requests_total``."""


@dataclass(frozen=True)
class Line:
    doc: str
    number: int
    text: str
    in_code: bool
    block: int  # which fenced code block the line is in (0: prose)

    def where(self) -> str:
        return f"{self.doc}:{self.number}: {self.text.strip()}"


def lines() -> Iterator[Line]:
    """Every line of the documents, with whether it is inside a fenced code block."""
    blocks = 0
    for doc in DOCS:
        in_code = False
        for number, text in enumerate((ROOT / doc).read_text().splitlines(), start=1):
            if text.lstrip().startswith("```"):
                in_code = not in_code
                blocks += in_code
                continue
            yield Line(doc, number, text, in_code, blocks if in_code else 0)


def spans(line: Line) -> list[str]:
    """The backticked spans of a line of prose (or of a table)."""
    return [] if line.in_code else re.findall(r"`([^`\n]+)`", line.text)


def failures(problems: list[str]) -> None:
    assert not problems, "\n".join(problems)


# -- settings ------------------------------------------------------------------------------------------

VARIABLE = re.compile(r"\bTABLESTREAM_[A-Z0-9_]*[A-Z0-9]\b")


def settings_defaults() -> dict[str, Any]:
    return {ENV_PREFIX + spec.name.upper(): getattr(Settings, spec.name) for spec in fields(Settings)}


def same_default(stated: str, actual: Any) -> bool:
    """Whether a default written in a document is the code's (``on``/``off`` for a switch, a number
    with or without its unit, ``<data dir>/...`` for a path under the data directory)."""
    stated = stated.strip().strip("`").removesuffix(" s").strip()
    if isinstance(actual, bool):
        return stated.lower() in ({"on", "yes", "true", "1"} if actual else {"off", "no", "false", "0"})
    if isinstance(actual, int | float):
        try:
            return float(stated.replace(",", "").replace("_", "")) == float(actual)
        except ValueError:
            return False
    return stated == str(actual)


def stated_defaults() -> Iterator[tuple[Line, str, str]]:
    """(line, variable, default) for each default the documents give: a table's ``default`` column,
    a table's row of a variable that says "`v` by default", and prose that says "`TABLESTREAM_X`,
    default `v`" or "(`TABLESTREAM_X`, 10 s"."""
    for doc in DOCS:
        column = None
        for line in (x for x in lines() if x.doc == doc):
            cells = [cell.strip() for cell in line.text.strip().strip("|").split("|")]
            if line.text.lstrip().startswith("|") and not line.in_code:
                if "default" in cells:
                    column = cells.index("default")
                    continue
                match = VARIABLE.fullmatch(cells[0].strip("`"))
                if column is not None and match and len(cells) > column:
                    yield line, match.group(), cells[column]
                elif match and (said := re.search(r"(`[^`]+`|[\w.]+) by default", line.text)):
                    yield line, match.group(), said.group(1).strip("`")
                continue
            column = None
            for found in re.finditer(
                r"`(TABLESTREAM_[A-Z0-9_]+)`,? (?:default `([^`]+)`|(\d[\d,.]*) s\b)", line.text
            ):
                yield line, found.group(1), found.group(2) or found.group(3)


def test_every_tablestream_variable_the_documents_name_is_a_setting() -> None:
    known = settings_defaults().keys() | OUTSIDE_SETTINGS.keys()
    problems = [
        f"{line.where()}\n  {name} is no field of Settings (services/operating/config.py)"
        for line in lines()
        for name in VARIABLE.findall(line.text)
        if name not in known
    ]
    failures(problems)


def test_every_default_the_documents_state_for_a_variable_is_the_codes() -> None:
    defaults = settings_defaults() | OUTSIDE_SETTINGS
    stated = list(stated_defaults())
    assert stated, "no stated default found: the extraction no longer reads the documents"
    problems = []
    for line, name, default in stated:
        actual = defaults.get(name)
        if name == "TABLESTREAM_ARCHIVE_DIR":
            ok = default == "`<data dir>/archive`" and Settings().archive_directory == Settings().data_dir / (
                "archive"
            )
        else:
            ok = name in defaults and same_default(default, actual)
        if not ok:
            problems.append(f"{line.where()}\n  {name}: the document says {default}, the code {actual!r}")
    failures(problems)


# -- commands ------------------------------------------------------------------------------------------


class Parsed(Exception):
    """Raised in place of running a command once its arguments parsed."""


@contextlib.contextmanager
def parse_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every ``ArgumentParser.parse_args`` parses and then stops with ``Parsed``, and so does the
    backup command once it has checked its arguments: a command's own parser judges its arguments,
    and nothing runs."""
    original = argparse.ArgumentParser.parse_args

    def parse(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        original(self, *args, **kwargs)
        raise Parsed

    def parsed(*args: Any, **kwargs: Any) -> Any:
        raise Parsed

    with monkeypatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_args", parse)
        # the backup command checks its arguments after parsing them (a path, a Redis to use), then
        # connects: it stops there
        patch.setattr(backup, "_run", parsed)
        patch.setattr(backup, "_on_data_dir", parsed)
        yield


def entry_point(argv: Sequence[str]) -> Callable[[], object]:
    """What ``tablestream`` hands ``argv`` to (``services/cli/__init__.py``), ready to be called."""
    if argv[0] in BACKUP_COMMANDS:
        return lambda: backup.main(list(argv))  # what the exec'd backup process parses
    if argv[0] == "verify":
        return lambda: verify.main(list(argv[1:]))
    if argv[0] == "witness":
        return lambda: witness.main(list(argv[1:]))
    return lambda: cli_main(list(argv))


def invocations(line: Line) -> list[list[str]]:
    """Each ``tablestream ...`` command of a line: up to a comment, a pipe or another command, and
    not kubectl's namespace (``-n tablestream``) nor a command's own output (``tablestream verb:``)."""
    found = []
    text = re.split(r"\s#\s|\s#$", line.text)[0]
    for part in re.split(r"&&|\|\||[|;]|\$\(", text):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        for at, word in enumerate(words):
            if word != "tablestream" or at + 1 >= len(words):
                continue
            if at and words[at - 1] in ("-n", "--namespace"):
                continue
            if words[at + 1].endswith(":") or not re.fullmatch(r"[a-z][a-z-]*", words[at + 1]):
                continue
            found.append(words[at + 1 :])
            break
    return found


def parse_error(argv: Sequence[str], monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Why ``tablestream argv`` does not parse, or ``None`` when it does."""
    stderr = io.StringIO()
    with (
        parse_only(monkeypatch),
        contextlib.redirect_stderr(stderr),
        contextlib.redirect_stdout(io.StringIO()),
    ):
        try:
            entry_point(argv)()
        except Parsed:
            return None
        except SystemExit:
            return stderr.getvalue().strip().splitlines()[-1] if stderr.getvalue().strip() else "exit"
    return "the command ran instead of parsing"


REDIS_URL = "TABLESTREAM_REDIS_URL"
RESTORE_POD = "deploy/k8s/restore-pod.yaml"


def given_redis(line: Line, commented: set[int]) -> bool:
    """Whether the document gives a command of this line the service's Redis: its code block says in a
    comment that the commands take ``TABLESTREAM_REDIS_URL``, or it runs in the restore pod, whose
    manifest sets it."""
    if line.block in commented:
        return True
    return "exec tablestream-restore" in line.text and REDIS_URL in (ROOT / RESTORE_POD).read_text()


def test_every_tablestream_command_of_a_code_block_parses_with_its_own_parser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(REDIS_URL, raising=False)
    commented = {
        line.block for line in lines() if line.in_code and "#" in line.text and REDIS_URL in line.text
    }
    problems, checked = [], 0
    for line in lines():
        if not line.in_code:
            continue
        for argv in invocations(line):
            checked += 1
            with monkeypatch.context() as patch:
                if given_redis(line, commented):
                    patch.setenv(REDIS_URL, "redis://127.0.0.1:6379/0")
                error = parse_error(argv, monkeypatch)
            if error is not None:
                problems.append(f"{line.where()}\n  tablestream {shlex.join(argv)}: {error}")
    assert checked >= 10, f"only {checked} commands found in the code blocks"
    failures(problems)


def actions_of(command: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, argparse.Action] | None:
    """Every option string ``tablestream command`` accepts with its action, or ``None`` for no such
    command."""
    seen: list[argparse.ArgumentParser] = []

    def keep(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        seen.append(self)
        raise Parsed

    with monkeypatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_args", keep)
        patch.setattr(argparse.ArgumentParser, "parse_intermixed_args", keep)
        with contextlib.suppress(Parsed):
            entry_point([command, "--help"])()
    assert seen, f"tablestream {command} parsed nothing"
    parser = seen[0]
    if command not in (*BACKUP_COMMANDS, "verify", "witness"):
        chosen = [
            action.choices[command]
            for action in parser._actions
            if isinstance(action, argparse._SubParsersAction) and command in action.choices
        ]
        if not chosen:
            return None
        parser = chosen[0]
    return {option: action for action in parser._actions for option in action.option_strings}


def options_of(command: str, monkeypatch: pytest.MonkeyPatch) -> set[str] | None:
    """Every option string ``tablestream command`` accepts, or ``None`` for no such command."""
    actions = actions_of(command, monkeypatch)
    return None if actions is None else set(actions)


def test_every_flag_the_prose_gives_a_tablestream_command_is_one_it_accepts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    problems = []
    for line in lines():
        for span in spans(line):
            words = span.split()
            if len(words) < 2 or words[0] != "tablestream":
                continue
            accepted = options_of(words[1], monkeypatch)
            if accepted is None:
                problems.append(f"{line.where()}\n  tablestream {words[1]}: no such command")
                continue
            for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", span):
                if flag not in accepted:
                    problems.append(f"{line.where()}\n  tablestream {words[1]} does not accept {flag}")
    failures(problems)


def every_option(monkeypatch: pytest.MonkeyPatch) -> dict[str, argparse.Action]:
    """Every option of every ``tablestream`` command, with its action (its choices)."""
    commands = ("serve", "worker", "demo", "bench", "arena", "operator", "keys", "verify", "witness")
    found: dict[str, argparse.Action] = {}
    for command in (*commands, *BACKUP_COMMANDS):
        for option, action in (actions_of(command, monkeypatch) or {}).items():
            found.setdefault(option, action)
    return found


def test_every_flag_the_prose_names_alone_is_an_option_of_a_tablestream_command_with_its_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    options = every_option(monkeypatch)
    problems, checked = [], 0
    for line in lines():
        for span in spans(line):
            if not re.fullmatch(r"--[a-z][a-z0-9-]*(?: \S+)?", span):
                continue
            flag, _, value = span.partition(" ")
            checked += 1
            action = options.get(flag)
            if action is None:
                problems.append(f"{line.where()}\n  {flag} is an option of no tablestream command")
            elif action.choices and value and not value.isupper():  # a value, not a placeholder
                wrong = [choice for choice in value.split("|") if choice not in action.choices]
                if wrong:
                    problems.append(f"{line.where()}\n  {flag} takes {sorted(action.choices)}, not {wrong}")
    assert checked >= 10, f"only {checked} flags found"
    failures(problems)


# -- metrics -------------------------------------------------------------------------------------------

METRIC = re.compile(r"\btablestream_[a-z0-9_]*[a-z0-9]\b")


@dataclass(frozen=True)
class Family:
    kind: str
    labels: dict[str, set[str]]  # every label's values in the scrape (every bounded series is at 0)


@pytest.fixture
def scrape() -> Iterator[dict[str, Family]]:
    """A real ``/metrics`` scrape of the app on fakeredis, after a table was created (as
    ``tests/api/test_metrics.py`` scrapes it): each sample name (``_total``, ``_bucket``, ...) and
    family name with its type and its labels' values."""
    metrics.prepare_directory(owner=False)
    server = fakeredis.FakeServer()
    app = create_app(
        Settings(admin_token=ADMIN_TOKEN),
        lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        created = client.post("/games", json={"game": "skull", "players": 3})
        assert created.status_code in (200, 201), created.text
        answer = client.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert answer.status_code == 200, answer.text
    found: dict[str, Family] = {}
    for family in text_string_to_metric_families(answer.text):
        labels: dict[str, set[str]] = {}
        for sample in family.samples:
            for label, value in sample.labels.items():
                if label != "le":
                    labels.setdefault(label, set()).add(value)
        for name in {family.name, *(sample.name for sample in family.samples)}:
            found.setdefault(name, Family(family.type, labels))
    yield found
    metrics.prepare_directory(owner=False)


@pytest.fixture
def exported(scrape: dict[str, Family]) -> set[str]:
    return set(scrape)


def test_every_tablestream_metric_the_documents_name_is_in_a_scrape_of_the_service(
    exported: set[str],
) -> None:
    assert "tablestream_commands_total" in exported
    problems = []
    for line in lines():
        for name in METRIC.findall(line.text):
            if name in exported:
                continue
            if name in NOT_EXPORTED and name in (ROOT / NOT_EXPORTED[name]).read_text():
                continue
            problems.append(f"{line.where()}\n  {name} is not in /metrics")
    failures(problems)


def outside_and_inside_parentheses(cell: str) -> tuple[list[str], list[list[str]]]:
    """The backticked words of a cell outside parentheses (the labels), and for each of them the
    backticked words in the parentheses that follow it (its values), with ``...`` added when the
    list is open: it says ``...`` or ``..``, or gives an example ("the template, `/games`")."""
    names: list[str] = []
    values: list[list[str]] = []
    depth, start = 0, 0
    for at, char in enumerate(cell + " "):
        if char == "(" and depth == 0:
            names += re.findall(r"`([^`]+)`", cell[start:at])
            values += [[] for _ in range(len(names) - len(values))]
            start = at
            depth = 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0 and values:
                inside = cell[start : at + 1]
                values[-1] = re.findall(r"`([^`]+)`", inside) + (
                    ["..."] if ".." in inside or inside.startswith("(the ") else []
                )
                start = at + 1
    names += re.findall(r"`([^`]+)`", cell[start:])
    values += [[] for _ in range(len(names) - len(values))]
    return names, values


def test_the_metrics_table_gives_each_metric_its_type_labels_and_label_values(
    scrape: dict[str, Family],
) -> None:
    problems, rows = [], 0
    for line in lines():
        if line.doc != "docs/operations.md" or not line.text.startswith("| `tablestream_"):
            continue
        cells = [cell.strip() for cell in line.text.strip().strip("|").split("|")]
        names = re.findall(r"`(tablestream_\w+)`", cells[0])
        labels, values = outside_and_inside_parentheses(cells[2])
        for name in names:
            rows += 1
            family = scrape.get(name)
            if family is None:
                continue  # named in the test of the metrics' names
            if not cells[1].startswith(family.kind):
                problems.append(f"{line.where()}\n  {name} is a {family.kind}, not a {cells[1]}")
            if set(labels) != set(family.labels):
                problems.append(
                    f"{line.where()}\n  {name}'s labels are {sorted(family.labels)}, not {labels}"
                )
                continue
            for label, listed in zip(labels, values, strict=True):
                stated = {value for value in listed if value != "..."}
                actual = family.labels[label]
                if not stated <= actual or ("..." not in listed and stated and stated != actual):
                    problems.append(
                        f"{line.where()}\n  {name}'s {label} takes {sorted(actual)}, not {listed}"
                    )
    assert rows >= 25, f"only {rows} metrics found in the table"
    failures(problems)


# -- alerts --------------------------------------------------------------------------------------------

ALERT = re.compile(r"\bTablestream[A-Z][A-Za-z0-9]+\b")


def alert_names() -> set[str]:
    document = yaml.safe_load((ROOT / "deploy/prometheus/alerts.yaml").read_text())
    return {rule["alert"] for group in document["groups"] for rule in group["rules"] if "alert" in rule}


def test_every_alert_the_documents_name_is_a_rule_of_the_alerts_file() -> None:
    rules = alert_names()
    problems = [
        f"{line.where()}\n  {name} is no alert of deploy/prometheus/alerts.yaml"
        for line in lines()
        for name in ALERT.findall(line.text)
        if name not in rules
    ]
    failures(problems)


def test_every_alert_of_the_alerts_file_has_its_runbook_section_in_docs_alerts_md() -> None:
    sections = set(re.findall(r"^## (\S+)\s*$", (ROOT / "docs/alerts.md").read_text(), re.MULTILINE))
    missing = sorted(alert_names() - sections)
    assert not missing, f"docs/alerts.md has no '## <alert>' section for {', '.join(missing)}"


def test_every_alert_links_its_runbook_url_to_its_own_section_of_docs_alerts_md() -> None:
    document = yaml.safe_load((ROOT / "deploy/prometheus/alerts.yaml").read_text())
    sections = set(re.findall(r"^## (\S+)\s*$", (ROOT / "docs/alerts.md").read_text(), re.MULTILINE))
    anchors = {section.lower(): section for section in sections}  # GitHub's anchor of a heading
    problems = []
    for group in document["groups"]:
        for rule in group["rules"]:
            url = rule.get("annotations", {}).get("runbook_url", "")
            page, _, anchor = url.partition("#")
            if page != "docs/alerts.md" or anchors.get(anchor) != rule["alert"]:
                problems.append(f"deploy/prometheus/alerts.yaml: {rule['alert']}'s runbook_url is {url!r}")
    failures(problems)


def test_every_alert_of_the_alerts_file_has_a_row_in_the_operations_table() -> None:
    rows = {
        match.group(1)
        for line in lines()
        if line.doc == "docs/operations.md"
        for match in [re.match(r"\| `(Tablestream\w+)` \|", line.text)]
        if match
    }
    missing = sorted(alert_names() - rows)
    assert not missing, f"docs/operations.md's table of alerts has no row for {', '.join(missing)}"


# -- paths ---------------------------------------------------------------------------------------------

PATH = re.compile(r"[\w.-]+(?:/[\w.-]+)*/?(?:::[\w\[\]-]+)?")
FILE_SUFFIXES = (".py", ".yaml", ".yml", ".json", ".md", ".conf", ".toml", ".lua", ".js", ".sh")
PACKAGES = ("services.", "workers.", "domain.", "projections.", "bots.")
SKIPPED = {".git", ".venv", "node_modules", "__pycache__"}


def repository_files() -> set[str]:
    return {
        path.name
        for path in ROOT.rglob("*")
        if path.is_file() and not SKIPPED & set(path.relative_to(ROOT).parts)
    }


def repository_path(span: str, doc: str = "") -> str | None:
    """The span as a repository path, or ``None`` when it is not one: its first part must be an
    entry of the repository's top or of the document's own folder (``k8s/`` in
    ``deploy/README.md``), and it must have a folder or a file name's suffix."""
    if not PATH.fullmatch(span) or span.startswith("/"):
        return None
    first = span.split("/")[0].split("::")[0]
    if "/" not in span and "." not in first:
        return None
    for base in (ROOT, (ROOT / doc).parent):
        if (base / first).exists() and (first != "tablestream" or "/" in span):
            return str((base / span.split("::")[0]).relative_to(ROOT)) + span[len(span.split("::")[0]) :]
    return None


def test_every_repository_path_in_backticks_exists() -> None:
    problems, checked = [], 0
    for line in lines():
        for span in spans(line):
            if (path := repository_path(span, line.doc)) is None:
                continue
            checked += 1
            file, _, test = path.partition("::")
            if not (ROOT / file).exists():
                problems.append(f"{line.where()}\n  {file} does not exist")
            elif test and not re.search(
                rf"^(?:async )?def {re.escape(test.split('[')[0])}\(", (ROOT / file).read_text(), re.MULTILINE
            ):
                problems.append(f"{line.where()}\n  {file} has no test {test}")
    assert checked >= 50, f"only {checked} paths found"
    failures(problems)


def test_every_file_named_without_its_folder_is_a_file_of_the_repository() -> None:
    names = repository_files()
    problems = [
        f"{line.where()}\n  no file of the repository is named {span}"
        for line in lines()
        for span in spans(line)
        if re.fullmatch(r"[\w.-]+", span)
        and span.endswith(FILE_SUFFIXES)
        and not span.startswith(PACKAGES)
        and span not in names
    ]
    failures(problems)


def test_every_python_name_of_the_code_the_documents_give_exists() -> None:
    problems, checked = [], 0
    for line in lines():
        for span in spans(line):
            if not re.fullmatch(r"[a-z_]+(?:\.[A-Za-z_]\w*)+", span) or not span.startswith(PACKAGES):
                continue
            checked += 1
            parts = span.split(".")
            for cut in range(len(parts), 0, -1):
                try:
                    found: Any = importlib.import_module(".".join(parts[:cut]))
                except ImportError:
                    continue
                try:
                    for attribute in parts[cut:]:
                        found = getattr(found, attribute)
                except AttributeError:
                    problems.append(f"{line.where()}\n  {span}: {'.'.join(parts[:cut])} has no {attribute}")
                break
            else:
                problems.append(f"{line.where()}\n  {span}: no such module")
    assert checked >= 2, f"only {checked} names found"
    failures(problems)


# -- routes --------------------------------------------------------------------------------------------

ROUTE = re.compile(r"\b(GET|POST|PUT|PATCH|DELETE|HEAD) (/[^\s`?)]*)")


def template(path: str) -> str:
    """A path with each parameter as ``{}``, so ``{id}`` and ``{game_id}`` compare equal."""
    return re.sub(r"\{[^}]*\}|<[^>]*>", "{}", path.rstrip("/") or "/")


def router() -> dict[str, set[str]]:
    server = fakeredis.FakeServer()
    app = create_app(
        Settings(admin_token=ADMIN_TOKEN),
        lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
    )
    routes: dict[str, set[str]] = {}
    for route in app.routes:
        if isinstance(route, Route):
            routes.setdefault(template(route.path), set()).update(route.methods or ())
    return routes


def test_every_http_route_the_documents_name_is_in_the_apps_router() -> None:
    routes = router()
    firsts = {path.split("/")[1] for path in routes if path != "/"}
    problems, checked = [], 0
    for line in lines():
        named = [(m.group(1), m.group(2)) for m in ROUTE.finditer(line.text)]
        named += [
            ("", span)  # a bare route, any method
            for span in spans(line)
            if re.fullmatch(r"/[\w.{}<>/-]+", span)
            and span.split("/")[1] in firsts
            and " " + span not in line.text
        ]
        for method, path in named:
            if "{page}" in path:
                continue
            checked += 1
            if path.endswith("/..."):  # the routes under a prefix
                prefix = template(path.removesuffix("/...")) + "/"
                methods = set().union(*(m for p, m in routes.items() if p.startswith(prefix))) or None
            else:
                methods = routes.get(template(path))
            if methods is None:
                problems.append(f"{line.where()}\n  {path} is no route of the app")
            elif method and method not in methods:
                problems.append(f"{line.where()}\n  {path} does not answer {method}")
    assert checked >= 10, f"only {checked} routes found"
    failures(problems)
