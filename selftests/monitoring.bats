#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# monitoring.bats - the monitoring mixin of dist/monitoring (Grafana
# dashboard, Prometheus alerting rules and their unit tests) and the
# exporter's route-sync metrics it reads:
# - the rules pass `promtool check rules`, and `promtool test rules` runs
#   series through each alert that make it fire and that do not;
# - the dashboard is JSON that Grafana 9/10 imports (a datasource
#   variable, instance and interface variables from label_values, unique
#   panel ids and positions), is what its source (xnf.py) writes, and
#   each of its queries parses as PromQL;
# - on a test bed with every part of xnf that has metrics (firewall with
#   a rule that logs, a sampled drop reason, conntrack, NAT, l3fwd, a
#   route sync, an AF_XDP worker, the trace's counters) every metric
#   name a query or a rule names is one the exporter serves with a
#   sample, and the check fails on the served text with one name renamed
#   (selftests/lib/monitoring_names.py);
# - xnf_route_sync_running is 1 while the sync runs and 0 once it is
#   killed (its pid still registered), with its start and last change.
# The exporter listens on 127.0.0.1 in the DUT's namespace.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=240}"

load ../testbed/testbed

MON=$BATS_TEST_DIRNAME/../dist/monitoring
DASH=$MON/dashboards/xnf.json
RULES=$MON/alerts/xnf-alerts.yaml
PORT=10076
URL=http://127.0.0.1:$PORT/metrics
CHAIN=conntrack,nat,firewall,l3fwd
# Routed by the route sync through the sink (its kernel route via it).
SYNCED=203.0.113.0/24

setup_file()
{
	local skip
	skip=$(tb_missing)
	command -v promtool >/dev/null || skip="${skip:+$skip, }no promtool (Debian package prometheus)"
	command -v curl >/dev/null || skip="${skip:+$skip, }no curl"
	python3 -c 'import yaml' 2>/dev/null || skip="${skip:+$skip, }no python3-yaml"
	export MON_SKIP=$skip
}

teardown()
{
	tb_teardown
}

@test "the alerting rules pass promtool check rules and fire and stay quiet in their unit tests" {
	[ -z "$MON_SKIP" ] || skip "$MON_SKIP"
	run -0 promtool check rules "$RULES"
	run -0 promtool test rules "$MON/tests/xnf-alerts.test.yaml"
	# Every alert has a test that expects it to fire and one at which
	# it must not (exp_alerts: []).
	run -0 python3 - "$RULES" "$MON/tests/xnf-alerts.test.yaml" <<-'PY'
		import sys, yaml
		rules = yaml.safe_load(open(sys.argv[1]))
		tests = yaml.safe_load(open(sys.argv[2]))
		alerts = {r['alert'] for g in rules['groups'] for r in g['rules']}
		fire, quiet = set(), set()
		for t in tests['tests']:
		    for a in t['alert_rule_test']:
		        (fire if a.get('exp_alerts') else quiet).add(a['alertname'])
		bad = sorted((alerts - fire) | (alerts - quiet))
		for a in bad:
		    print('untested either way:', a)
		for r in (r for g in rules['groups'] for r in g['rules']):
		    assert r['labels']['severity'] in ('warning', 'critical'), r
		    assert {'summary', 'description', 'runbook'} <= set(r['annotations']), r
		sys.exit(1 if bad else 0)
	PY
	# The reasons the rules name are reasons xnf counts.
	run -0 python3 - "$RULES" "$BATS_TEST_DIRNAME/../include/uapi/xnf_dp.h" <<-'PY'
		import re, sys, yaml
		rules = yaml.safe_load(open(sys.argv[1]))
		known = set(re.findall(r'^\s*X\([A-Z_0-9]+, *([a-z_0-9]+)\)',
		                       open(sys.argv[2]).read(), re.M))
		named = {n for g in rules['groups'] for r in g['rules']
		         for m in re.findall(r'reason[!=]~?"([^"]*)"', r['expr'])
		         for n in m.split('|')}
		assert named, 'no reason named'
		sys.exit(0 if named <= known else f'not reasons: {named - known}')
	PY
}

@test "the dashboard is JSON Grafana imports, with its variables, and every query parses" {
	[ -z "$MON_SKIP" ] || skip "$MON_SKIP"
	local rules=$BATS_TEST_TMPDIR/dash-rules.yaml

	run -0 python3 -m json.tool "$DASH"
	# The file is what its source writes.
	python3 "$MON/dashboards/xnf.py" | cmp - "$DASH"
	jq -e '.schemaVersion >= 36 and .uid == "xnf-dataplane"' "$DASH"
	jq -e '.templating.list[] | select(.name == "datasource") |
		.type == "datasource" and .query == "prometheus"' "$DASH"
	jq -e '.templating.list[] | select(.name == "instance") |
		.type == "query" and (.definition | test("^label_values\\(xnf_up, instance\\)$"))' "$DASH"
	jq -e '.templating.list[] | select(.name == "interface") |
		.type == "query" and (.definition | test("^label_values\\(xnf_interface_info.*, interface\\)$"))' "$DASH"
	# Ids unique, each panel on the data source variable.
	jq -e '[.panels[].id] | length == (unique | length)' "$DASH"
	jq -e '[.panels[] | select(.type != "row") | .datasource.uid, .targets[].datasource.uid] |
		all(. == "${datasource}")' "$DASH"
	jq -e '[.panels[] | select(.type != "row")] | length >= 40' "$DASH"
	# No two panels on one cell of the 24-column grid.
	run -0 python3 - "$DASH" <<-'PY'
		import json, sys
		cells = {}
		for p in json.load(open(sys.argv[1]))['panels']:
		    g = p['gridPos']
		    assert g['x'] + g['w'] <= 24, p['title']
		    for y in range(g['y'], g['y'] + g['h']):
		        for x in range(g['x'], g['x'] + g['w']):
		            assert (x, y) not in cells, (p['title'], cells[(x, y)])
		            cells[(x, y)] = p['title']
	PY

	# Each query as a recording rule, with Grafana's variables filled
	# in: promtool parses them all.
	jq -r '[.panels[] | .targets[]?.expr] | to_entries[] |
		"      - record: q\(.key)\n        expr: \(.value | @json)"' "$DASH" |
		sed -e 's/\$__rate_interval/5m/g' -e 's/\$__interval/1m/g' \
			-e 's/\$instance/.*/g' -e 's/\$interface/.*/g' >"$rules.body"
	[ -s "$rules.body" ]
	printf 'groups:\n  - name: dashboard\n    rules:\n' | cat - "$rules.body" >"$rules"
	run -0 promtool check rules "$rules"
}

# scrape: the exporter's answer, from the DUT.
scrape()
{
	tb_dut curl -sS --fail --max-time 20 "$URL"
}

exporter_start()
{
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" \
		timeout "$TB_TIMEOUT" "$XNF" exporter 2>"$TB_TMP/exporter.log"
	tb_until "the exporter on port $PORT" scrape >/dev/null
}

# sync_started: the route sync printed its start event.
sync_started()
{
	jq -e 'select(.event == "started")' "$TB_TMP/sync.out" >/dev/null 2>&1
}

# metric NAME: the value of the one sample of NAME in $TB_TMP/m.txt.
metric()
{
	sed -n "s/^$1\({[^}]*}\)\? //p" "$TB_TMP/m.txt"
}

running_is()
{
	scrape >"$TB_TMP/m.txt" && [ "$(metric xnf_route_sync_running)" = "$1" ]
}

worker_running()
{
	[ "$(tb_xnf -j status d0 | jq -r '.workers[0].state // "none"')" = running ]
}

@test "every metric the dashboard and the rules name is served; the route sync's state and times" {
	[ -z "$MON_SKIP" ] || skip "$MON_SKIP"
	local t0 t1 sync

	[ -z "$(tb_missing)" ]
	tb_setup
	tb_attach_both $CHAIN
	# A rule that logs and a reason sampled: the packet log's counters
	# have samples (only sources that log have them).
	tb_xnf fw add prio 10 log allow proto icmp
	tb_xnf config set log_reasons martian
	exporter_start

	# A route sync owns the tables: the kernel's route to $SYNCED via
	# the sink becomes xnf's. Its registration's start is its own.
	ip -n "$TB_SINK" addr add 203.0.113.1/32 dev lo
	ip -n "$TB_DUT" route add $SYNCED via $TB_SINK4
	t0=$(date +%s)
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" \
		timeout "$TB_TIMEOUT" "$XNF" -j route sync >"$TB_TMP/sync.out" 2>&1
	sync=$TB_BG_PID
	tb_until "the sync to start" sync_started
	scrape >"$TB_TMP/m.txt"
	grep -qx 'xnf_route_sync_running{table="254"} 1' "$TB_TMP/m.txt"
	t1=$(date +%s)
	# Started between t0 and t1; its first batch, which wrote the
	# route, is its last change.
	awk -v a="$t0" -v b="$t1" '{ exit !($1 >= a && $1 <= b + 1) }' \
		<<<"$(metric xnf_route_sync_start_time_seconds)"
	awk -v a="$t0" -v b="$t1" '{ exit !($1 >= a && $1 <= b + 1) }' \
		<<<"$(metric xnf_route_sync_last_change_timestamp_seconds)"
	tb_ping_ok "$TB_SRC" 203.0.113.1 3

	# Killed (the xnf under timeout): its pid stays registered, but no
	# process holds its lock.
	kill -KILL "$(pgrep -P "$sync" -x xnf)"
	wait "$sync" 2>/dev/null || true
	tb_until "xnf_route_sync_running 0" running_is 0
	grep -q '^xnf_route_sync_start_time_seconds{table="254"} ' "$TB_TMP/m.txt"

	# An AF_XDP worker on d0, which ran and stopped.
	tb_xnf chain set d0 xsk
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" worker d0 \
		nf l3fwd egress d1 duration 120
	tb_until "the worker to run" worker_running
	tb_ping_ok "$TB_SRC" 203.0.113.1 3
	tb_bg_stop "$TB_BG_PID"

	scrape >"$TB_TMP/m.txt"
	run -0 promtool check metrics <"$TB_TMP/m.txt"
	run -0 python3 "$TB_TOP/selftests/lib/monitoring_names.py" \
		"$TB_TMP/m.txt" "$DASH" "$RULES"
	echo "$output"

	# The check is not vacuous: the same text with one name the rules
	# and the dashboard use renamed fails it, naming it. (Checked by hand
	# as well: with "xnf_ct_max" renamed in cli/prom.c's table and xnf
	# built again, this test fails at the check above.)
	sed 's/^xnf_ct_max /xnf_ct_max_entries /' "$TB_TMP/m.txt" >"$TB_TMP/renamed.txt"
	! cmp -s "$TB_TMP/m.txt" "$TB_TMP/renamed.txt"
	run -1 python3 "$TB_TOP/selftests/lib/monitoring_names.py" \
		"$TB_TMP/renamed.txt" "$DASH" "$RULES"
	[[ "$output" == *"not served: xnf_ct_max"$'\n'* ]]
}
