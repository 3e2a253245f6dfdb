"""docs/restore.md, step by step: the single-machine runbook performed with real processes (`serve`
on a data directory, games played over HTTP, `export-all`, `serve` stopped, the directory moved
aside, `import-all --check` and `import-all` on the new one, `serve` again, the games back); and for
Compose and Kubernetes, what can be checked without a Docker engine or a cluster: every
`tablestream` command the runbook names exists with the flags it gives, and every file, service,
deployment, pod and label it names is in the manifests."""

from __future__ import annotations

import contextlib
import io
import itertools
import re
import shlex
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from services.cli import main as tablestream_main
from services.cli.backup import COMMANDS as BACKUP_COMMANDS
from tests.browser.http_games import create, join, played_by_server_bots
from tests.support.serving import DEADLINE, ENV, serving, stop, tablestream, tablestream_here
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
RUNBOOK = ROOT / "docs" / "restore.md"


def what_players_see(client: httpx.Client, finished: str, running: str, tokens: list[str]) -> dict[str, Any]:
    """The finished game's export (but its public log proofs, which the log's appender adds in its
    own time) and view, the running one's spectator view and each seat's own view, and the lobby;
    every view without its clock (the server's now, and the turn's deadline, which starts again
    from the restore)."""
    client.cookies.clear()  # a join left the last seat's cookie: the spectator's view is read without it
    export = client.get(f"/games/{finished}/export").json()
    export.pop("log", None)
    seats = [
        client.get(f"/games/{running}/view", headers={"Authorization": f"Bearer {t}"}).json() for t in tokens
    ]
    lobby = client.get("/games").json()["games"]
    views = [
        client.get(f"/games/{finished}/view").json(),
        client.get(f"/games/{running}/view").json(),
        *seats,
    ]
    for view in views:
        view.pop("clock")
    return {
        "export": export,
        "finished": views[0],
        "running": views[1],
        "seats": seats,
        "lobby": sorted(g["game_id"] for g in lobby),
    }


def turn_deadline(client: httpx.Client, game_id: str) -> Any:
    return client.get(f"/games/{game_id}/view").json()["clock"]["deadline_ms"]


def differing(a: Any, b: Any, at: str = "") -> list[str]:
    """The paths where two JSON values differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            p for key in sorted(a.keys() | b.keys()) for p in differing(a.get(key), b.get(key), f"{at}.{key}")
        ]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for n, (x, y) in enumerate(zip(a, b, strict=True)) for p in differing(x, y, f"{at}[{n}]")]
    return [] if a == b else [f"{at}: {a!r} != {b!r}"]


@pytest.mark.redis
def test_the_serve_runbook_restores_a_lost_data_directory_with_every_game_back(tmp_path: Path) -> None:
    data, backups = tmp_path / "data", tmp_path / "backups"
    backups.mkdir()
    with serving(data) as (client, url, process):
        finished = played_by_server_bots(client, "six-nimmt", 2, {"rounds": 1})
        running = create(client, "skull", 3, {})
        tokens = [join(client, running, name) for name in ("Ada", "Bo", "Cy")]
        wait_until(
            lambda: client.get(f"/games/{running}/view").json()["status"] == "playing",
            DEADLINE,
            "the running table's projection",
        )
        wait_until(lambda: turn_deadline(client, running), DEADLINE, "the running table's turn timer")
        before = what_players_see(client, finished, running, tokens)
        assert before["finished"]["status"] == "finished" and any(s["legal"] for s in before["seats"])
        # the live backup, with the URL serve printed, by the command's own process (the later
        # commands run the same code in this one: tests/support/serving.py)
        exported = tablestream("export-all", f"{backups}/", "--redis-url", url)
        assert exported.returncode == 0, exported.stderr
        fingerprint = re.search(r"^fingerprint ([0-9a-f]{64})", exported.stdout, re.MULTILINE)
        assert fingerprint, exported.stdout
        stop(process)  # step 1

    data.rename(tmp_path / "data.broken")  # step 2
    checked = tablestream_here("import-all", "--check", f"{backups}/", "--data-dir", str(data))  # step 3
    assert checked.returncode == 0, checked.stderr
    assert "2 games and 0 disputes verified" in checked.stdout and "nothing was written" in checked.stdout
    restored = tablestream_here(  # step 4
        "import-all", f"{backups}/", "--data-dir", str(data), "--fingerprint", fingerprint.group(1)
    )
    assert restored.returncode == 0, restored.stderr
    assert "2 games (2 new)" in restored.stdout
    assert f"fingerprint {fingerprint.group(1)}" in restored.stdout

    with serving(data) as (client, _, process):  # step 5
        after = what_players_see(client, finished, running, tokens)
        assert after == before, differing(before, after)
        # its workers arm the running table's turn timer again
        wait_until(lambda: turn_deadline(client, running), DEADLINE, "the restored table's turn timer")
        # the running table goes on: a seat whose turn it is plays with its own token
        seat = next(n for n, view in enumerate(after["seats"]) if view["legal"])
        move = {"command_id": "after-the-restore", "command": after["seats"][seat]["legal"][0]}
        played = client.post(
            f"/games/{running}/commands", json=move, headers={"Authorization": f"Bearer {tokens[seat]}"}
        )
        assert played.status_code == 200, played.text
        # while serve holds the directory, the commands refuse it rather than start a second Redis
        refused = tablestream_here("export-all", f"{backups}/", "--data-dir", str(data))
        assert refused.returncode == 2 and "is in use by another tablestream process" in refused.stderr
        stop(process)
    # the backup of a stopped serve, on its data directory
    offline = tablestream_here("export-all", f"{backups}/", "--data-dir", str(data))
    assert offline.returncode == 0, offline.stderr
    assert "exported 2 games (1 finished)" in offline.stdout


# -- docs/operations.md, "The public log after a restore" -------------------------------------------

OPERATOR_TOKEN = "runbook-operator-token"


def proven(client: httpx.Client, game_id: str) -> bool:
    """The game's final head is under the log's latest checkpoint."""
    head = client.get(f"/games/{game_id}/export").json()["head"]["version"]
    return head in {leaf["version"] for leaf in client.get(f"/games/{game_id}/log").json()["leaves"]}


def refusals(client: httpx.Client) -> float:
    """``tablestream_log_checkpoints_refused_total``, as the operator's scrape of /metrics sums it."""
    text = client.get("/metrics", headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"}).text
    found = re.search(r"^tablestream_log_checkpoints_refused_total (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def checkpoint_size(client: httpx.Client) -> int:
    return int(client.get("/log/checkpoint").text.split("\n")[1])


def test_a_log_restored_from_an_older_backup_signs_nothing_until_the_newer_backup_restores_it(
    tmp_path: Path,
) -> None:
    """The published checkpoint is kept outside the store (``TABLESTREAM_LOG_PUBLISHED_DIR``). Restored
    from a backup older than it, the service plays on and signs no checkpoint (the refusals are
    counted); the newer backup imported, the log extends it again and signing resumes."""
    env = {
        **ENV,
        "TABLESTREAM_LOG_PUBLISHED_DIR": str(tmp_path / "published"),
        "TABLESTREAM_ADMIN_TOKEN": OPERATOR_TOKEN,
        "TABLESTREAM_LOG_APPEND_SECONDS": "0.2",
        "TABLESTREAM_LOG_CHECKPOINT_SECONDS": "0.5",
    }
    older, newer = tmp_path / "older", tmp_path / "newer"
    older.mkdir()
    newer.mkdir()
    with serving(tmp_path / "data", env) as (client, url, process):
        first = played_by_server_bots(client, "six-nimmt", 2, {"rounds": 1})
        wait_until(lambda: proven(client, first), DEADLINE, "the first game in a checkpoint")
        assert tablestream("export-all", f"{older}/", "--redis-url", url, env=env).returncode == 0
        second = played_by_server_bots(client, "six-nimmt", 2, {"rounds": 1})
        wait_until(lambda: proven(client, second), DEADLINE, "the second game in a checkpoint")
        published = checkpoint_size(client)
        assert tablestream("export-all", f"{newer}/", "--redis-url", url, env=env).returncode == 0
        stop(process)

    restored = tmp_path / "restored"  # the store as the older backup holds it
    assert tablestream("import-all", f"{older}/", "--data-dir", str(restored), env=env).returncode == 0
    with serving(restored, env) as (client, _, process):
        wait_until(lambda: refusals(client) > 0, DEADLINE, "the publisher's refusal, counted")
        assert checkpoint_size(client) < published  # nothing newer was signed
        assert client.get(f"/games/{first}/view").json()["status"] == "finished"  # the service plays on
        stop(process)

    # the way back: the newer backup adds the leaves the restored log lacks
    imported = tablestream("import-all", f"{newer}/", "--data-dir", str(restored), env=env)
    assert imported.returncode == 0, imported.stderr
    with serving(restored, env) as (client, _, process):
        wait_until(
            lambda: checkpoint_size(client) >= published, DEADLINE, "a checkpoint extending the kept one"
        )
        assert proven(client, second)
        stop(process)


# -- Compose and Kubernetes: what the runbook names exists -------------------------------------------


def runbook_text() -> str:
    return RUNBOOK.read_text(encoding="utf-8").replace("\\\n", " ")  # continued lines joined


@cache
def help_of(command: str) -> str:
    """``tablestream COMMAND --help``, in this process (the backup commands as the module they exec)."""
    if command in BACKUP_COMMANDS:
        shown = tablestream_here(command, "--help")
        assert shown.returncode == 0, shown.stderr
        return shown.stdout
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exited:
        tablestream_main([command, "--help"])
    assert exited.value.code == 0
    return out.getvalue()


def named_commands() -> list[list[str]]:
    """Every ``tablestream`` command line of the runbook, as words."""
    lines = re.findall(
        r"\btablestream ((?:export-all|import-all|rebuild-all|serve|worker)\b[^`\n]*)", runbook_text()
    )
    return [shlex.split(line.replace("<", "").replace(">", "")) for line in lines]


@pytest.mark.thorough
def test_every_tablestream_command_the_runbook_names_exists_with_the_flags_it_gives() -> None:
    commands = named_commands()
    assert {words[0] for words in commands} == {"export-all", "import-all", "serve"}
    for words in commands:
        flags = {word.split("=")[0] for word in words[1:] if word.startswith("--")}
        missing = {
            flag for flag in flags if not re.search(rf"(^|[\s,\[]){re.escape(flag)}\b", help_of(words[0]))
        }
        assert not missing, (words, missing)


def test_every_file_the_runbook_names_exists() -> None:
    found = re.findall(r"\b((?:deploy|docs|tests|workers|services)/[\w./-]*[\w/])", runbook_text())
    named = {path for path in found if not path.startswith("deploy/tablestream-")}  # kubectl's deploy/NAME
    assert {"deploy/compose.yaml", "deploy/k8s/restore-pod.yaml", "workers/backup/frame.py"} <= named
    assert [path for path in sorted(named) if not (ROOT / path).exists()] == []


def compose_services() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())


def test_the_compose_runbook_names_the_files_services_volume_and_store_url_of_compose_yaml() -> None:
    compose = compose_services()
    text = runbook_text()
    named = set()
    for command in re.findall(r"docker compose -f deploy/compose\.yaml ([^`\n]*)", text):
        words = shlex.split(command)
        if words[0] in ("stop", "start"):
            named |= set(words[1:])
        elif words[0] == "exec":
            named.add(words[1])
        elif words[0] == "run":
            named.add(
                next(w for before, w in itertools.pairwise(words) if not w.startswith("-") and before != "-v")
            )
    assert named == {"api", "worker", "redis"} and named <= set(compose["services"])
    assert "redis-data" in compose["volumes"] and "(`redis-data`)" in text
    worker = compose["services"]["worker"]["command"]
    assert worker[worker.index("--redis-url") + 1] == "redis://redis:6379/0"
    assert text.count("--redis-url redis://redis:6379/0") == 3
    cluster = yaml.safe_load((ROOT / "deploy" / "compose.cluster.yaml").read_text())
    assert {"--redis-url", "--redis-cluster", "--queue-url"} <= set(cluster["services"]["worker"]["command"])


def manifests() -> list[dict[str, Any]]:
    return [
        doc
        for path in sorted((ROOT / "deploy" / "k8s").glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if isinstance(doc, dict) and "kind" in doc
    ]


def one(kind: str, name: str) -> dict[str, Any]:
    (found,) = [d for d in manifests() if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def test_the_kubernetes_runbook_names_the_namespace_workloads_pod_labels_and_settings_of_the_manifests() -> (
    None
):
    text = runbook_text()
    kubectl = re.findall(r"kubectl ([^`\n]*)", text)
    assert kubectl and all(line.startswith("-n tablestream ") for line in kubectl)
    one("Namespace", "tablestream")
    for name in set(re.findall(r"deploy/(tablestream-[a-z]+)", text)):
        deployment = one("Deployment", name)
        component = deployment["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
        assert f"-l app.kubernetes.io/component={component}" in text
        assert f"deploy/{name} --replicas={deployment['spec']['replicas']}" in text or (
            f"{name} --replicas=0" in text and f"deploy/{name} --replicas=" in text
        )
    assert one("ScaledObject", "tablestream-worker")["spec"]["scaleTargetRef"]["name"] == "tablestream-worker"
    assert "scaledobject tablestream-worker" in text
    pod = one("Pod", "tablestream-restore")
    assert "pod/tablestream-restore" in text and "exec tablestream-restore --" in text
    (container,) = pod["spec"]["containers"]
    worker = one("Deployment", "tablestream-worker")["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == worker["image"] and container["envFrom"] == worker["envFrom"]
    urls = ("TABLESTREAM_REDIS_URL", "TABLESTREAM_QUEUE_URL")
    assert [e for e in container["env"] if e["name"] in urls] == [
        e for e in worker["env"] if e["name"] in urls
    ]
    settings = one("ConfigMap", "tablestream-settings")["data"]
    assert settings["TABLESTREAM_REDIS_CLUSTER"] == "yes"  # the pod's --redis-cluster, from its environment
    assert {m["mountPath"] for m in container["volumeMounts"]} >= {"/backup"}
    assert "cp tablestream-restore:/backup/" in text and "tablestream-restore:/backup/" in text


def test_the_operations_docs_link_to_the_runbook() -> None:
    operations = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    assert "(restore.md)" in operations
