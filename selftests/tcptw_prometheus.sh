#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2026 The tcptw authors.
#
# The fleet view on real parts (issue 45): Debian's node_exporter and
# Prometheus read what the packaged export writes, while seed 000's
# scenario (PAWS behind NAT, nat_topo.sh, driven as tcptw_nat_paws.sh
# does) runs:
#
#   c1 198.18.1.2 --+                                 mon: 127.0.0.1
#                   nat --- srv 198.18.0.2:8080       node_exporter :9100
#   c2 198.18.2.2 --+  masquerade to :40000 (1 port)  (textfile only)
#                                                     prometheus :9090
#   c1: 127.0.0.1:8081, a listener that never accepts (backlog 1)
#
# debian/tcptw-export (the timer's command, TCPTW_EXPORT_OPTS=--all-netns
# as /etc/default/tcptw-export would set it) writes tcptw.prom into the
# textfile directory every EXPORT_SECS (5), in the init netns as the
# service does; node_exporter (--collector.disable-defaults
# --collector.textfile) serves it, Prometheus scrapes it every 10 s
# (timeout 10 s) and evaluates a copy of alerts/tcptw.rules.yml every 2
# s. (Scrapes every 2 s with a 2 s timeout: 1 of 166 got through in a
# guest beside two others on two cores, node_exporter taking up to 7 s
# for the 1344 lines of an --all-netns export; each failure makes every
# series stale until the next one, and the queries below wait for a
# scrape that worked.) The copy differs from the shipped
# file in its `for:` durations only (all 1s: the shipped 2m..15m would
# make the test wait that long; the expressions are the shipped ones).
# Cases:
#  1. control: clients close first (no TIME_WAIT in srv): the PAWS
#     counter's series is there and 0, and no alert is pending or firing
#     for the scenario's namespaces (ALERTS, over the whole run so far).
#     The export covers every netns, mon's too; alerts there are logged:
#     Prometheus's own loopback HTTP was seen to trip TcptwNatIdleResets
#     in mon under TCG.
#  2. failure: servers close first, clients alternate through the one NAT
#     port: srv TwSynPawsRejected > 0; every counter of srv's
#     /proc/net/tcptw/counters equals its tcptw_* series (with
#     job/instance/netns labels and nothing else) in a scrape of an export
#     written after the counters were read, and they did not move since;
#     the PAWS alert fires for srv's netns.
#  3. dashboards/tcptw.json: each panel's query returns data.
#  4. resets: rmmod/insmod of $TCPTW_KO, PAWS again, `reset`: Prometheus
#     sees exactly 2 resets of the PAWS series, rate() is never negative
#     over the run, and the reset-adjusted sum of its raw samples is
#     exactly the rejections of the two runs.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_topo.sh"

REPO=$(cd "$LIB_DIR/.." && pwd)
DASHBOARD=$REPO/dashboards/tcptw.json
RULES=$REPO/alerts/tcptw.rules.yml
EXPORT_SH=$REPO/debian/tcptw-export
PROMETHEUS=$(command -v prometheus)
NODE_EXPORTER=$(command -v prometheus-node-exporter || command -v node_exporter)
PROM=127.0.0.1:9090
NE=127.0.0.1:9100
EXPORT_SECS=5
SRV_EP=$SRV_ADDR:$SRV_PORT

require_root
require_cmd ip nft conntrack curl jq python3
if [ -z "$PROMETHEUS" ] || [ -z "$NODE_EXPORTER" ]; then
	echo "SKIP: prometheus or prometheus-node-exporter not installed (scripts/deps.sh)"
	exit $ksft_skip
fi
require_traffic
require_module
require_nat
require_cli

TEXTDIR=$TMPDIR_T/textfile
SHIM=$TMPDIR_T/bin
declare -A P

# ------------------------------------------------------------ the stack

# export_loop : the packaged export, every EXPORT_SECS, for at most 10 min
export_loop()
{
	local i

	for ((i = 0; i < 600 / EXPORT_SECS; i++)); do
		TCPTW_EXPORT_OPTS=--all-netns PATH="$SHIM:$PATH" \
			timeout 30 sh "$EXPORT_SH" "$TEXTDIR" ||
			echo "export failed: $?"
		nap "$EXPORT_SECS"
	done
}

stack_start()
{
	mkdir -p "$TEXTDIR" "$SHIM" "$TMPDIR_T/prom"
	ln -sf "$TCPTW_CLI" "$SHIM/tcptw"
	# the shipped rules, `for:` shortened and nothing else
	sed -E 's/^( *for: ).*/\11s/' "$RULES" >"$TMPDIR_T/tcptw.rules.yml"
	cat >"$TMPDIR_T/prometheus.yml" <<-EOF
	global:
	  scrape_interval: 10s
	  scrape_timeout: 10s
	  evaluation_interval: 2s
	rule_files:
	  - $TMPDIR_T/tcptw.rules.yml
	scrape_configs:
	  - job_name: node
	    static_configs:
	      - targets: ['$NE']
	EOF
	bg_start "$TMPDIR_T/export.log" export_loop
	bg_start "$TMPDIR_T/ne.log" nsenter --net="$(nspath "$mon")" \
		"$NODE_EXPORTER" --web.listen-address="$NE" \
		--collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$TEXTDIR"
	bg_start "$TMPDIR_T/prom.log" nsenter --net="$(nspath "$mon")" \
		"$PROMETHEUS" --config.file="$TMPDIR_T/prometheus.yml" \
		--storage.tsdb.path="$TMPDIR_T/prom" \
		--web.listen-address="$PROM"
	# up: the first scrape of the export has been stored
	# (a slow machine: Prometheus loaded its configuration 24 s after
	# node_exporter started, and 60 s were not enough in CI)
	if ! slowwait 180 prom_has 'tcptw_module_loaded{job="node"}'; then
		diag "prometheus: $(tail -n 3 "$TMPDIR_T/prom.log.err")"
		diag "node_exporter: $(tail -n 3 "$TMPDIR_T/ne.log.err")"
		diag "textfile directory: $(ls -l "$TEXTDIR" | tr '\n' ' ')"
		stack_diag
		return 1
	fi
}

# prom_query EXPR : the result array of an instant query (JSON)
prom_query()
{
	nsx "$mon" curl -sf --max-time 10 "http://$PROM/api/v1/query" \
		--data-urlencode "query=$1" | jq -c '.data.result'
}

# prom_has EXPR : the query returns at least one series; a miss pauses
# 1 s, so that the waits around it (slowwait polls every 0.1 s) leave
# the CPU to Prometheus instead of running curl and jq in a loop
prom_has()
{
	[ "$(prom_query "$1" | jq 'length' 2>/dev/null)" -gt 0 ] 2>/dev/null &&
		return 0
	nap 1
	return 1
}

# prom_value EXPR : the value of its first series, empty if none
prom_value()
{
	prom_query "$1" | jq -r '.[0].value[1] // empty'
}

# prom_wait_value EXPR : prom_value, waiting (60 s at most) for a series:
# a scrape that failed (a TCG guest is slow) leaves the target's series
# stale until the next one
prom_wait_value()
{
	slowwait 60 prom_has "$1"
	prom_value "$1"
}

# stack_diag : what the scrapes did, for a failure's log
stack_diag()
{
	diag "scrapes: up $(prom_value 'sum_over_time(up[10m])') of $(prom_value 'count_over_time(up[10m])'), textfile errors $(prom_value 'max_over_time(node_textfile_scrape_error[10m])'), scrape seconds max $(prom_value 'max_over_time(scrape_duration_seconds[10m])'), export: $(tail -n 2 "$TMPDIR_T/export.log" "$TMPDIR_T/export.log.err" | tr '\n' ' ')"
	diag "families in tcptw.prom: $(grep -c '^# TYPE' "$TEXTDIR/tcptw.prom") of $(wc -l <"$TEXTDIR/tcptw.prom") lines; export stderr: $(tail -n 3 "$TMPDIR_T/export.log.err" | tr '\n' ' ')"
}

# scraped_since T : Prometheus holds a scrape of a tcptw.prom written at
# second T or later (node_exporter's mtime of the file, whole seconds)
scraped_since()
{
	prom_has "node_textfile_mtime_seconds{file=~\".*tcptw.prom\"} >= $1"
}

# wait_scraped : an export that began after this call is in Prometheus
wait_scraped()
{
	local t=$(($(now_ms) / 1000 + 2))

	slowwait 60 scraped_since "$t"
}

# scrape_complete T : one query holds node_exporter's mtime of tcptw.prom
# (>= T) and srv's tcptw_*_total series, all of them (SCRAPE: the result)
scrape_complete()
{
	SCRAPE=$(prom_query "{__name__=~\"tcptw_.*_total\",netns=\"$srv\"} or node_textfile_mtime_seconds{file=~\".*tcptw.prom\"} >= $1")
	[ "$(jq '[.[] | select(.metric.__name__ == "node_textfile_mtime_seconds")] | length' <<<"$SCRAPE" 2>/dev/null)" = 1 ] &&
		[ "$(jq '[.[] | select(.metric.netns)] | length' <<<"$SCRAPE")" -ge "$(counters_of "$srv" | wc -l)" ]
}

# ------------------------------------------------------------ traffic

setup()
{
	nat_topo_setup || return 1
	setup_ns mon || return 1
	# the clients' ports from a 256-port range, as seed 000's: their
	# TIME_WAIT sockets hold a share of it that the export reports
	nsx "$c1" sysctl -qw net.ipv4.ip_local_port_range="41000 41255" &&
		nsx "$c2" sysctl -qw net.ipv4.ip_local_port_range="41000 41255"
}

# paws_run NAME N CLOSE_FIRST : N connections, c1 and c2 in turn, through
# the one NAT port (tcptw_nat_paws.sh's recipe); srv's counters after it
# in P[]
paws_run()
{
	local name=$1 n=$2 close=$3 rc

	if ! server_start "$srv" "$TMPDIR_T/$name.server.json" \
	     --listen "$SRV_EP" --count "$n" --timeout 90 \
	     --close-first "$close"; then
		check_err 1 "$name: server did not start"
		return 1
	fi
	timeout 120 "$TRAFFIC" client --connect "$SRV_EP" --count "$n" \
		--netns "$(nspath "$c1"),$(nspath "$c2")" \
		--close-first "$close" --barrier --timeout 90 \
		--connect-timeout 10000 >"$TMPDIR_T/$name.client.json"
	rc=$?
	check_err $rc "$name: client exited with $rc"
	bg_wait "$SERVER_PID"
	# the last segments land
	sleep 0.5
	P=()
	ns_snapshot "$srv" P
	diag "$name: srv TwSynPawsRejected ${P[tw_TwSynPawsRejected]:-?}, TwCreated ${P[tw_TwCreated]:-?}; client $(head -c 200 "$TMPDIR_T/$name.client.json")"
	return $rc
}

# overflow : a burst against c1's listener that never accepts (backlog 1)
overflow()
{
	server_start "$c1" "$TMPDIR_T/ovf.srv" --listen 127.0.0.1:8081 \
		--no-accept --backlog 1 --timeout 60 || return 1
	timeout 60 ip netns exec "$c1" python3 "$LIB_DIR/tcptw_sock.py" \
		burst 127.0.0.1 8081 6 10 2 >"$TMPDIR_T/ovf.json"
	diag "overflow burst: $(cat "$TMPDIR_T/ovf.json") listeners: $(nsx "$c1" cat "$TCPTW_PROC/listeners" | tr '\n' '|')"
	kill "$SERVER_PID" 2>/dev/null
	bg_wait "$SERVER_PID"
	nsx "$c1" awk '$1 == "127.0.0.1" && $2 == 8081 && $5 > 0 { ok = 1 }
		END { exit !ok }' "$TCPTW_PROC/listeners"
}

# counters_of NS : srv's /proc/net/tcptw/counters as "Name value" lines
counters_of()
{
	nsx "$1" cat "$TCPTW_PROC/counters"
}

# prom_name NAME : the series a /proc counter is exported as (prom.c:
# snake case; TwReuseDenied<Reason> in one family with reason="...")
prom_name()
{
	awk '{
		n = $1; fam = ""; lab = ""
		if (n ~ /^TwReuseDenied./) {
			fam = "tw_reuse_denied"
			n = substr(n, 14)
			lab = "reason"
		}
		s = ""
		for (i = 1; i <= length(n); i++) {
			c = substr(n, i, 1); p = substr(n, i - 1, 1)
			x = substr(n, i + 1, 1)
			if (c ~ /[A-Z]/ && i > 1 && (p ~ /[a-z0-9]/ ||
			    (p ~ /[A-Z]/ && x ~ /[a-z]/)))
				s = s "_"
			s = s tolower(c)
		}
		if (lab != "")
			printf "tcptw_%s_total{reason=\"%s\"} %s\n", fam, s, $2
		else
			printf "tcptw_%s_total %s\n", s, $2
	}'
}

# check_nonneg WHAT GOT : GOT is a number (a float: Prometheus's) >= 0
check_nonneg()
{
	if awk -v g="$2" 'BEGIN { exit !(g ~ /^[-+0-9.e]+$/ && g + 0 >= 0) }'; then
		diag "  ok: $1: $2 >= 0"
	else
		diag "  FAIL: $1: got '$2', want >= 0"
		check_err 1 "$1: got '$2', want >= 0"
	fi
}

# ------------------------------------------------------------ the cases

test_control()
{
	local T="prometheus: control (clients close first): the PAWS series is 0, no alert pending or firing"
	local v ins

	test_begin "$T"
	paws_run control 9 client
	check_eq "srv TwSynPawsRejected (/proc)" "${P[tw_TwSynPawsRejected]:-x}" 0
	if ! wait_scraped; then
		check_err 1 "no scrape of an export after the run in 60 s"
	fi
	# rules evaluated on the scraped data: 3 more evaluations
	sleep 3
	v=$(prom_wait_value "tcptw_tw_syn_paws_rejected_total{netns=\"$srv\"}")
	check_eq "tcptw_tw_syn_paws_rejected_total{netns=srv} in Prometheus" "$v" 0
	# the scenario's namespaces; the stack's own (mon) is exported
	# too (--all-netns), its loopback HTTP is no part of the scenario
	v=$(prom_query "count_over_time(ALERTS{netns=~\"$c1|$c2|$nat|$srv\"}[10m])")
	diag "ALERTS over the run: $v"
	# Two clients behind one NAT port: the NAT's conntrack may clash
	# on that port (insert_failed), a real failure of the topology the
	# PAWS scenario needs, not of the control. That alert, in nat, is
	# allowed only where the kernel counted the clashes; any other
	# alert anywhere in the scenario fails.
	ins=$(nsx "$nat" conntrack -S 2>/dev/null |
		grep -o 'insert_failed=[0-9]*' | awk -F= '{ s += $2 } END { print s + 0 }')
	diag "nat conntrack -S insert_failed: $ins"
	check_str "alerts pending or firing since the start, in c1 c2 nat srv (but nat's insert failures)" \
		"$(jq -r --arg nat "$nat" '[.[].metric | select(.alertname != "TcptwConntrackInsertFailed" or .netns != $nat) | .alertname] | join(" ")' <<<"$v")" ""
	if jq -e --arg nat "$nat" 'any(.[].metric; .alertname == "TcptwConntrackInsertFailed" and .netns == $nat)' <<<"$v" >/dev/null; then
		check_gt "nat conntrack -S insert_failed (its alert fired)" "$ins" 0
	fi
	v=$(prom_query 'count_over_time(ALERTS[10m])' | jq -r '[.[] | .metric.alertname + "/" + .metric.alertstate + "/" + .metric.netns] | join(" ")')
	[ -z "$v" ] || diag "alerts elsewhere (not the scenario's): $v; mon: $(nsx "$mon" grep -E '^(RstReceived|RstSent) ' "$TCPTW_PROC/counters" | tr -s ' \t\n' ' ') $(nsx "$mon" grep rst_received_idle "$TCPTW_PROC/hist")"
	[ "$RET" = 0 ] || stack_diag
	log_test "$T"
}

test_failure()
{
	local T="prometheus: PAWS behind NAT: tcptw_* series equal /proc at one scrape, the PAWS alert fires"
	local c0 c1_ want got name val k bad=0 n=0 labels

	test_begin "$T"
	overflow || check_err 1 "listen overflow burst failed"
	paws_run fail1 11 server
	V1=${P[tw_TwSynPawsRejected]:-0}
	check_gt "srv TwSynPawsRejected (/proc)" "$V1" 0
	c0=$(counters_of "$srv")
	# the series of one scrape (a target's series are all from its last
	# one) of an export begun after c0 was read
	T0=$(($(now_ms) / 1000 + 2))
	slowwait 60 scrape_complete "$T0" ||
		check_err 1 "no complete scrape of an export after the run in 60 s"
	got=$(jq -r '.[] | select(.metric.netns) | .metric as $m | ($m.__name__ + (if $m.reason then "{reason=\"" + $m.reason + "\"}" else "" end)) + " " + .value[1]' <<<"$SCRAPE")
	c1_=$(counters_of "$srv")
	if [ "$c1_" != "$c0" ]; then
		diag "  srv counters before: $(tr -s ' \t\n' ' ' <<<"$c0")"
		diag "  srv counters after:  $(tr -s ' \t\n' ' ' <<<"$c1_")"
		check_err 1 "srv counters moved during the comparison"
	fi
	while read -r name val; do
		n=$((n + 1))
		k=$(grep -F -x -m 1 "$name $val" <<<"$got")
		if [ -z "$k" ]; then
			diag "  FAIL: $name: /proc $val, Prometheus '$(grep -F "$name " <<<"$got" | head -n 1)'"
			bad=$((bad + 1))
		fi
	done < <(prom_name <<<"$c0")
	diag "$n counters compared, $bad differ"
	check_eq "counters of /proc whose series differ" "$bad" 0
	check_gt "counters compared" "$n" 20
	# the labels: the exporter's netns, node_exporter's job and instance
	labels=$(prom_query "tcptw_tw_syn_paws_rejected_total{netns=\"$srv\"}" |
		jq -c '.[0].metric // {} | del(.__name__)')
	check_str "labels of tcptw_tw_syn_paws_rejected_total" "$labels" \
		"{\"instance\":\"$NE\",\"job\":\"node\",\"netns\":\"$srv\"}"
	check_eq "tcptw_module_loaded{netns=srv}" \
		"$(prom_wait_value "tcptw_module_loaded{netns=\"$srv\"}")" 1
	if ! slowwait 60 prom_has "ALERTS{alertname=\"TcptwPawsRejectedSynsBehindNat\",alertstate=\"firing\",netns=\"$srv\"}"; then
		check_err 1 "TcptwPawsRejectedSynsBehindNat not firing for $srv in 60 s"
	fi
	diag "firing: $(prom_query 'ALERTS{alertstate="firing"}' | jq -r '[.[] | .metric.alertname + "/" + .metric.netns] | join(" ")')"
	[ "$RET" = 0 ] || stack_diag
	log_test "$T"
}

# dashboard_has N QUERY : QUERY (the panels' queries, each counted and
# labelled q=<its number>, joined by `or`: one HTTP request, not N)
# returns a series for each of the N; DASH_HAS: the numbers that did
dashboard_has()
{
	DASH_HAS=$(prom_query "$2" | jq -r '[.[].metric.q] | sort_by(tonumber) | join(" ")')
	[ "$(wc -w <<<"$DASH_HAS")" -eq "$1" ]
}

test_dashboard()
{
	local T="prometheus: every query of dashboards/tcptw.json returns data"
	local expr q all= n=0 i f

	test_begin "$T"
	local -a exprs=()
	while IFS= read -r expr; do
		# Grafana's interval variable: 5 min, the length of this run
		q=${expr//\$__rate_interval/5m}
		exprs+=("$q")
		all+="${all:+ or }label_replace(count($q), \"q\", \"$n\", \"\", \"\")"
		n=$((n + 1))
	done < <(jq -r '.panels[].targets[].expr' "$DASHBOARD")
	check_gt "dashboard queries" "$n" 4
	slowwait 60 dashboard_has "$n" "$all"
	diag "queries with data: $DASH_HAS (of 0..$((n - 1)))"
	for ((i = 0; i < n; i++)); do
		[[ " $DASH_HAS " == *" $i "* ]] && continue
		diag "  FAIL: no data: ${exprs[i]}"
		check_err 1 "query $i without data: ${exprs[i]}"
		for f in $(grep -o 'tcptw_[a-z_]*' <<<"${exprs[i]}" | sort -u); do
			diag "    $f: $(grep -c "^$f{" "$TEXTDIR/tcptw.prom") samples in tcptw.prom, $(prom_query "count($f)" | jq -r '.[0].value[1] // 0') in Prometheus: $(grep -m 3 "^$f{" "$TEXTDIR/tcptw.prom" | tr '\n' ' ')"
		done
	done
	[ "$RET" = 0 ] || stack_diag
	log_test "$T"
}

# sample_sum : the PAWS series' raw samples over the run, summed the way
# Prometheus handles counter resets (a drop starts from 0), and resets
reset_sum()
{
	prom_query "tcptw_tw_syn_paws_rejected_total{netns=\"$srv\"}[10m]" |
		jq -r '[.[0].values[][1] | tonumber] |
			reduce .[] as $v ({p: null, s: 0};
				if .p == null then {p: $v, s: 0}
				elif $v >= .p then {p: $v, s: (.s + $v - .p)}
				else {p: $v, s: (.s + $v)} end) | .s'
}

paws_is()
{
	[ "$(prom_value "tcptw_tw_syn_paws_rejected_total{netns=\"$srv\"}")" = "$1" ] &&
		return 0
	nap 1	# as prom_has
	return 1
}

test_resets()
{
	local T="prometheus: module reload and reset: rate() never negative, resets counted"
	local v2 r sum

	test_begin "$T"
	if [ -z "${TCPTW_KO:-}" ] || [ ! -r "$TCPTW_KO" ]; then
		skip_test "TCPTW_KO not set or unreadable"
		log_test "$T"
		return
	fi
	timeout 60 rmmod tcptw >"$TMPDIR_T/rmmod.out" 2>&1 ||
		check_err 1 "rmmod: $(cat "$TMPDIR_T/rmmod.out")"
	timeout 60 insmod "$TCPTW_KO" >"$TMPDIR_T/insmod.out" 2>&1 ||
		check_err 1 "insmod: $(cat "$TMPDIR_T/insmod.out")"
	slowwait 90 paws_is 0 || check_err 1 "Prometheus did not see the PAWS counter at 0 after the reload"
	paws_run fail2 9 server
	V2=${P[tw_TwSynPawsRejected]:-0}
	check_gt "srv TwSynPawsRejected after the reload (/proc)" "$V2" 0
	slowwait 90 paws_is "$V2" || check_err 1 "Prometheus did not see $V2 after the second run"
	echo reset | nsx "$srv" tee "$TCPTW_PROC/control" >/dev/null ||
		check_err 1 "reset failed"
	slowwait 90 paws_is 0 || check_err 1 "Prometheus did not see the PAWS counter at 0 after reset"
	r=$(prom_wait_value "resets(tcptw_tw_syn_paws_rejected_total{netns=\"$srv\"}[10m])")
	check_eq "resets() of the PAWS series (reload, reset)" "$r" 2
	v2=$(prom_wait_value "min_over_time(rate(tcptw_tw_syn_paws_rejected_total{netns=\"$srv\"}[30s])[10m:1s])")
	check_nonneg "min over the run of rate(PAWS[30s])" "$v2"
	sum=$(reset_sum)
	check_eq "reset-adjusted increase of the raw samples == the runs' rejections" \
		"$sum" $((V1 + V2))
	v2=$(prom_wait_value "increase(tcptw_tw_syn_paws_rejected_total{netns=\"$srv\"}[10m])")
	diag "increase() over the run (extrapolated): $v2, runs: $V1 + $V2"
	check_nonneg "increase() over the run" "$v2"
	[ "$RET" = 0 ] || stack_diag
	log_test "$T"
}

if ! setup || ! stack_start; then
	tests_run \
		"ktap_not_ok 'prometheus: control: setup failed'" \
		"ktap_not_ok 'prometheus: failure: setup failed'" \
		"ktap_not_ok 'prometheus: dashboard: setup failed'" \
		"ktap_not_ok 'prometheus: resets: setup failed'"
fi
diag "prometheus $("$PROMETHEUS" --version 2>&1 | head -n 1 | cut -d' ' -f3), node_exporter $("$NODE_EXPORTER" --version 2>&1 | head -n 1 | cut -d' ' -f3)"
V1=0
tests_run \
	test_control \
	test_failure \
	test_dashboard \
	test_resets
