"""deploy/ holds together without a cluster or a Docker engine: the Kubernetes manifests validate
against the Kubernetes schema (kubernetes-validate ships the schemas, so this runs offline), the
compose files name only services, volumes and files that exist, every ``TABLESTREAM_*`` variable is
a real setting, and the image runs as a non-root user with a health check."""

from __future__ import annotations

import copy
import re
import shlex
from collections.abc import Iterator
from dataclasses import fields
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from services.api.app import create_app
from services.operating.config import ENV_PREFIX, Settings
from services.telemetry.structured_logging import LEVEL_VARIABLE

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
COMPOSE_FILES = ("compose.yaml", "compose.cluster.yaml")
KUBERNETES_VERSION = "1.33.0"  # one of the schema sets kubernetes-validate ships

# kustomize's and Helm's inputs, and KEDA's ScaledObject (a CRD: tests/deploy/test_observability.py)
NOT_MANIFESTS = {
    "kustomization.yaml",
    "redis-cluster-values.yaml",
    "prometheus-adapter-values.yaml",
    "worker-scaledobject.yaml",
}
APPLIED_BY_HAND = {
    "secret.example.yaml",
    "api-hpa.yaml",
    "restore-pod.yaml",
}  # the secret, HPA optional, restores
IMAGE = "tablestream"

SETTING_NAME = re.compile(r"\bTABLESTREAM_[A-Z0-9_]*[A-Z0-9]")
REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")  # Kubernetes' $(VAR) expansion


# -- reading the files -------------------------------------------------------------------------------


@cache
def manifests() -> tuple[tuple[str, dict[str, Any]], ...]:
    """Every Kubernetes object in deploy/k8s, with the file it is in."""
    found = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name in NOT_MANIFESTS:
            continue
        found += [(path.name, doc) for doc in yaml.safe_load_all(path.read_text()) if doc]
    return tuple(found)


def objects(kind: str) -> list[dict[str, Any]]:
    return [doc for _, doc in manifests() if doc["kind"] == kind]


def one(kind: str, name: str) -> dict[str, Any]:
    (found,) = [doc for doc in objects(kind) if doc["metadata"]["name"] == name]
    return found


def workloads() -> list[dict[str, Any]]:
    return objects("Deployment") + objects("StatefulSet")


def containers() -> Iterator[tuple[str, dict[str, Any]]]:
    for workload in workloads():
        for container in workload["spec"]["template"]["spec"]["containers"]:
            yield workload["metadata"]["name"], container


@cache
def compose(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / name).read_text())
    return loaded


def strings(value: Any) -> Iterator[str]:
    """Every string inside a parsed YAML value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def command_words(service: dict[str, Any]) -> list[str]:
    command = service.get("command", [])
    return shlex.split(command) if isinstance(command, str) else list(command)


def flags(words: list[str]) -> dict[str, str]:
    """The ``--name value`` and ``--name=value`` options of a command line (valkey-server takes its
    config this way too)."""
    found = {}
    for word, following in zip(words, [*words[1:], ""], strict=True):
        if word.startswith("--"):
            name, equals, value = word[2:].partition("=")
            found[name] = value if equals else following
    return found


def config_file(path: Path) -> dict[str, str]:
    settings = {}
    for line in path.read_text().splitlines():
        words = line.split(maxsplit=1)
        if words and not words[0].startswith("#"):
            settings[words[0]] = words[1] if len(words) > 1 else ""
    return settings


def server_config(service: dict[str, Any]) -> dict[str, str]:
    """A valkey-server's settings in a compose service: its config file (a bind mount beside the
    compose file), then its command-line flags, which override the file."""
    words = command_words(service)
    settings: dict[str, str] = {}
    if len(words) > 1 and words[1].endswith(".conf"):
        mounts = dict(reversed(v.split(":")[:2]) for v in service.get("volumes", []) if v.startswith("."))
        settings.update(config_file(DEPLOY / mounts[words[1]]))
    settings.update(flags(words))
    return settings


def valkey_servers(name: str) -> dict[str, dict[str, Any]]:
    return {
        service_name: service
        for service_name, service in compose(name)["services"].items()
        if command_words(service)[:1] == ["valkey-server"]
    }


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of deploy/Dockerfile, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(maxsplit=1)[0].upper(), line.split(maxsplit=1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


def final_stage() -> list[tuple[str, str]]:
    instructions = dockerfile_instructions()
    start = max(i for i, (name, _) in enumerate(instructions) if name == "FROM")
    return instructions[start:]


def dockerignore_rules() -> list[tuple[bool, str]]:
    """(negated, pattern) of .dockerignore, in order."""
    rules = []
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            rules.append((line.startswith("!"), line.lstrip("!").strip("/")))
    return rules


def dockerignored(path: str) -> bool:
    """Whether Docker leaves ``path`` (relative to the context) out: a rule matches the path or one
    of its parent directories, ``**/`` matches any depth, and the last matching rule wins.
    fnmatch's ``*`` also crosses ``/``, so this errs towards "ignored"."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    ignored = False
    for negated, pattern in dockerignore_rules():
        if pattern.startswith("**/"):
            tails = ["/".join(p.split("/")[j:]) for p in prefixes for j in range(p.count("/") + 1)]
            matched = any(fnmatchcase(tail, pattern[3:]) for tail in tails)
        else:
            matched = any(fnmatchcase(prefix, pattern) for prefix in prefixes)
        if matched:
            ignored = not negated
    return ignored


def allowed_settings() -> set[str]:
    return {ENV_PREFIX + spec.name.upper() for spec in fields(Settings)} | {LEVEL_VARIABLE}


# -- Kubernetes --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "document",
    [doc for _, doc in manifests()],
    ids=[f"{file}:{doc['kind']}/{doc['metadata']['name']}" for file, doc in manifests()],
)
def test_every_kubernetes_manifest_is_valid_against_the_kubernetes_schema(document: dict[str, Any]) -> None:
    kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)


def test_the_validator_rejects_a_misspelt_field_and_a_wrong_type() -> None:
    misspelt = copy.deepcopy(one("Deployment", "tablestream-api"))
    container = misspelt["spec"]["template"]["spec"]["containers"][0]
    container["livenesProbe"] = container.pop("livenessProbe")
    wrong_type = copy.deepcopy(one("Deployment", "tablestream-api"))
    wrong_type["spec"]["replicas"] = "three"
    for broken in (misspelt, wrong_type):
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


def test_kustomize_applies_every_manifest_but_the_example_secret_and_the_optional_autoscaler() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    on_disk = {path.name for path in K8S.glob("*.yaml")} - NOT_MANIFESTS - APPLIED_BY_HAND
    assert set(kustomization["resources"]) == on_disk
    assert kustomization["namespace"] == one("Namespace", "tablestream")["metadata"]["name"]
    assert [image["name"] for image in kustomization["images"]] == [IMAGE]


def test_every_pod_runs_as_non_root_read_only_without_privilege_escalation_and_within_limits() -> None:
    assert {w["metadata"]["name"] for w in workloads()} == {
        "tablestream-api",
        "tablestream-worker",
        "tablestream-queue",
    }
    for workload in workloads():
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] != 0
        assert pod["automountServiceAccountToken"] is False
        for container in pod["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False
            assert context["readOnlyRootFilesystem"] is True
            assert context["capabilities"]["drop"] == ["ALL"]
            assert set(container["resources"]["requests"]) == {"cpu", "memory"}
            assert set(container["resources"]["limits"]) == {"cpu", "memory"}


def test_tablestream_pods_run_as_the_images_own_user() -> None:
    (user,) = [args for name, args in final_stage() if name == "USER"]
    for workload in workloads():
        pod = workload["spec"]["template"]["spec"]
        if pod["containers"][0]["image"].split(":")[0] == IMAGE:
            assert f"{pod['securityContext']['runAsUser']}:{pod['securityContext']['runAsGroup']}" == user


def test_the_api_is_ready_on_healthz_and_restarted_only_when_livez_stops_answering() -> None:
    api = one("Deployment", "tablestream-api")
    assert api["spec"]["replicas"] == 3
    (container,) = api["spec"]["template"]["spec"]["containers"]
    routes = {getattr(route, "path", None) for route in create_app(Settings()).routes}
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    liveness = container["livenessProbe"]
    assert liveness["httpGet"]["path"] == "/livez"
    assert {"/healthz", "/livez"} <= routes
    # lenient: a minute of silence, where readiness gives up after ten seconds
    assert liveness["periodSeconds"] * liveness["failureThreshold"] >= 60
    readiness = container["readinessProbe"]
    assert readiness["periodSeconds"] * readiness["failureThreshold"] <= 10


def test_a_disruption_budget_keeps_most_api_replicas_serving() -> None:
    budget = one("PodDisruptionBudget", "tablestream-api")
    api = one("Deployment", "tablestream-api")
    assert budget["spec"]["selector"]["matchLabels"] == api["spec"]["selector"]["matchLabels"]
    assert 1 <= budget["spec"]["minAvailable"] < api["spec"]["replicas"]


def test_services_select_the_pods_of_their_workload() -> None:
    for service in objects("Service"):
        selector = service["spec"]["selector"]
        matching = [
            w for w in workloads() if selector.items() <= w["spec"]["template"]["metadata"]["labels"].items()
        ]
        assert [w["metadata"]["name"] for w in matching] == [service["metadata"]["name"]]
        ports = {
            port["name"]
            for w in matching
            for c in w["spec"]["template"]["spec"]["containers"]
            for port in c["ports"]
        }
        assert {port["targetPort"] for port in service["spec"]["ports"]} <= ports


def test_the_queue_keeps_an_aof_fsynced_on_every_write_on_a_persistent_volume_and_never_evicts() -> None:
    queue = one("StatefulSet", "tablestream-queue")
    (container,) = queue["spec"]["template"]["spec"]["containers"]
    settings = flags(container["args"])
    assert settings["appendonly"] == "yes"
    assert settings["appendfsync"] == "always"
    assert settings["maxmemory-policy"] == "noeviction"
    (claim,) = queue["spec"]["volumeClaimTemplates"]
    (mount,) = container["volumeMounts"]
    assert mount["name"] == claim["metadata"]["name"]
    assert mount["mountPath"] == settings["dir"]


def test_every_variable_a_container_expands_is_defined_before_it_and_every_secret_key_exists() -> None:
    configmaps = {cm["metadata"]["name"]: set(cm["data"]) for cm in objects("ConfigMap")}
    secret = one("Secret", "tablestream")
    checked = 0
    for workload, container in containers():
        defined = set().union(
            *(configmaps[ref["configMapRef"]["name"]] for ref in container.get("envFrom", []))
        )
        for variable in container.get("env", []):
            assert set(REFERENCE.findall(variable.get("value", ""))) <= defined, (workload, variable["name"])
            source = variable.get("valueFrom", {}).get("secretKeyRef")
            if source is not None:
                assert source["name"] == secret["metadata"]["name"]
                assert source["key"] in secret["stringData"]
            defined.add(variable["name"])
        words = [*container.get("command", []), *container.get("args", [])]
        used = {name for word in words for name in REFERENCE.findall(word)}
        assert used <= defined, workload
        checked += len(used)
    assert checked >= 7  # the API's and the worker's URLs and cluster mode, the queue's password


def test_the_chart_values_ask_for_3_primaries_with_a_replica_each_fsync_always_and_our_secret() -> None:
    values = yaml.safe_load((K8S / "redis-cluster-values.yaml").read_text())
    assert values["cluster"]["nodes"] == 6
    assert values["cluster"]["replicas"] == 1
    assert values["persistence"]["enabled"] is True
    assert values["valkey"]["useAOFPersistence"] == "yes"
    extra = dict(line.split(maxsplit=1) for line in values["valkey"]["configmap"].splitlines())
    assert extra["appendfsync"] == "always"
    assert extra["maxmemory-policy"] == "noeviction"
    secret = one("Secret", "tablestream")
    assert values["usePassword"] is True
    assert values["existingSecret"] == secret["metadata"]["name"]
    assert values["existingSecretPasswordKey"] in secret["stringData"]
    # the Service the chart creates is the host the pods connect to
    assert values["fullnameOverride"] == one("ConfigMap", "tablestream-settings")["data"]["STORE_HOST"]


def test_the_readme_installs_the_chart_with_the_values_file() -> None:
    readme = (DEPLOY / "README.md").read_text()
    install = re.search(r"helm install [^\n]*(?:\\\n[^\n]*)*", readme)
    assert install is not None
    assert "valkey-cluster" in install.group(0)
    assert "-f deploy/k8s/redis-cluster-values.yaml" in install.group(0)
    assert "kubectl apply -k deploy/k8s" in readme


# -- compose -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_a_compose_file_names_only_services_volumes_and_files_that_exist(name: str) -> None:
    services = compose(name)["services"]
    volumes = set(compose(name).get("volumes", {}))
    named = 0
    for service_name, service in services.items():
        depends_on = service.get("depends_on", [])
        assert set(depends_on) <= set(services) - {service_name}, service_name
        text = "\n".join(strings({k: v for k, v in service.items() if k != "depends_on"}))
        hosts = re.findall(r"rediss?://(?:[^@/\s]*@)?([A-Za-z0-9_.-]+)", text)
        hosts += re.findall(r"(?:^|\s)-h\s+([A-Za-z0-9_.-]+)", text)
        for loop in re.findall(r"\bfor \w+ in ([^;\n]+);", text):
            hosts += loop.split()
        assert set(hosts) <= set(services), service_name
        named += len(hosts)
        for mount in service.get("volumes", []):
            source = mount.split(":")[0]
            if source.startswith("."):
                assert (DEPLOY / source).is_file(), mount
            else:
                assert source in volumes, mount
        if "build" in service:
            assert (DEPLOY / service["build"]["context"] / service["build"]["dockerfile"]).is_file()
    assert named >= 2


def test_every_redis_of_the_compose_files_keeps_an_aof_fsynced_on_every_write_and_never_evicts() -> None:
    servers = [service for name in COMPOSE_FILES for service in valkey_servers(name).values()]
    assert len(servers) == 1 + 6 + 1  # one Redis; six cluster nodes and the queue
    for service in servers:
        settings = server_config(service)
        assert settings["appendonly"] == "yes"
        assert settings["appendfsync"] == "always"
        assert settings["maxmemory-policy"] == "noeviction"
        assert settings["save"] in {"", '""'}  # no RDB snapshots beside the AOF


def test_the_cluster_compose_joins_six_nodes_as_three_primaries_with_a_replica_each() -> None:
    services = compose("compose.cluster.yaml")["services"]
    servers = valkey_servers("compose.cluster.yaml")
    nodes = {
        name for name, service in servers.items() if server_config(service).get("cluster-enabled") == "yes"
    }
    assert len(nodes) == 6
    assert all(server_config(servers[node])["cluster-announce-hostname"] == node for node in nodes)
    script = "\n".join(strings(services["store-init"]["command"]))
    assert set(re.findall(r"\bfor \w+ in ([^;\n]+);", script)[0].split()) == nodes
    assert "--cluster create" in script
    assert "--cluster-replicas 1" in script
    assert "--cluster-yes" in script
    assert set(services["store-init"]["depends_on"]) == nodes


def test_with_the_cluster_compose_games_go_to_the_cluster_and_rq_to_the_standalone_queue() -> None:
    services = compose("compose.cluster.yaml")["services"]
    queue = server_config(services["queue"])
    assert "cluster-enabled" not in queue
    for role in ("api", "worker"):
        settings = flags(command_words(services[role]))
        assert settings["redis-cluster"] == "yes"
        assert settings["redis-url"].split("//")[1].split(":")[0] in valkey_servers("compose.cluster.yaml")
        assert settings["queue-url"].split("//")[1].split(":")[0] == "queue"
        assert services[role]["environment"]["TABLESTREAM_APPEND_ACK"] == "waitaof"
        assert int(services[role]["environment"]["TABLESTREAM_APPEND_REPLICAS"]) >= 1
        assert services[role]["depends_on"]["store-init"]["condition"] == "service_completed_successfully"


def test_only_the_api_containers_keep_the_images_http_health_check() -> None:
    for name in COMPOSE_FILES:
        for service_name, service in compose(name)["services"].items():
            if service.get("image") == f"{IMAGE}:latest":
                serves_http = command_words(service)[1] == "serve"
                assert service.get("healthcheck", {}).get("disable", False) is not serves_http, service_name


# -- settings ----------------------------------------------------------------------------------------


def test_every_tablestream_variable_named_in_deploy_is_a_setting_and_its_values_parse() -> None:
    named: set[str] = set()
    for path in [*DEPLOY.rglob("*"), ROOT / ".dockerignore"]:
        if path.is_file() and path.suffix not in {".pyc"}:
            named |= set(SETTING_NAME.findall(path.read_text()))
    assert {"TABLESTREAM_ADMIN_TOKEN", "TABLESTREAM_APPEND_REPLICAS"} <= named
    assert named <= allowed_settings(), sorted(named - allowed_settings())
    values = dict(one("ConfigMap", "tablestream-settings")["data"])
    for name in COMPOSE_FILES:
        for service in compose(name)["services"].values():
            environment = service.get("environment", {})
            values.update({k: v for k, v in environment.items() if not str(v).startswith("${")})
    known = {k: str(v) for k, v in values.items() if k.startswith(ENV_PREFIX)}
    Settings.from_env(known)  # raises on a value that does not parse


# -- the image ---------------------------------------------------------------------------------------


def test_the_image_runs_as_a_dedicated_non_root_user() -> None:
    users = [args for name, args in final_stage() if name == "USER"]
    assert users, "the final stage sets no USER: the container would run as root"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) >= 1000  # numeric, so Kubernetes' runAsNonRoot can check it
    assert any(name == "RUN" and f"--uid {uid}" in args for name, args in final_stage())


def test_the_image_checks_its_health_on_healthz_with_the_standard_library() -> None:
    (check,) = [args for name, args in final_stage() if name == "HEALTHCHECK"]
    assert "http://127.0.0.1:8000/healthz" in check
    assert "urllib.request" in check
    assert "curl" not in check and "wget" not in check  # neither is in python:3.11-slim


def test_the_image_is_python_3_11_slim_installed_without_pip_cache() -> None:
    bases = [args.split()[0] for name, args in dockerfile_instructions() if name == "FROM"]
    assert set(bases) == {"python:3.11-slim"}
    installs = [args for name, args in dockerfile_instructions() if name == "RUN" and "pip install" in args]
    assert installs and all("--no-cache-dir" in args for args in installs)


def test_the_docker_context_keeps_out_history_environments_and_tests_but_not_what_the_image_copies() -> None:
    for path in (
        ".git/HEAD",
        ".venv/bin/python",
        "tests/conftest.py",
        "docs/screenshots/lobby.png",
        ".ci/run",
    ):
        assert dockerignored(path), path
    assert dockerignored("services/__pycache__/config.cpython-311.pyc")
    copied = [
        source
        for name, args in dockerfile_instructions()
        if name == "COPY" and not args.startswith("--from")
        for source in args.split()[:-1]  # the last word is the destination
    ]
    assert {"pyproject.toml", "README.md", "services"} <= set(copied)
    for source in copied:
        files = [ROOT / source] if (ROOT / source).is_file() else (ROOT / source).rglob("*")
        for path in files:
            relative = path.relative_to(ROOT).as_posix()
            if path.is_file() and "__pycache__" not in relative:
                assert not dockerignored(relative), relative
