#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# pktlog.bats - the packet log (docs/logging.md): firewall rules with
# `log [prefix TEXT] [limit rate N/UNIT [burst B packets]]`, and reasons
# sampled by `config set log_reasons`.
# - the syntax: fw add, fw show (text and -j), save and apply read it back,
#   the library's refusals;
# - a flood at a rule with `log limit rate 5/second burst 5 packets`: exact
#   accounting (logged + suppressed == the rule's hits == the frames that
#   reached the DUT), logged within burst + rate * elapsed, every logged
#   record seen by `xnf -j monitor log`, the same number in stats and in
#   Prometheus, and the rule's action kept (allow: every frame arrives;
#   drop: none does, each counted as fw_deny);
# - `xnf monitor log syslog`, as xnf-log.service runs it (under its
#   capability bounding set), writes each record to syslog at priority
#   warning, in a private mount namespace whose /dev/log the test reads;
#   the unit passes systemd-analyze verify;
# - reason sampling: martian sources appear with XNF=reason:martian;
# - a monitor stopped while more records than the ring holds are written
#   says how many it lost, and seen + lost is exactly what was logged.
# Traffic only in the test bed's namespaces (testbed/testbed.bash).

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=180}"

load ../testbed/testbed
load lib/devlog

GEN=${GEN:-$(dirname "$XNF")/xnf-gen}
SHAPE=("/usr/bin/python3" "$TB_TOP/selftests/lib/json_shape.py")

setup_file()
{
	TB_SKIP=$(tb_missing)
	[ -x "$GEN" ] || TB_SKIP="${TB_SKIP:+$TB_SKIP, }no $GEN (run make)"
	export TB_SKIP
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	tb_setup
}

teardown()
{
	# A monitor stopped by a test that failed: it must see its SIGTERM.
	[ -z "${STOPPED:-}" ] || kill -CONT "$STOPPED" 2>/dev/null || true
	tb_teardown
}

# rule_json PRIO JQ: JQ of the rule PRIO of `xnf -j fw show`.
rule_json()
{
	tb_xnf -j fw show | jq -c ".rules[] | select(.prio == $1) | $2"
}

# stats_rule JSON PRIO JQ: JQ of rule PRIO in `xnf -j stats` output JSON.
stats_rule()
{
	jq -e ".fw_hits[] | select(.prio == $2) | $3" <<<"$1"
}

# flood N PORT: N UDP frames to the sink's PORT from s0, at 1000 a second;
# sets ELAPSED (seconds, rounded up, from before the first frame to after
# the last) and SENT (the frames that reached d0: those s0 did not drop
# itself, see tb_link).
flood()
{
	local n=$1 port=$2 t0 t1 drop0
	drop0=$(tb_link "$TB_SRC" s0 tx.dropped)
	t0=$(date +%s%N)
	tb_src "$GEN" s0 count "$n" rate 1000 duration 60 size 64 \
		src $TB_SRC4 dst $TB_SINK4 smac $TB_MAC_S0 dmac $TB_MAC_D0 \
		dport "$port" >/dev/null
	t1=$(date +%s%N)
	ELAPSED=$(((t1 - t0 + 999999999) / 1000000000))
	SENT=$((n - ($(tb_link "$TB_SRC" s0 tx.dropped) - drop0)))
}

# records_at_least FILE N [JQ]: FILE has at least N log events (that JQ
# selects).
records_at_least()
{
	[ "$(jq -c "select(.event == \"log\" and (${3:-true}))" "$1" | wc -l)" -ge "$2" ]
}

# sink_got K0 N: the sink's k0 received N frames more than K0.
sink_got()
{
	[ "$(($(tb_link "$TB_SINK" k0 rx.packets) - $1))" -ge "$2" ]
}

# drops_grew BEFORE REASON N: d0's drops for REASON grew by N since BEFORE
# (xnf -j stats).
drops_grew()
{
	[ "$(tb_delta "$1" "$(tb_xnf -j stats)" d0 ".drop_reasons.$2")" -ge "$3" ]
}

# monitor_start MON: `xnf -j monitor log` in the DUT into MON, and a
# marker rule (prio 1, UDP port 6999, logging) whose packets are sent
# until the monitor prints one: it reads the log from where it was when it
# started, so a record it printed shows it is reading.
monitor_start()
{
	local mon=$1 i j
	tb_xnf fw add prio 1 allow proto udp dport 6999 log prefix "marker: " \
		limit rate 1000/second burst 100 packets || return 1
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" \
		timeout "$TB_TIMEOUT" "$XNF" -j monitor log >"$mon"
	for ((i = 0; i < 100; i++)); do
		flood 1 6999
		for ((j = 0; j < 10; j++)); do
			records_at_least "$mon" 1 '.prio == 1' && return 0
			sleep 0.05
		done
	done
	echo "the monitor printed no record of the marker rule" >&2
	return 1
}

# rule_counted PRIO N: the rule's hits reached N.
rule_counted()
{
	[ "$(rule_json "$1" .packets)" -ge "$2" ]
}

@test "fw add log: shown, saved and applied back; the library's refusals" {
	tb_xnf fw add prio 10 drop proto udp dport 5001 log prefix "udp 5001: " \
		limit rate 5/second burst 3 packets
	tb_xnf fw add prio 20 allow log
	tb_xnf fw add prio 30 allow proto tcp log limit rate 2/minute
	tb_xnf fw add prio 40 allow proto icmp

	run -0 rule_json 10 .log
	[ "$output" = '{"prefix":"udp 5001: ","rate":5,"unit":"second","burst":3}' ]
	# log alone: nft's defaults, 10/second, bursts of 5.
	run -0 rule_json 20 .log
	[ "$output" = '{"prefix":"","rate":10,"unit":"second","burst":5}' ]
	run -0 rule_json 30 .log
	[ "$output" = '{"prefix":"","rate":2,"unit":"minute","burst":5}' ]
	run -0 rule_json 40 .log
	[ "$output" = null ]
	tb_xnf -j fw show >"$TB_TMP/fw.json"
	"${SHAPE[@]}" validate "$TB_TOP/docs/json" "$TB_TMP/fw.json"

	# save prints what apply reads back to the same rules: no change.
	tb_xnf save >"$TB_TMP/saved.conf"
	grep -F 'log prefix "udp 5001: " limit rate 5/second burst 3 packets' \
		"$TB_TMP/saved.conf"
	tb_xnf fw flush
	tb_xnf apply "$TB_TMP/saved.conf"
	run -0 tb_xnf apply check "$TB_TMP/saved.conf"
	run -0 tb_xnf -j apply "$TB_TMP/saved.conf"
	[ "$(jq '.changes | length' <<<"$output")" -eq 0 ]
	tb_xnf -j fw show >"$TB_TMP/fw2.json"
	[ "$(jq -c .rules "$TB_TMP/fw.json" | jq -c 'map(del(.packets, .bytes))')" = \
		"$(jq -c .rules "$TB_TMP/fw2.json" | jq -c 'map(del(.packets, .bytes))')" ]
	# A changed limit is a change of the rule.
	sed -i 's|5/second burst 3|5/second burst 4|' "$TB_TMP/saved.conf"
	run -0 tb_xnf -j apply check "$TB_TMP/saved.conf"
	[ "$(jq '[.changes[] | select(.object == "fw_rule")] | length' <<<"$output")" -ge 1 ]

	# Refused, and nothing changes: a prefix with a quote or too long, a
	# rate of 0 or in an unknown unit, a burst too large, a limit
	# without rate.
	tb_xnf -j fw show >"$TB_TMP/before.json"
	run -1 tb_xnf fw add prio 50 allow log prefix 'a"b'
	run -1 tb_xnf fw add prio 50 allow log prefix "$(printf 'x%.0s' {1..64})"
	run -1 tb_xnf fw add prio 50 allow log limit rate 0/second
	run -1 tb_xnf fw add prio 50 allow log limit rate 5/fortnight
	run -1 tb_xnf fw add prio 50 allow log limit rate 5/second burst 10001 packets
	run -1 tb_xnf fw add prio 50 allow log limit 5/second
	tb_xnf -j fw show >"$TB_TMP/after.json"
	cmp "$TB_TMP/before.json" "$TB_TMP/after.json"

	# The monitor's words: changes or log, syslog only with log, last N
	# only with the changes.
	run -1 tb_xnf monitor log changes once
	run -1 tb_xnf monitor syslog once
	run -1 tb_xnf monitor log last 3 once
	run -0 tb_xnf -j monitor changes last 2 once
	[ "$(jq -sc 'map(.schema) | unique' <<<"$output")" = '["xnf/change/1"]' ]
}

@test "a flood at a rule with log limit rate 5/second: logged + suppressed is every hit, logged within the limit, every record in monitor log, the action kept" {
	local n=600 mon=$TB_TMP/monitor.json st logged suppressed hits k0 prom

	tb_attach_both firewall,l3fwd
	tb_routes
	tb_xnf fw add prio 10 allow proto udp dport 7000 log prefix "flood: " \
		limit rate 5/second burst 5 packets
	tb_xnf fw add prio 20 drop proto udp dport 7001 log prefix "dropped: " \
		limit rate 5/second burst 5 packets
	monitor_start "$mon"

	k0=$(tb_link "$TB_SINK" k0 rx.packets)
	flood $n 7000
	tb_until "the rule's hits" rule_counted 10 $SENT
	st=$(tb_xnf -j stats)
	hits=$(stats_rule "$st" 10 .packets)
	logged=$(stats_rule "$st" 10 .log.logged)
	suppressed=$(stats_rule "$st" 10 .log.suppressed)
	tb_expect "hits: every frame that reached the DUT" "$hits" -eq $SENT
	tb_expect "logged + suppressed" $((logged + suppressed)) -eq "$hits"
	tb_expect "logged: the burst at least" "$logged" -ge 5
	tb_expect "logged: within burst + rate * elapsed" "$logged" -le \
		$((5 + 5 * ELAPSED))
	tb_expect "suppressed: most of the flood" "$suppressed" -gt 0
	# allow: all of them forwarded, logged or not.
	tb_until "the frames at the sink" sink_got "$k0" "$hits"

	# Every logged record reaches the monitor, as it was written.
	tb_until "$logged records in the monitor" records_at_least "$mon" "$logged" '.prio == 10'
	tb_expect "records seen" "$(jq -c 'select(.prio == 10)' "$mon" | wc -l)" -eq "$logged"
	tb_expect "records: the rule" \
		"$(jq -c 'select(.event == "log" and .prio == 10) | [.source, .prio, .prefix, .verdict, .in, .proto, .dport, .src, .dst]' "$mon" | sort -u)" = \
		"[\"rule\",10,\"flood: \",\"allow\",\"d0\",17,7000,\"$TB_SRC4\",\"$TB_SINK4\"]"
	# nf_log's line: the prefix first, the kernel's fields, then xnf's.
	tb_expect "lines" "$(jq -r 'select(.event == "log" and .prio == 10) | .line' "$mon" |
		grep -c "^flood: IN=d0 OUT= MAC=.* SRC=$TB_SRC4 DST=$TB_SINK4 .*PROTO=UDP SPT=1024 DPT=7000 .*XNF=rule:10 allow$")" \
		-eq "$logged"
	"${SHAPE[@]}" validate "$TB_TOP/docs/json" "$mon"

	# Prometheus says what stats says.
	prom=$(tb_xnf stats -f prometheus)
	grep -qx "xnf_fw_rule_logged_packets_total{prio=\"10\"} $logged" <<<"$prom"
	grep -qx "xnf_fw_rule_log_suppressed_packets_total{prio=\"10\"} $suppressed" <<<"$prom"
	tb_xnf -j stats >"$TB_TMP/s.json"
	tb_xnf stats -f prometheus >"$TB_TMP/p.txt"
	python3 "$TB_TOP/selftests/lib/prom_vs_json.py" "$TB_TMP/p.txt" "$TB_TMP/s.json"

	# drop with log: logged, and still dropped, every one as fw_deny.
	st=$(tb_xnf -j stats)
	k0=$(tb_link "$TB_SINK" k0 rx.packets)
	flood 100 7001
	tb_until "the drop rule's hits" rule_counted 20 $SENT
	tb_expect "fw_deny drops" "$(tb_delta "$st" "$(tb_xnf -j stats)" d0 .drop_reasons.fw_deny)" -eq $SENT
	tb_expect "nothing at the sink" "$(($(tb_link "$TB_SINK" k0 rx.packets) - k0))" -eq 0
	st=$(tb_xnf -j stats)
	logged=$(stats_rule "$st" 20 .log.logged)
	tb_expect "dropped and logged + suppressed" \
		$((logged + $(stats_rule "$st" 20 .log.suppressed))) -eq $SENT
	tb_until "the drop rule's records" records_at_least "$mon" "$logged" '.prio == 20'
	tb_expect "drop records" \
		"$(jq -c 'select(.event == "log" and .prio == 20) | [.verdict, .reason]' "$mon" | sort -u)" = \
		'["drop","fw_deny"]'
}

@test "a rule without log writes no record and counts nothing" {
	local mon=$TB_TMP/monitor.json

	tb_attach_both firewall,l3fwd
	tb_routes
	tb_xnf fw add prio 10 allow proto udp dport 7000
	tb_xnf fw add prio 20 allow proto udp dport 7001 log
	monitor_start "$mon"
	flood 50 7000
	tb_until "the rule's hits" rule_counted 10 $SENT
	# The logging rule's one packet after: its record follows any other.
	flood 1 7001
	tb_until "the logging rule's record" records_at_least "$mon" 1 '.prio == 20'
	tb_expect "records" "$(jq -c 'select(.event == "log" and .prio != 1) | .prio' "$mon" | sort -u)" = 20
	run -0 tb_xnf -j stats
	[ "$(stats_rule "$output" 10 .log)" = null ]
}

@test "xnf-log.service: systemd-analyze verify; monitor log syslog under its capabilities sends every record to syslog at priority warning" {
	local u=$TB_TMP/units unit=$TB_TOP/dist/systemd/xnf-log.service caps cmd logged

	command -v systemd-analyze
	mkdir "$u"
	sed "s|/usr/sbin/xnf|$XNF|" "$unit" >"$u/xnf-log.service"
	run -0 env SYSTEMD_UNIT_PATH="$u:" systemd-analyze verify --man=no \
		"$u/xnf-log.service"
	[ -z "$output" ]

	tb_attach_both firewall,l3fwd
	tb_routes
	tb_xnf fw add prio 1 allow proto udp dport 6999 log prefix "marker: "
	tb_xnf fw add prio 10 allow proto udp dport 7000 log prefix "to-syslog: " \
		limit rate 100/second burst 20 packets
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr 'A-Z' 'a-z' |
		sed -e 's/cap_/+/g' -e 's/ /,/g')
	[ "$caps" = +bpf ]
	cmd=$(sed -n 's/^ExecStart=//p' "$unit" | sed "s|/usr/sbin/xnf|$XNF|")
	[ "$cmd" = "$XNF monitor log syslog" ]
	export TB_TMP TB_TOP TB_TIMEOUT TB_DUT TB_SRC XNF XNF_PIN_ROOT GEN caps cmd
	export TB_SRC4 TB_SINK4 TB_MAC_S0 TB_MAC_D0
	run -0 in_devlog_ns '
		# shellcheck disable=SC2086 # the command line, split as systemd does
		ip netns exec "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" \
			setpriv --no-new-privs --bounding-set="-all,$caps" -- \
			timeout "$TB_TIMEOUT" $cmd &
		mon=$!
		for i in $(seq 100); do
			ip netns exec "$TB_SRC" "$GEN" s0 count 1 rate 100 \
				duration 30 size 64 src $TB_SRC4 dst $TB_SINK4 \
				smac $TB_MAC_S0 dmac $TB_MAC_D0 dport 6999 >/dev/null
			sleep 0.2
			! grep -q " XNF=rule:1 " "$TB_TMP/syslog.txt" || break
		done
		ip netns exec "$TB_SRC" "$GEN" s0 count 10 rate 100 duration 30 \
			size 64 src $TB_SRC4 dst $TB_SINK4 smac $TB_MAC_S0 \
			dmac $TB_MAC_D0 dport 7000 >/dev/null
		for i in $(seq 200); do
			[ "$(grep -c "to-syslog: " "$TB_TMP/syslog.txt")" -ge 10 ] && break
			sleep 0.05
		done
		kill "$mon"
		wait "$mon" || true'
	cat "$TB_TMP/syslog.txt"
	logged=$(tb_xnf -j stats | jq '.fw_hits[] | select(.prio == 10) | .log.logged')
	[ "$logged" -eq 10 ]
	# <PRI>: facility daemon (3) * 8 + severity warning (4); the tag xnf
	# with its pid; the nf_log line.
	run -0 grep -cE "^<28>.* xnf\[[0-9]+\]: to-syslog: IN=d0 OUT= .*SRC=$TB_SRC4 DST=$TB_SINK4 .*DPT=7000 .*XNF=rule:10 allow$" \
		"$TB_TMP/syslog.txt"
	[ "$output" -eq "$logged" ]
}

@test "log_reasons: martian drops are logged with XNF=reason:martian, other drops are not" {
	local mon=$TB_TMP/monitor.json st

	tb_attach_both firewall,l3fwd
	tb_routes
	tb_xnf config set log_reasons martian
	tb_xnf config set log_reasons_limit 1000/second
	monitor_start "$mon"
	st=$(tb_xnf -j stats)
	tb_src "$GEN" s0 count 20 rate 200 duration 30 size 64 src 127.0.0.1 \
		dst $TB_SINK4 smac $TB_MAC_S0 dmac $TB_MAC_D0 dport 7002 >/dev/null
	# A drop for another reason: no route.
	tb_src "$GEN" s0 count 5 rate 200 duration 30 size 64 src $TB_SRC4 \
		dst 203.0.113.7 smac $TB_MAC_S0 dmac $TB_MAC_D0 dport 7003 >/dev/null
	tb_until "the martian drops" drops_grew "$st" martian 20
	tb_until "20 records" records_at_least "$mon" 20 '.source == "reason"'
	sleep 0.3
	tb_expect "records: martian only" \
		"$(jq -c 'select(.event == "log" and .prio != 1) | [.source, .reason, .verdict, .src]' "$mon" | sort -u)" = \
		'["reason","martian","drop","127.0.0.1"]'
	tb_expect "records" "$(jq -c 'select(.source == "reason")' "$mon" | wc -l)" -eq 20
	tb_expect "lines" "$(jq -r 'select(.source == "reason") | .line' "$mon" |
		grep -c ' XNF=reason:martian drop$')" -eq 20
	run -0 tb_xnf -j stats
	[ "$(jq -c '.log_reasons' <<<"$output")" = '[{"reason":"martian","logged":20,"suppressed":0}]' ]
	run -0 tb_xnf stats -f prometheus
	grep -qx 'xnf_reason_logged_packets_total{reason="martian"} 20' <<<"$output"
}

@test "a monitor that falls more than the ring behind says how many records it lost: seen + lost is every record logged" {
	local mon=$TB_TMP/monitor.json pid logged seen lost

	tb_attach_both firewall,l3fwd
	tb_routes
	tb_xnf fw add prio 10 allow proto udp dport 7000 log \
		limit rate 1000000/second burst 10000 packets
	monitor_start "$mon"
	# The monitor is timeout's child: stop it, not timeout.
	pid=$(ps -o pid= --ppid "$TB_BG_PID" | tr -d ' ')
	[ -n "$pid" ]
	STOPPED=$pid
	kill -STOP "$pid"
	# More records than the ring's 1024 slots, while nobody reads.
	flood 3000 7000
	tb_until "the rule's hits" rule_counted 10 $SENT
	kill -CONT "$pid"
	logged=$(tb_xnf -j stats | jq '.fw_hits[] | select(.prio == 10) | .log.logged')
	tb_expect "every hit logged" "$logged" -eq $SENT
	tb_until "the records the ring still held" records_at_least "$mon" 1024 '.prio == 10'
	sleep 0.5
	seen=$(jq -c 'select(.event == "log" and .prio == 10)' "$mon" | wc -l)
	lost=$(jq -s 'map(select(.event == "lost") | .count) | add // 0' "$mon")
	tb_expect "lost" "$lost" -ge $((logged - 1024))
	tb_expect "seen + lost" $((seen + lost)) -eq "$logged"
	"${SHAPE[@]}" validate "$TB_TOP/docs/json" "$mon"
}
