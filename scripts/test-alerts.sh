#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-alerts.sh: the example alert rules (alerts/tcptw.rules.yml) and the
# Grafana dashboard (dashboards/tcptw.json) as TAP: `promtool check rules`
# (syntax, PromQL) and `promtool test rules` on alerts/tcptw.rules.test.yml
# (which alerts fire for each seed's series and which stay quiet, e.g. a
# SNAT clash is not a full conntrack table); the dashboard's structure
# (scripts/check-dashboard.py: what current Grafana needs to import it)
# and each of its queries as PromQL (promtool, as recording rules).
# selftests/tcptw_prometheus.sh runs both against a real Prometheus.
# promtool comes from scripts/get-promtool.sh (bookworm's prometheus deb,
# downloaded into .cache/, never installed).
# Exit status: 0 iff every test passed.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO/alerts" || exit 1

echo "1..4"
if ! promtool=$("$REPO/scripts/get-promtool.sh"); then
	echo "not ok 1 - get promtool"
	echo "not ok 2 - promtool test rules # no promtool"
	echo "not ok 3 - dashboards/tcptw.json structure # not run"
	echo "not ok 4 - promtool check rules: the dashboard's queries # no promtool"
	exit 1
fi
rc=0
if out=$("$promtool" check rules tcptw.rules.yml 2>&1); then
	echo "ok 1 - promtool check rules tcptw.rules.yml"
else
	sed 's/^/# /' <<<"$out"
	echo "not ok 1 - promtool check rules tcptw.rules.yml"
	rc=1
fi
if out=$("$promtool" test rules tcptw.rules.test.yml 2>&1); then
	echo "ok 2 - promtool test rules tcptw.rules.test.yml"
else
	sed 's/^/# /' <<<"$out"
	echo "not ok 2 - promtool test rules tcptw.rules.test.yml"
	rc=1
fi
queries=$(mktemp)
trap 'rm -f "$queries"' EXIT
if out=$(python3 "$REPO/scripts/check-dashboard.py" \
	"$REPO/dashboards/tcptw.json" "$queries" 2>&1); then
	echo "ok 3 - dashboards/tcptw.json structure ($out)"
	if out=$("$promtool" check rules "$queries" 2>&1); then
		echo "ok 4 - promtool check rules: the dashboard's queries"
	else
		sed 's/^/# /' <<<"$out"
		echo "not ok 4 - promtool check rules: the dashboard's queries"
		rc=1
	fi
else
	sed 's/^/# /' <<<"$out"
	echo "not ok 3 - dashboards/tcptw.json structure"
	echo "not ok 4 - promtool check rules: the dashboard's queries # no structure"
	rc=1
fi
exit $rc
