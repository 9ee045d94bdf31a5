#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# monitor.bats - who changed what: every change to the instance goes to its
# change log, which `xnf monitor` prints as it happens, and to syslog.
# - monitor started before the instance exists prints, in order, each
#   command that changed it (or failed trying), with its result, pid and
#   uid; lines that only read are not there; a batch's lines are there one
#   by one; a destroy and a new instance are followed;
# - `last N`, `once`, and changes the log no longer holds counted as lost;
# - syslog: xnf's messages reach /dev/log with the command and a priority
#   that tells a failure (err) from a change (notice). The test runs xnf in
#   a private mount namespace whose /dev has a socket the test reads at
#   /dev/log, so nothing of the host's /dev changes.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=180}"

load ../testbed/testbed
load lib/devlog

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	tb_setup
}

teardown()
{
	tb_teardown
}

# monitor_start FILE [ARGS...]: xnf -j monitor in the DUT into FILE
# (killed by tb_teardown).
monitor_start()
{
	local file=$1
	shift
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" \
		timeout "$TB_TIMEOUT" "$XNF" -j monitor "$@" >"$file"
}

# lines_at_least FILE N JQ: FILE has at least N lines that JQ selects.
lines_at_least()
{
	[ "$(jq -c "select($3)" "$1" | wc -l)" -ge "$2" ]
}

# changes FILE: [command, result] of each change line of FILE, one JSON
# array per line.
changes()
{
	jq -c 'select(.event == "change") | [.command, .result]' "$1"
}

@test "monitor prints every change as it happens, with its result and who made it, and follows a new instance" {
	local mon=$TB_TMP/monitor.json

	monitor_start "$mon"
	tb_until "the monitor saying there is no instance" \
		lines_at_least "$mon" 1 '.event == "instance" and .present == false'

	tb_xnf attach d0 chain l3fwd
	tb_xnf attach d1 chain l3fwd
	tb_xnf route add 192.0.2.0/24 via $TB_SINK4 dev d1 lladdr $TB_MAC_K0
	# Reaches the instance and is refused there: no such route.
	run -1 tb_xnf route del 203.0.113.0/24
	tb_xnf fw add prio 10 drop proto udp dport 5001
	tb_xnf config set no_route drop
	tb_xnf chain set d0 firewall,l3fwd
	tb_xnf stats reset
	# Reading changes nothing: none of these is logged.
	tb_xnf status >/dev/null
	tb_xnf route show >/dev/null
	tb_xnf stats >/dev/null
	tb_xnf save >"$TB_TMP/saved.conf"
	printf '%s\n' "route add 198.51.100.0/25 blackhole" "route show" \
		"route add 198.51.100.128/25 unreachable" | tb_xnf -b - >/dev/null
	tb_xnf apply "$TB_TMP/saved.conf"

	tb_until "the monitor printing 11 changes" \
		lines_at_least "$mon" 11 '.event == "change"'
	sleep 0.5 # nothing more comes
	run -0 changes "$mon"
	printf '%s\n' "$output"
	diff - <(printf '%s\n' "$output") <<EOF
["attach d0 chain l3fwd","ok"]
["attach d1 chain l3fwd","ok"]
["route add 192.0.2.0/24 via $TB_SINK4 dev d1 lladdr $TB_MAC_K0","ok"]
["route del 203.0.113.0/24","failed"]
["fw add prio 10 drop proto udp dport 5001","ok"]
["config set no_route drop","ok"]
["chain set d0 firewall,l3fwd","ok"]
["stats reset","ok"]
["route add 198.51.100.0/25 blackhole","ok"]
["route add 198.51.100.128/25 unreachable","ok"]
["apply $TB_TMP/saved.conf","ok"]
EOF
	# Numbered from 1 without a gap; each from its own process, by root;
	# the failure says why.
	tb_expect "sequence" "$(jq -s -c '[.[] | select(.event == "change") | .seq]' "$mon")" = \
		'[1,2,3,4,5,6,7,8,9,10,11]'
	tb_expect "uids" "$(jq -s -c '[.[] | select(.event == "change") | .uid] | unique' "$mon")" = '[0]'
	tb_expect "pids of the batch's lines" \
		"$(jq -s '[.[] | select(.event == "change") | select(.seq == 9 or .seq == 10) | .pid] | unique | length' "$mon")" -eq 1
	tb_expect "pids" "$(jq -s '[.[] | select(.event == "change") | .pid] | unique | length' "$mon")" -eq 10
	jq -s -e '[.[] | select(.seq == 4)][0].message | length > 0' "$mon"
	# The apply found the saved state minus the batch's two routes.
	jq -s -e '[.[] | select(.seq == 11)][0].message | test("routes 2")' "$mon"

	# A new instance: said, and followed from its first change.
	tb_xnf detach d0
	tb_xnf detach d1
	tb_xnf destroy
	tb_until "the monitor saying the instance is gone" \
		lines_at_least "$mon" 2 '.event == "instance" and .present == false'
	tb_xnf attach d0 chain l2fwd
	tb_until "the monitor following the new instance" \
		lines_at_least "$mon" 1 '.event == "change" and .command == "attach d0 chain l2fwd"'
	tb_expect "the new instance's first change" \
		"$(jq -c 'select(.command == "attach d0 chain l2fwd") | [.seq, .result]' "$mon")" = '[1,"ok"]'
	# Found when the first attach made it, and when the second did.
	tb_expect "found twice" "$(jq -c 'select(.event == "instance" and .present)' "$mon" | wc -l)" -eq 2
}

@test "monitor last N and once print what the log holds, and count what it no longer holds as lost" {
	local i

	tb_xnf attach d0 chain l3fwd
	# 300 changes in one batch: the log keeps the last 256 of 301.
	for ((i = 0; i < 300; i++)); do
		echo "route add 10.$((i / 256)).$((i % 256)).0/24 blackhole"
	done | tb_xnf -b -

	run -0 tb_xnf -j monitor once
	tb_expect "once: the whole log" "$(jq -s '[.[] | select(.event == "change")] | length' <<<"$output")" -eq 256
	tb_expect "once: the last" "$(jq -s -c '[.[] | select(.event == "change")] | [first.seq, last.seq]' <<<"$output")" = '[46,301]'
	tb_expect "once: nothing lost" "$(jq -s '[.[] | select(.event == "lost")] | length' <<<"$output")" -eq 0

	run -0 tb_xnf -j monitor last 3 once
	tb_expect "last 3" "$(jq -s -c '[.[] | .command]' <<<"$output")" = \
		'["route add 10.1.41.0/24 blackhole","route add 10.1.42.0/24 blackhole","route add 10.1.43.0/24 blackhole"]'

	run -0 tb_xnf -j monitor last 301 once
	tb_expect "lost" "$(jq -s -c '[.[] | select(.event == "lost") | [.first_seq, .count]]' <<<"$output")" = '[[1,45]]'
	tb_expect "then the rest" "$(jq -s '[.[] | select(.event == "change")] | length' <<<"$output")" -eq 256

	# Text: one line per change, the last one the last route.
	run -0 tb_xnf monitor last 1 once
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == *"#301 "*"route add 10.1.43.0/24 blackhole: ok" ]]
}

@test "syslog gets every change with its command, and failures at priority err" {
	export TB_TMP TB_TOP TB_TIMEOUT TB_DUT XNF XNF_PIN_ROOT TB_SINK4 TB_MAC_K0
	run -0 in_devlog_ns '
		x() { ip netns exec "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" "$@"; }
		x attach d1 chain l3fwd
		x route add 192.0.2.0/24 via $TB_SINK4 dev d1 lladdr $TB_MAC_K0
		! x route del 203.0.113.0/24
		x route show >/dev/null
		x detach d1
		sleep 0.2'
	cat "$TB_TMP/syslog.txt"
	# <PRI> is facility daemon (3) * 8 + severity: notice 5, err 3.
	# Four changes; route show only read.
	run -0 grep -c '' "$TB_TMP/syslog.txt"
	[ "$output" -eq 4 ]
	grep -q "^<29>.* xnf\[[0-9]*\]: .*attach d1 chain l3fwd" "$TB_TMP/syslog.txt"
	grep -q "^<29>.* xnf\[[0-9]*\]: .*route add 192.0.2.0/24 via $TB_SINK4 dev d1 lladdr $TB_MAC_K0" "$TB_TMP/syslog.txt"
	grep -q "^<27>.* xnf\[[0-9]*\]: .*route del 203.0.113.0/24" "$TB_TMP/syslog.txt"
	grep -q "^<29>.* xnf\[[0-9]*\]: .*detach d1" "$TB_TMP/syslog.txt"
}
