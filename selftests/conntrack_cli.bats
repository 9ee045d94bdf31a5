#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# conntrack_cli.bats - the connection table as operators see it (`xnf ct
# show`, `flush`, `stats`), on the test bed (testbed/testbed.bash) with
# the chain conntrack,firewall,l3fwd on both ports: real traffic makes the
# entries, which `xnf -j ct show` lists with the tuple of the direction
# that opened them and each direction's counters; a flush by a filter
# removes exactly the entries it matches and counts them.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=120}"

load ../testbed/testbed

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	tb_testbed_up conntrack,firewall,l3fwd
}

teardown()
{
	tb_teardown
}

# ct_json [FILTER...]: `xnf -j ct show FILTER`.
ct_json()
{
	tb_xnf -j ct show "$@"
}

# ct_count JQ_FILTER [FILTER...]: the entries of `ct show FILTER` the jq
# condition holds for.
ct_count()
{
	local cond=$1
	shift
	ct_json "$@" | jq "[.entries[] | select($cond)] | length"
}

@test "ct show lists the connections traffic made, from the side that opened them, with each direction's packets" {
	local udp icmp

	# Three datagrams out and back, four echo requests answered.
	[ "$(tb_udp_echo "$TB_SRC" 4 $TB_SINK4 5353 3)" -eq 3 ]
	tb_ping_ok "$TB_SRC" $TB_SINK4 4

	udp=$(ct_json proto udp dport 5353 | jq -c '.entries')
	echo "$udp"
	tb_expect "one UDP connection" "$(jq length <<<"$udp")" -eq 1
	tb_expect "UDP original direction" \
		"$(jq -c '.[0].orig | [.src, .dst, .dport, .packets]' <<<"$udp")" = \
		"[\"$TB_SRC4\",\"$TB_SINK4\",5353,3]"
	tb_expect "UDP reply direction" \
		"$(jq -c '.[0].reply | [.src, .dst, .sport, .packets]' <<<"$udp")" = \
		"[\"$TB_SINK4\",\"$TB_SRC4\",5353,3]"
	tb_expect "UDP replied" "$(jq '.[0].unreplied' <<<"$udp")" = false
	tb_expect "UDP ports mirrored" \
		"$(jq '.[0].orig.sport == .[0].reply.dport' <<<"$udp")" = true
	tb_expect "UDP timeout left" "$(jq '.[0].timeout' <<<"$udp")" -le 120

	icmp=$(ct_json proto icmp | jq -c '.entries')
	echo "$icmp"
	tb_expect "one echo connection" "$(jq length <<<"$icmp")" -eq 1
	tb_expect "echo tuple and counters" \
		"$(jq -c '.[0] | [.orig.src, .orig.dst, .orig.packets, .reply.packets]' <<<"$icmp")" = \
		"[\"$TB_SRC4\",\"$TB_SINK4\",4,4]"
	# Opened by the sink: the same filters from its side find nothing.
	tb_expect "src is the original direction's" \
		"$(ct_count true src $TB_SINK4)" -eq 0
	tb_expect "addr is either side's" "$(ct_count true addr $TB_SINK4)" -eq 2
}

@test "ct flush by a filter removes exactly the entries it matches, and counts them" {
	local before flushed

	[ "$(tb_udp_echo "$TB_SRC" 4 $TB_SINK4 5353 2)" -eq 2 ]
	[ "$(tb_udp_echo "$TB_SRC" 6 $TB_SINK6 5354 2)" -eq 2 ]
	tb_ping_ok "$TB_SRC" $TB_SINK4 2
	tb_ping_ok "$TB_SRC" $TB_SINK6 2
	before=$(ct_json | jq '.entries | length')
	tb_expect "four connections" "$before" -ge 4

	# IPv6's only: both of them.
	flushed=$(tb_xnf -j ct flush family inet6 | jq .flushed)
	tb_expect "flushed inet6" "$flushed" -eq 2
	tb_expect "no inet6 left" "$(ct_count true family inet6)" -eq 0
	tb_expect "inet kept" "$(ct_count true family inet)" -eq $((before - 2))
	tb_expect "counted" "$(tb_xnf -j ct stats | jq .flushed)" -eq 2

	# A filter that matches nothing removes nothing.
	tb_expect "nothing flushed" \
		"$(tb_xnf -j ct flush proto udp dport 9 | jq .flushed)" -eq 0
	tb_expect "all kept" "$(ct_count true)" -eq $((before - 2))

	# The rest, and the table is empty.
	tb_expect "flushed the rest" "$(tb_xnf -j ct flush | jq .flushed)" \
		-eq $((before - 2))
	tb_expect "empty" "$(ct_count true)" -eq 0
	tb_expect "stats agree" "$(tb_xnf -j ct stats | jq '[.entries, .flushed]' -c)" \
		= "[0,$before]"
}

@test "ct stats counts what the table made: created, live entries, no eviction in a large table" {
	[ "$(tb_udp_echo "$TB_SRC" 4 $TB_SINK4 5353 2)" -eq 2 ]
	tb_ping_ok "$TB_SRC" $TB_SINK6 2
	tb_xnf -j ct stats >"$TB_TMP/ct-stats.json"
	cat "$TB_TMP/ct-stats.json"
	tb_expect "created" "$(jq .created "$TB_TMP/ct-stats.json")" -ge 2
	tb_expect "live entries as show lists them" \
		"$(jq .entries "$TB_TMP/ct-stats.json")" -eq "$(ct_count true)"
	tb_expect "found" "$(jq .found "$TB_TMP/ct-stats.json")" -ge 2
	tb_expect "evicted" "$(jq .evicted "$TB_TMP/ct-stats.json")" -eq 0
}
