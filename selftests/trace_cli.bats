#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# trace_cli.bats - `xnf trace` as operators run it, in the test bed's DUT
# (testbed/testbed.bash), without traffic (selftests/trace.bats sends
# packets through traced chains): the match is the firewall's (a match
# it refuses, ct state, no bound, an action, is refused and arms
# nothing); a trace ends by itself at its timeout with exit status 0 and
# an end document of xnf/trace/1; `xnf status` shows the armed trace; a
# second tracer is refused while the first lives; SIGTERM ends a trace
# and disarms it; a killed tracer's trace is taken over; the defaults are
# count 10 and timeout 60; the start and end are in the change log; the
# exporter's text has the trace counters.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=120}"

load ../testbed/testbed

SHAPE=("/usr/bin/python3" "$TB_TOP/selftests/lib/json_shape.py")

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	tb_setup
	tb_attach_both firewall,l3fwd
}

teardown()
{
	tb_teardown
}

# The armed trace as `xnf -j status` shows it (null: none).
armed() { tb_xnf -j status | jq -c '.trace'; }

# trace_bg ARGS...: `xnf -j trace ARGS` in the DUT in the background, its
# documents in $TB_TMP/trace.out; sets TPID. Waits until it is armed.
trace_bg()
{
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" -j trace "$@" \
		>"$TB_TMP/trace.out" 2>"$TB_TMP/trace.err"
	TPID=$TB_BG_PID
	tb_until "the trace to be armed" is_armed_by "$TPID"
}

is_armed_by() { [ "$(armed | jq '.pid')" = "$1" ]; }

# term_trace: SIGTERM to the trace_bg tracer, which exits 0.
term_trace()
{
	local rc=0
	kill -TERM "$TPID"
	wait "$TPID" || rc=$?
	tb_expect "the tracer's exit status" "$rc" -eq 0
}

@test "a refused match or bound exits nonzero, under -j with an error document, and arms nothing" {
	local args
	for args in "ct state new" "ct state established timeout 5" \
		"count 0 timeout 0" "count 0" "dport 70000" "sport 90-80" \
		"allow" "drop src 192.0.2.0/24" "prio 5" "oif $TB_D1" \
		"count" "timeout x" "count 2 count 3" "src 192.0.2.0/24 dst 2001:db8::/32" \
		"iif nosuchdev0" "bogus 1"; do
		# shellcheck disable=SC2086 # the words of one command
		run -1 tb_xnf -j trace $args
		echo "$args: $output"
		tb_expect "$args: an error document" \
			"$(jq -r '.schema' <<<"$output")" = "xnf/error/1"
		tb_expect "$args: nothing armed" "$(armed)" = "null"
	done
}

@test "a trace ends by itself at its timeout: exit 0, one end document of xnf/trace/1, nothing armed" {
	local t0=$SECONDS
	run -0 tb_xnf -j trace proto tcp dport 22 src 192.0.2.0/24 iif "$TB_D0" \
		tcp flags syn timeout 1
	echo "$output"
	tb_expect "after its timeout" $((SECONDS - t0)) -ge 1
	tb_expect "one document" "$(jq -s 'length' <<<"$output")" -eq 1
	tb_expect "the end" "$(jq -c '[.event, .traced, .lost, .why]' <<<"$output")" = \
		'["end",0,0,"timeout"]'
	echo "$output" >"$TB_TMP/end.json"
	run -0 "${SHAPE[@]}" validate "$TB_TOP/docs/json" "$TB_TMP/end.json"
	tb_expect "disarmed" "$(armed)" = "null"
	# Matches nothing: a count is no bound it reaches, the timeout is.
	run -0 tb_xnf -j trace dst 203.0.113.99 count 3 timeout 1
	tb_expect "by time" "$(jq -r '.why' <<<"$output")" = "timeout"
	run -0 tb_xnf trace icmp type echo-request count 0 timeout 1
}

@test "xnf status shows the armed trace; a second tracer is refused; SIGTERM ends it and disarms" {
	local j id
	trace_bg dst 203.0.113.99 count 5 timeout 30
	j=$(armed)
	echo "$j"
	id=$(jq '.id' <<<"$j")
	tb_expect "its tracer, live, count" \
		"$(jq -c '[.pid, .live, .matched, .max_packets]' <<<"$j")" = "[$TPID,true,0,5]"
	tb_expect "time left" "$(jq '.left_s' <<<"$j")" -le 30
	tb_expect "time left" "$(jq '.left_s' <<<"$j")" -ge 20
	tb_xnf -j status >"$TB_TMP/status.json"
	run -0 "${SHAPE[@]}" validate "$TB_TOP/docs/json" "$TB_TMP/status.json"
	run -0 tb_xnf status
	[[ "$output" == *"trace $id"* ]]

	run -1 tb_xnf -j trace timeout 1
	tb_expect "refused" "$(jq -r '.schema' <<<"$output")" = "xnf/error/1"
	tb_expect "still the first" "$(armed | jq '.id')" = "$id"

	term_trace
	cat "$TB_TMP/trace.out"
	tb_expect "the end" "$(jq -c '[.event, .trace, .traced, .why]' "$TB_TMP/trace.out")" = \
		"[\"end\",$id,0,\"interrupted\"]"
	tb_expect "disarmed" "$(armed)" = "null"
}

@test "the trace of a killed tracer is over once its tracer is gone, and taken over" {
	local id
	trace_bg dst 203.0.113.99 timeout 30
	id=$(armed | jq '.id')
	kill -KILL "$TPID"
	wait "$TPID" || true
	tb_expect "armed, not live" "$(armed | jq -c '[.id, .live]')" = "[$id,false]"
	run -0 tb_xnf -j trace dst 203.0.113.99 timeout 1
	tb_expect "another trace ran" "$(jq -s 'last | .trace' <<<"$output")" -gt "$id"
	tb_expect "disarmed" "$(armed)" = "null"
}

@test "without a bound: count 10 and timeout 60" {
	trace_bg dst 203.0.113.99
	tb_expect "the defaults" "$(armed | jq -c '[.max_packets, .left_s > 50]')" = "[10,true]"
	term_trace
	# A count alone: no deadline.
	trace_bg dst 203.0.113.99 count 4
	tb_expect "count only" "$(armed | jq -c '[.max_packets, .left_s]')" = "[4,null]"
	term_trace
}

@test "the trace's start and end are in the change log, with its command" {
	local id
	run -0 tb_xnf -j trace dst 203.0.113.99 timeout 1
	id=$(jq '.trace' <<<"$output")
	run -0 tb_xnf -j monitor last 2 once
	echo "$output"
	tb_expect "two changes, the start numbered with the trace's id" \
		"$(jq -sc 'map([.seq, .command, .result])' <<<"$output")" = \
		"[[$id,\"trace dst 203.0.113.99 timeout 1\",\"ok\"],[$((id + 1)),\"trace dst 203.0.113.99 timeout 1\",\"ok\"]]"
}

@test "the Prometheus text has the trace's counters" {
	run -0 tb_xnf stats -f prometheus
	grep -qx 'xnf_trace_packets_total 0' <<<"$output"
	grep -qx 'xnf_trace_lost_events_total 0' <<<"$output"
}

# The printer, on what the datapath records (selftests/trace.bats checks
# each NF and outcome against the traffic): a forwarded echo request and
# its reply, in JSON (valid, the chain's steps, the verdict) and in text
# (a block per packet, the end line's counts).
@test "a traced ping: a document per packet with the chain's steps and the verdict, then the end" {
	local j
	tb_routes
	tb_xnf fw add prio 10 allow proto icmp
	trace_bg proto icmp count 2 timeout 20
	tb_ping_ok "$TB_SRC" $TB_SINK4 1
	wait "$TPID"
	cat "$TB_TMP/trace.out"
	cp "$TB_TMP/trace.out" "$TB_TMP/docs.json"
	run -0 "${SHAPE[@]}" validate "$TB_TOP/docs/json" "$TB_TMP/docs.json"
	j=$(jq -sc '.' "$TB_TMP/trace.out")
	tb_expect "two packets, then the end" "$(jq -c 'map(.event)' <<<"$j")" = \
		'["packet","packet","end"]'
	tb_expect "numbered" "$(jq -c '[.[0:2][].packet]' <<<"$j")" = '[1,2]'
	tb_expect "the request" \
		"$(jq -c '.[0] | [.in, .family, .proto, .src, .dst, .icmp_type, .verdict, .action, .out]' <<<"$j")" = \
		"[\"$TB_D0\",\"ipv4\",\"icmp\",\"$TB_SRC4\",\"$TB_SINK4\",\"echo-request\",\"redirect\",\"redirect\",\"$TB_D1\"]"
	tb_expect "its steps" \
		"$(jq -c '.[0].steps | map([.nf, .rule, .default_policy, .route, .via, .dev])' <<<"$j")" = \
		"[[\"firewall\",10,false,null,null,null],[\"l3fwd\",null,false,\"198.51.100.0/24\",\"$TB_SINK4\",\"$TB_D1\"]]"
	tb_expect "the reply" "$(jq -c '.[1] | [.in, .icmp_type, .out]' <<<"$j")" = \
		"[\"$TB_D1\",\"echo-reply\",\"$TB_D0\"]"
	tb_expect "the end" "$(jq -c '.[2] | [.traced, .lost, .why]' <<<"$j")" = \
		'[2,0,"count reached"]'

	# The same in text: a block per packet (header, a line per NF, the
	# verdict), then the end line.
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" trace proto icmp \
		count 1 timeout 20 >"$TB_TMP/trace.txt"
	TPID=$TB_BG_PID
	tb_until "the trace to be armed" is_armed_by "$TPID"
	tb_ping_ok "$TB_SRC" $TB_SINK4 1
	wait "$TPID"
	cat "$TB_TMP/trace.txt"
	tb_expect "four lines: packet, firewall, l3fwd, verdict; the end" \
		"$(wc -l <"$TB_TMP/trace.txt")" -eq 5
	tb_expect "a packet traced" "$(tail -1 "$TB_TMP/trace.txt" | tr -dc '0-9 ' | awk '{ print $2 }')" -eq 1
}
