"""The alert rules (deploy/prometheus/alerts.yaml) fire when they should: promtool's rule unit tests
(deploy/prometheus/alerts.test.yaml) feed them the series of a healthy soak, a frozen worker, killed
workers, multiplying bot jobs and 5xx answers, and check when each fires. Each rule links its runbook
in docs/alerts.md. CI installs promtool (Debian's ``prometheus``, in .ci/run)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from tests.support.promql import ALERTS, ROOT, alert_rules, load_alerts

RULE_TESTS = ALERTS.parent / "alerts.test.yaml"
RUNBOOKS = ROOT / "docs" / "alerts.md"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None,
    reason="promtool is not installed (Debian's prometheus package; .ci/run installs it)",
)


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run(
        [PROMTOOL, *args], cwd=ALERTS.parent, capture_output=True, text=True, timeout=120, check=False
    )


@needs_promtool
def test_promtool_accepts_the_alert_rules() -> None:
    result = promtool("check", "rules", ALERTS.name)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
def test_every_rule_fires_when_its_unit_tests_say_and_a_healthy_soak_fires_none() -> None:
    result = promtool("test", "rules", RULE_TESTS.name)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_every_rule_is_checked_quiet_in_a_healthy_soak_and_firing_in_another_test() -> None:
    names = {rule["alert"] for rule in alert_rules(load_alerts())}
    tests = yaml.safe_load(RULE_TESTS.read_text())["tests"]
    (healthy,) = [t for t in tests if t["name"].startswith("a healthy soak")]
    quiet = {check["alertname"] for check in healthy["alert_rule_test"] if check["exp_alerts"] == []}
    assert quiet == names
    firing = {
        check["alertname"] for test in tests for check in test["alert_rule_test"] if check["exp_alerts"]
    }
    assert firing == names


def test_a_frozen_worker_fires_each_of_its_alerts_within_four_minutes_of_the_freeze() -> None:
    tests = yaml.safe_load(RULE_TESTS.read_text())["tests"]
    (frozen,) = [t for t in tests if t["name"].startswith("a frozen worker")]
    freeze = 5 * 60  # the series freeze at 5 minutes
    fired = {}
    for check in frozen["alert_rule_test"]:
        if check["exp_alerts"]:
            minutes, seconds = re.fullmatch(r"(\d+)m(?:(\d+)s)?", check["eval_time"]).groups()  # type: ignore[union-attr]
            fired[check["alertname"]] = int(minutes) * 60 + int(seconds or 0) - freeze
    for alert in ("TablestreamProjectionStalled", "TablestreamNoLiveWorker", "TablestreamQueueDepthGrowing"):
        assert fired[alert] <= 4 * 60, (alert, fired[alert])


def test_the_stall_alert_reads_hand_overs_waiting_and_the_consumers_idle_not_a_projection_job() -> None:
    # no projection is an RQ job since the hand-over to a standing consumer: a frozen pool queues none
    (rule,) = [r for r in alert_rules(load_alerts()) if r["alert"] == "TablestreamProjectionStalled"]
    expr = " ".join(rule["expr"].split())
    assert "max(tablestream_handed_over_games) > 0" in expr
    assert "min(tablestream_handover_consumer_idle_seconds) > 30" in expr
    assert "queue_oldest_job" not in expr and rule["for"] == "1m"
    tests = yaml.safe_load(RULE_TESTS.read_text())["tests"]
    (frozen,) = [t for t in tests if t["name"].startswith("a frozen worker")]
    series = {s["series"].split("{")[0] for s in frozen["input_series"]}
    assert {"tablestream_handed_over_games", "tablestream_handover_consumer_idle_seconds"} <= series


def test_every_rule_links_its_runbook_in_docs_alerts_md_with_what_to_look_at_and_what_to_do() -> None:
    text = RUNBOOKS.read_text()
    sections = dict(re.findall(r"^## (Tablestream\w+)\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S))
    for rule in alert_rules(load_alerts()):
        name = rule["alert"]
        assert rule["annotations"]["runbook_url"] == f"docs/alerts.md#{name.lower()}"
        assert name in sections, f"{name} has no runbook in docs/alerts.md"
        for part in ("**What it means.**", "**What to look at.**", "**What to do.**"):
            assert part in sections[name], (name, part)
