#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# exporter.bats - the counters for Prometheus: `xnf stats -f prometheus`
# and `xnf exporter`, on the test bed (testbed/testbed.bash):
# - both outputs pass Debian's own checker (promtool check metrics) and
#   carry the values `xnf -j stats` shows, on a test bed gone idle after
#   traffic (selftests/lib/prom_vs_json.py compares them);
# - an AF_XDP worker's counters, busy/idle time and batch histogram too;
# - the exporter is scraped by a real HTTP client (curl), never takes the
#   instance's lock, serves xnf_up 0 while the instance is destroyed and
#   the counters again once it is back, without a restart;
# - it answers a bad request with its status, and a client that sends
#   nothing delays the next scrape by the bounded request timeout only;
# - it serves connections at once: a scrape is answered while 100 slow
#   clients are connected, and past its bound on connections;
# - xnf-exporter.service passes systemd-analyze verify, and its command
#   serves under the unit's capability bounding set (CAP_BPF only).
# The exporter listens on 127.0.0.1 in the DUT's namespace: no port of the
# host is used.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=180}"

load ../testbed/testbed

PORT=10076 # the default of xnf exporter
URL=http://127.0.0.1:$PORT

setup_file()
{
	TB_SKIP=$(tb_missing)
	command -v promtool >/dev/null || TB_SKIP="${TB_SKIP:+$TB_SKIP, }no promtool (Debian package prometheus)"
	command -v curl >/dev/null || TB_SKIP="${TB_SKIP:+$TB_SKIP, }no curl"
	export TB_SKIP
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	tb_testbed_up firewall,l3fwd,l2fwd
}

teardown()
{
	tb_teardown
}

# scrape [PATH]: the exporter's answer body on stdout, curl's status.
scrape()
{
	tb_dut curl -sS --fail --max-time 20 "$URL${1:-/metrics}"
}

http_code()
{
	tb_dut curl -sS -o /dev/null --max-time 20 -w '%{http_code}' "$@"
}

# exporter_start [ARGS...]: xnf exporter in the DUT (killed by
# tb_teardown), once it answers.
exporter_start()
{
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" \
		timeout "$TB_TIMEOUT" "$XNF" exporter "$@" 2>"$TB_TMP/exporter.log"
	EXPORTER_PID=$TB_BG_PID
	tb_until "the exporter on port $PORT" scrape / >/dev/null
}

# The text without the exporter's own lines (its scrape duration).
counters_only()
{
	grep -v '^xnf_exporter_\|^# [A-Z]* xnf_exporter_'
}

# idle_snapshot: the test bed's counters no longer move: `xnf -j stats`
# twice the same (taken before and after the reads that are compared).
same_stats()
{
	tb_stats_json | jq -S 'del(.time, .timestamp)' >"$TB_TMP/a.json" &&
		sleep 0.2 &&
		tb_stats_json | jq -S 'del(.time, .timestamp)' >"$TB_TMP/b.json" &&
		cmp -s "$TB_TMP/a.json" "$TB_TMP/b.json"
}

@test "stats -f prometheus and the exporter pass promtool and equal xnf -j stats on an idle test bed" {
	local n

	tb_xnf fw add prio 10 drop proto udp dport 5001
	tb_xnf fw add prio 20 allow proto icmp
	tb_ping_ok "$TB_SRC" $TB_SINK4 10
	tb_ping_ok "$TB_SRC" $TB_SINK6 10
	tb_udp_send "$TB_SRC" $TB_SINK4 5001 7
	exporter_start

	# Idle: the reads below are compared with stats taken around them.
	for n in 1 2 3 4 5; do
		tb_until "idle counters" same_stats
		tb_xnf stats -f prometheus >"$TB_TMP/once.txt"
		scrape >"$TB_TMP/scrape.txt"
		tb_stats_json >"$TB_TMP/stats.json"
		tb_xnf -j ct stats >"$TB_TMP/ct.json"
		tb_stats_json | jq -S 'del(.time, .timestamp)' >"$TB_TMP/c.json"
		cmp -s "$TB_TMP/a.json" "$TB_TMP/c.json" && break
	done
	cmp "$TB_TMP/a.json" "$TB_TMP/c.json"

	run -0 promtool check metrics <"$TB_TMP/once.txt"
	run -0 promtool check metrics <"$TB_TMP/scrape.txt"
	run -0 python3 "$TB_TOP/selftests/lib/prom_vs_json.py" "$TB_TMP/once.txt" \
		"$TB_TMP/stats.json" "$TB_TMP/ct.json"
	run -0 python3 "$TB_TOP/selftests/lib/prom_vs_json.py" "$TB_TMP/scrape.txt" \
		"$TB_TMP/stats.json" "$TB_TMP/ct.json"
	# The connection table's metrics, each with its type.
	for n in entries max; do
		grep -qx "# TYPE xnf_ct_$n gauge" "$TB_TMP/scrape.txt"
	done
	for n in created expired deleted flushed evicted insert_failed invalid \
		related searched found; do
		grep -qx "# TYPE xnf_ct_${n}_total counter" "$TB_TMP/scrape.txt"
	done
	grep -qx "xnf_ct_max $(jq .max "$TB_TMP/ct.json")" "$TB_TMP/scrape.txt"
	# One code path: the same text but the exporter's own lines.
	diff "$TB_TMP/once.txt" <(counters_only <"$TB_TMP/scrape.txt")

	# Not vacuous: the traffic is there, where it happened.
	grep -qx 'xnf_up 1' "$TB_TMP/scrape.txt"
	[ "$(tb_chain "$(cat "$TB_TMP/stats.json")" d0 redirect)" -ge 20 ]
	grep -q '^xnf_dropped_packets_total{interface="d0",reason="fw_deny"} 7$' "$TB_TMP/scrape.txt"
	grep -q '^xnf_fw_rule_matched_packets_total{prio="10",rule="prio 10 drop proto udp dport 5001"} 7$' \
		"$TB_TMP/scrape.txt"
	grep -q '^xnf_napi_batch_size_packets_bucket{interface="d0",le="+Inf"} [1-9]' "$TB_TMP/scrape.txt"
	# Ethernet 14 + IPv4 20 + UDP 8 + "<i>\n" 2 (i < 10): 44 bytes each.
	grep -q '^xnf_dropped_bytes_total{interface="d0",reason="fw_deny"} 308$' "$TB_TMP/scrape.txt"
	grep -q '^xnf_xmit_sent_packets_total{interface="d1"} [1-9]' "$TB_TMP/scrape.txt"
	grep -q '^# TYPE xnf_napi_batch_size_packets histogram$' "$TB_TMP/scrape.txt"
}

worker_state()
{
	tb_xnf -j status d0 | jq -r '.workers[0].state // "none"'
}

# d0's worker runs, or its process is gone.
worker_settled()
{
	[ "$(worker_state)" = running ] || ! kill -0 "$WPID" 2>/dev/null
}

@test "an AF_XDP worker's counters, busy and idle time and batch histogram equal xnf -j stats" {
	tb_xnf chain set d0 xsk
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" worker d0 \
		nf l3fwd egress d1 duration 120
	WPID=$TB_BG_PID
	tb_until "the worker to run" worker_settled
	[ "$(worker_state)" = running ]
	tb_ping_ok "$TB_SRC" $TB_SINK4 10
	exporter_start
	scrape >"$TB_TMP/running.txt"
	grep -q '^xnf_worker_up{interface="d0",queue="0"} 1$' "$TB_TMP/running.txt"

	# Stopped, its counters stay and no longer move: compare them.
	tb_bg_stop "$WPID"
	[ "$(worker_state)" = stopped ]
	tb_until "idle counters" same_stats
	scrape >"$TB_TMP/scrape.txt"
	tb_stats_json >"$TB_TMP/stats.json"
	run -0 promtool check metrics <"$TB_TMP/scrape.txt"
	run -0 python3 "$TB_TOP/selftests/lib/prom_vs_json.py" "$TB_TMP/scrape.txt" "$TB_TMP/stats.json"
	grep -q '^xnf_worker_up{interface="d0",queue="0"} 0$' "$TB_TMP/scrape.txt"
	grep -q '^xnf_worker_received_packets_total{interface="d0",queue="0"} 10$' "$TB_TMP/scrape.txt"
	grep -q '^xnf_worker_busy_seconds_total{interface="d0",queue="0"} 0\.[0-9]*[1-9]' "$TB_TMP/scrape.txt"
	grep -q '^xnf_worker_batch_size_packets_bucket{interface="d0",queue="0",le="+Inf"} [1-9]' "$TB_TMP/scrape.txt"
}

@test "the exporter takes no lock and survives destroy and attach between two scrapes" {
	exporter_start
	scrape >"$TB_TMP/1.txt"
	grep -qx 'xnf_up 1' "$TB_TMP/1.txt"

	# A writer holding the instance's lock does not delay a scrape
	# (it holds it longer than curl may take). One process holds it,
	# so that stopping it releases it.
	tb_bg "$TB_DUT" bash -c 'exec 9<"$1" && flock -x 9 && exec sleep "$2"' \
		_ "$XNF_PIN_ROOT" "$TB_TIMEOUT"
	tb_until "the lock held" bash -c "! flock -n -x '$XNF_PIN_ROOT' true"
	scrape | grep -qx 'xnf_up 1'
	tb_bg_stop "$TB_BG_PID"

	tb_xnf detach d0
	tb_xnf detach d1
	tb_xnf destroy
	scrape >"$TB_TMP/2.txt"
	grep -qx 'xnf_up 0' "$TB_TMP/2.txt"
	! grep -q interface= "$TB_TMP/2.txt"
	run -0 promtool check metrics <"$TB_TMP/2.txt"

	tb_attach_both l3fwd
	tb_routes
	tb_ping_ok "$TB_SRC" $TB_SINK4 3
	scrape >"$TB_TMP/3.txt"
	grep -qx 'xnf_up 1' "$TB_TMP/3.txt"
	grep -q '^xnf_interface_info{interface="d0",ifindex="[0-9]*",chain="l3fwd",fused="0"} 1$' "$TB_TMP/3.txt"
	grep -q '^xnf_nf_redirected_packets_total{interface="d0",nf="chain"} [1-9]' "$TB_TMP/3.txt"
	# The same process served all three.
	kill -0 "$EXPORTER_PID"
	grep -q 'serving xnf_up 0' "$TB_TMP/exporter.log"
}

@test "the exporter answers bad requests with their status and bounds a silent client" {
	local big

	exporter_start
	[ "$(http_code "$URL/nothing")" = 404 ]
	[ "$(http_code -X POST "$URL/metrics")" = 405 ]
	big=$(head -c 9000 /dev/zero | tr '\0' a)
	[ "$(http_code -H "X-Big: $big" "$URL/metrics")" = 431 ]
	[ "$(http_code -I "$URL/metrics")" = 200 ]

	# A client that connects and sends nothing holds a connection for
	# the request timeout at most; a scrape is served meanwhile.
	tb_bg "$TB_DUT" bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT; sleep $TB_TIMEOUT"
	scrape | grep -qx 'xnf_up 1'
	kill -0 "$EXPORTER_PID"

	# listen: another address; a bad one is refused at start.
	run -1 tb_xnf exporter listen 127.0.0.1
	run -1 tb_xnf exporter listen nowhere:80
	run -1 tb_xnf exporter listen "127.0.0.1:$PORT" # taken
	run -1 tb_xnf stats -f prometheus watch 1
	run -1 tb_xnf stats -f json
}

# conns_at_least N: the exporter's port has N established connections.
conns_at_least()
{
	[ "$(tb_dut ss -Htn state established "( sport = :$PORT )" | wc -l)" -ge "$1" ]
}

# exporter_sockets: the sockets the exporter holds (its listener and its
# connections); the xnf that `timeout` started.
exporter_sockets()
{
	local pid
	pid=$(pgrep -P "$EXPORTER_PID" -x xnf) || return 1
	find "/proc/$pid/fd" -lname 'socket:*' | wc -l
}

sockets_at_least() { [ "$(exporter_sockets)" -ge "$1" ]; }

# slow_clients N: N clients that never finish a request and connect again
# when cut off (selftests/lib/slow_clients.py), for TB_TIMEOUT at most;
# sets SLOW_PID, stopped by the test (and by tb_teardown).
slow_clients()
{
	tb_bg "$TB_DUT" python3 "$TB_TOP/selftests/lib/slow_clients.py" \
		127.0.0.1 "$PORT" "$1" "$TB_TIMEOUT"
	SLOW_PID=$TB_BG_PID
}

# Connections are served at once, each bounded in time: a scrape is
# answered while 100 slow clients are connected; past the bound on
# connections (256, MAX_CONNS in cli/cmd_exporter.c) the oldest that is
# still reading its request gives way, so a scrape is answered still and
# the exporter holds no more than the bound.
@test "a scrape is answered while 100 slow clients are connected, and past the bound on connections" {
	local a b n

	exporter_start
	slow_clients 100
	a=$SLOW_PID
	tb_until "100 slow clients connected" conns_at_least 100
	scrape | grep -qx 'xnf_up 1'

	slow_clients 200
	b=$SLOW_PID
	tb_until "the exporter at its bound" sockets_at_least 257
	scrape | grep -qx 'xnf_up 1'
	for _ in 1 2 3 4 5; do
		n=$(exporter_sockets)
		tb_expect "sockets held (the listener and 256 connections at most)" "$n" -le 257
		sleep 0.1
	done
	tb_bg_stop "$a"
	tb_bg_stop "$b"
	kill -0 "$EXPORTER_PID"
	scrape | grep -qx 'xnf_up 1'
}

# The unit's line KEY= of dist/systemd/xnf-exporter.service.
unit_key()
{
	sed -n "s/^$1=//p" "$TB_TOP/dist/systemd/xnf-exporter.service"
}

@test "xnf-exporter.service: systemd-analyze verify; serves under the unit's capabilities" {
	local caps cmd u=$TB_TMP/units

	mkdir "$u"
	sed "s|/usr/sbin/xnf|$XNF|" "$TB_TOP/dist/systemd/xnf-exporter.service" \
		>"$u/xnf-exporter.service"
	run -0 env SYSTEMD_UNIT_PATH="$u:" systemd-analyze verify --man=no \
		"$u/xnf-exporter.service"
	[ -z "$output" ]
	grep -qx 'After=xnf.service network.target' "$u/xnf-exporter.service"

	caps=$(unit_key CapabilityBoundingSet | tr 'A-Z' 'a-z' | sed -e 's/cap_/+/g' -e 's/ /,/g')
	[ "$caps" = +bpf ]
	cmd=$(unit_key ExecStart | sed -e "s|/usr/sbin/xnf|$XNF|" -e 's/\$XNF_EXPORTER_ARGS//')
	# shellcheck disable=SC2086 # the command line, split as systemd does
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" setpriv --no-new-privs \
		--bounding-set="-all,$caps" -- timeout "$TB_TIMEOUT" $cmd
	tb_until "the exporter on port $PORT" scrape / >/dev/null
	scrape >"$TB_TMP/s.txt"
	grep -qx 'xnf_up 1' "$TB_TMP/s.txt"
	grep -q '^xnf_interface_info{interface="d1",' "$TB_TMP/s.txt"
}
