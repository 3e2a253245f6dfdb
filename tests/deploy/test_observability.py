"""The Grafana dashboard, the Prometheus alert rules and the autoscalers (deploy/) hold together
offline: their shape is checked against a schema, every PromQL expression parses (minimally, and
with promtool in test_alert_rules.py), and every metric they read is one the service defines.
That every one of them is in ``/metrics`` of a game played: tests/api/test_metrics.py and
test_metrics_processes.py."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
import yaml
from prometheus_client import ProcessCollector

from services.telemetry import metrics
from tests.support.promql import (
    ALERTS,
    ROOT,
    PromQLError,
    alert_rules,
    check_expression,
    dashboard_expressions,
    exporter_metrics,
    family_of,
    load_alerts,
    load_dashboard,
    named_metrics,
)

K8S = ROOT / "deploy" / "k8s"
DURATION = r"^\d+[smhd]$"

DASHBOARD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["uid", "title", "panels", "schemaVersion", "templating"],
    "properties": {
        "uid": {"type": "string", "pattern": "^[a-z0-9-]{1,40}$"},
        "schemaVersion": {"type": "integer", "minimum": 30},
        "panels": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id", "type", "title", "gridPos", "targets", "datasource"],
                "properties": {
                    "id": {"type": "integer"},
                    "type": {"enum": ["timeseries", "stat", "gauge", "table"]},
                    "title": {"type": "string", "minLength": 3},
                    "gridPos": {
                        "type": "object",
                        "required": ["h", "w", "x", "y"],
                        "properties": {"w": {"type": "integer", "minimum": 1, "maximum": 24}},
                    },
                    "targets": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["refId", "expr"],
                            "properties": {"refId": {"type": "string"}, "expr": {"type": "string"}},
                        },
                    },
                },
            },
        },
    },
}

ALERTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["groups"],
    "additionalProperties": False,
    "properties": {
        "groups": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["name", "rules"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string"},
                    "interval": {"type": "string", "pattern": DURATION},
                    "rules": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["alert", "expr", "for", "labels", "annotations"],
                            "additionalProperties": False,
                            "properties": {
                                "alert": {"type": "string", "pattern": "^Tablestream[A-Za-z0-9]+$"},
                                "expr": {"type": "string"},
                                "for": {"type": "string", "pattern": DURATION},
                                "labels": {
                                    "type": "object",
                                    "required": ["severity"],
                                    "properties": {"severity": {"enum": ["warning", "critical"]}},
                                },
                                "annotations": {
                                    "type": "object",
                                    "required": ["summary", "description", "runbook_url"],
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}

# the alerts the issue asks for, by what they watch
WATCHED = {
    "TablestreamProjectionLagHigh": "tablestream_projection_lag_seconds_bucket",
    "TablestreamProjectionStalled": "tablestream_handover_consumer_idle_seconds",
    "TablestreamHigh5xxRate": "tablestream_http_requests_total",
    "TablestreamQueueDepthGrowing": "tablestream_queue_depth",
    "TablestreamReplicaAckFailures": "tablestream_append_ack_failures_total",
    "TablestreamNoLiveWorker": "tablestream_workers",
    "TablestreamBotQueueLag": "tablestream_job_lag_seconds_bucket",
    "TablestreamBotJobAmplification": "tablestream_bot_moves_total",
    "TablestreamLoginFailureSpike": "tablestream_login_failures_total",
    "TablestreamLogCheckpointRefused": "tablestream_log_checkpoints_refused_total",
}


def defined_families() -> set[str]:
    """The families this service's ``/metrics`` defines: every process's, those read at a scrape and
    prometheus-client's process collector's."""
    own = {family.name for family in metrics.Metrics().registry.collect()}
    figures = metrics.Figures({}, {}, {}, 0.0, 0, {}, None)
    process = {family.name for family in ProcessCollector(registry=None).collect()}
    return own | process | {family.name for family in metrics.scrape_time_families(figures)}


def test_the_dashboard_matches_its_schema_with_unique_panel_ids_and_ref_ids() -> None:
    dashboard = load_dashboard()
    jsonschema.validate(dashboard, DASHBOARD_SCHEMA)
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        refs = [target["refId"] for target in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]


def test_every_dashboard_and_alert_expression_parses() -> None:
    expressions = dashboard_expressions(load_dashboard()) + [r["expr"] for r in alert_rules(load_alerts())]
    assert len(expressions) >= 20
    for expr in expressions:
        assert check_expression(expr), f"{expr!r} reads no metric"


def test_the_expression_check_refuses_broken_promql() -> None:
    for broken in (
        "rate(tablestream_commands_total[5m]",
        "rate(tablestream_commands_total{game=skull}[5m])",
        "rte(tablestream_commands_total[5m])",
        "rate(tablestream_commands_total[5 minutes])",
    ):
        with pytest.raises(PromQLError):
            check_expression(broken)


def test_the_alert_rules_match_their_schema_and_watch_what_the_issue_asks() -> None:
    document = load_alerts()
    jsonschema.validate(document, ALERTS_SCHEMA)
    rules = {rule["alert"]: rule for rule in alert_rules(document)}
    for alert, metric in WATCHED.items():
        assert metric in check_expression(rules[alert]["expr"]), alert


def test_every_threshold_of_the_alert_rules_is_explained_in_a_comment_and_in_the_operations_doc() -> None:
    text = ALERTS.read_text().splitlines()
    doc = (ROOT / "docs" / "operations.md").read_text()
    assert "## Metrics and alerts" in doc
    for number, line in enumerate(text):
        if line.strip().startswith("- alert:"):
            assert text[number - 1].strip().startswith("#"), f"no comment above {line.strip()}"
            assert line.split(":", 1)[1].strip() in doc, f"{line.strip()} not in docs/operations.md"


def test_every_metric_the_dashboard_and_the_alerts_read_is_defined_by_the_service() -> None:
    defined = defined_families()
    named = named_metrics()
    assert named
    missing = {name for name in named if family_of(name).removesuffix("_total") not in defined}
    assert missing == set()


def test_the_worker_scaledobject_scales_the_workers_on_the_projection_timer_and_bot_queues() -> None:
    (scaled,) = [d for d in yaml.safe_load_all((K8S / "worker-scaledobject.yaml").read_text()) if d]
    assert scaled["apiVersion"] == "keda.sh/v1alpha1" and scaled["kind"] == "ScaledObject"
    (worker,) = [
        d for d in yaml.safe_load_all((K8S / "worker.yaml").read_text()) if d and d["kind"] == "Deployment"
    ]
    assert scaled["spec"]["scaleTargetRef"]["name"] == worker["metadata"]["name"]
    assert scaled["spec"]["minReplicaCount"] >= 1
    lists = {t["metadata"]["listName"] for t in scaled["spec"]["triggers"] if t["type"] == "redis"}
    assert lists == {"rq:queue:projections", "rq:queue:lifecycle", "rq:queue:bots"}
    env = {item["name"] for item in worker["spec"]["template"]["spec"]["containers"][0]["env"]}
    for trigger in scaled["spec"]["triggers"]:
        assert {trigger["metadata"]["addressFromEnv"], trigger["metadata"]["passwordFromEnv"]} <= env


def test_the_api_autoscaler_scales_on_cpu_and_on_the_request_rate_the_adapter_serves() -> None:
    (hpa,) = [d for d in yaml.safe_load_all((K8S / "api-hpa.yaml").read_text()) if d]
    kinds = {m["type"]: m for m in hpa["spec"]["metrics"]}
    assert kinds["Resource"]["resource"]["name"] == "cpu"
    served = kinds["Pods"]["pods"]["metric"]["name"]
    adapter = yaml.safe_load((K8S / "prometheus-adapter-values.yaml").read_text())
    (rule,) = [r for r in adapter["rules"]["custom"] if r["name"]["as"] == served]
    assert "tablestream_http_requests_total" in rule["seriesQuery"]
    assert family_of("tablestream_http_requests_total").removesuffix("_total") in defined_families()


def test_the_redis_panel_names_redis_exporter_and_the_operations_doc_says_it_is_needed() -> None:
    panels = load_dashboard()["panels"]
    (panel,) = [p for p in panels if p["title"].startswith("Redis (needs redis_exporter)")]
    assert exporter_metrics() >= {"redis_memory_used_bytes", "redis_commands_processed_total"}
    assert "redis_exporter" in panel["description"]
    assert "redis_exporter" in (ROOT / "docs" / "operations.md").read_text()


def test_the_dashboard_has_cpu_memory_redis_and_saturation_panels_and_no_job_label_of_the_jobs() -> None:
    exprs = " ".join(dashboard_expressions(load_dashboard()))
    for metric in (
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "tablestream_redis_round_trips_total",
        "tablestream_queue_depth",
        "tablestream_workers",
        "tablestream_queue_oldest_job_seconds",
        "tablestream_handover_consumer_idle_seconds",
    ):
        assert metric in exprs, metric
    assert "by (queue, job," not in exprs and "{{job}} {{outcome}}" not in exprs
