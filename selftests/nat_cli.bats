#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# nat_cli.bats - the NAT rules as operators write and read them (`xnf nat
# add`, `del`, `flush`, `show`), in the test bed's DUT (testbed/testbed.bash),
# whose devices d0 and d1 the rules name: each rule shows in the words
# that add it, in prio order; `xnf save` then `xnf apply` gives the same
# rules; a refusal exits nonzero, says why (a JSON error under -j) and
# changes nothing; a batch of rules is all or nothing; every change is in
# the change log; and an AF_XDP worker refuses a device whose chain has
# nat.

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
}

teardown()
{
	tb_teardown
}

nat_json() { tb_xnf -j nat show; }

# The four kinds of rule, IPv4 and IPv6.
four_rules()
{
	tb_xnf nat add masquerade oif d1 saddr 192.0.2.0/24 proto tcp \
		to :1024-2047 random persistent &&
		tb_xnf nat add prio 5 snat oif d1 proto udp \
			to 203.0.113.1-203.0.113.4:1024-65535 &&
		tb_xnf nat add dnat iif d0 proto tcp dport 8080 \
			to 198.51.100.2:80 &&
		tb_xnf nat add dnat iif d0 proto tcp dport 80-81 \
			to [2001:db8:2::9]:8080
}

@test "nat add, show and -j show: the rules in prio order, in the words that add them" {
	local j again

	four_rules
	j=$(nat_json)
	echo "$j"
	tb_expect "prios, auto after the highest" \
		"$(jq -c '[.rules[].prio]' <<<"$j")" = "[5,10,20,30]"
	tb_expect "types" "$(jq -c '[.rules[].type]' <<<"$j")" = \
		'["snat","masquerade","dnat","dnat"]'
	tb_expect "families" "$(jq -c '[.rules[].family]' <<<"$j")" = \
		'["ipv4","ipv4","ipv4","ipv6"]'
	tb_expect "masquerade" \
		"$(jq -c '.rules[1] | [.oif, .saddr, .proto, .to, .random, .persistent, .iif]' <<<"$j")" = \
		'["d1","192.0.2.0/24","tcp",":1024-2047",true,true,null]'
	tb_expect "snat range" "$(jq -r '.rules[0].to' <<<"$j")" = \
		"203.0.113.1-203.0.113.4:1024-65535"
	tb_expect "dnat" "$(jq -c '.rules[2] | [.iif, .dport, .to]' <<<"$j")" = \
		'["d0","8080","198.51.100.2:80"]'
	tb_expect "dnat IPv6" "$(jq -c '.rules[3] | [.dport, .to]' <<<"$j")" = \
		'["80-81","[2001:db8:2::9]:8080"]'
	nat_json >"$TB_TMP/nat.json"
	run -0 "${SHAPE[@]}" validate "$TB_TOP/docs/json" "$TB_TMP/nat.json"

	# Each line of the text form, typed back, makes the same rule.
	tb_xnf nat show >"$TB_TMP/nat.txt"
	[ "$(wc -l <"$TB_TMP/nat.txt")" -eq 4 ]
	tb_xnf nat flush
	tb_expect "flushed" "$(nat_json | jq '.rules | length')" -eq 0
	while read -r line; do
		# shellcheck disable=SC2086 # the words of one rule
		tb_xnf nat add $line
	done <"$TB_TMP/nat.txt"
	again=$(nat_json)
	tb_expect "typed back" "$again" = "$j"
}

@test "nat del removes one rule, flush every one" {
	four_rules
	tb_xnf nat del prio 10
	tb_expect "prio 10 gone" "$(nat_json | jq -c '[.rules[].prio]')" = "[5,20,30]"
	run -1 tb_xnf nat del prio 10
	tb_expect "the rest as it was" "$(nat_json | jq -c '[.rules[].prio]')" = "[5,20,30]"
	run -1 tb_xnf -j nat del prio 10
	jq -e '.schema == "xnf/error/1"' <<<"$output"
	tb_xnf nat flush
	tb_expect "none left" "$(nat_json | jq '.rules | length')" -eq 0
}

@test "xnf save then xnf apply gives the same rules" {
	local before

	four_rules
	before=$(nat_json)
	tb_xnf save >"$TB_TMP/saved.conf"
	tb_expect "four nat lines" "$(grep -c '^nat add ' "$TB_TMP/saved.conf")" -eq 4
	tb_xnf nat flush
	tb_xnf nat add masquerade oif d0
	run -0 tb_xnf -j apply "$TB_TMP/saved.conf"
	echo "$output"
	tb_expect "the apply switched the rules once" \
		"$(jq '.changed.nat' <<<"$output")" -eq 1
	tb_expect "same rules" "$(nat_json)" = "$before"
	# Applying it again changes nothing.
	run -0 tb_xnf -j apply "$TB_TMP/saved.conf"
	tb_expect "nothing to change" "$(jq '.changes' <<<"$output")" -eq 0
}

@test "a refused rule exits nonzero, says why, and changes nothing" {
	local before bad

	four_rules
	before=$(nat_json)
	while IFS= read -r bad; do
		# shellcheck disable=SC2086 # the words of one rule
		run tb_xnf nat add $bad
		echo "nat add $bad: $status $output"
		[ "$status" -ne 0 ]
		[ -n "$output" ]
		# shellcheck disable=SC2086
		run tb_xnf -j nat add $bad
		[ "$status" -ne 0 ]
		jq -e '.schema == "xnf/error/1" and (.error | length > 0)' <<<"$output"
	done <<'EOF_BAD'
masquerade to 203.0.113.1
masquerade to :1024-2047
snat oif d1
snat to 203.0.113.9-203.0.113.1
dnat proto udp dport 53
dnat dport 80 to 198.51.100.2
dnat proto icmp dport 80 to 198.51.100.2
dnat to 198.51.100.2-198.51.100.3
dnat proto tcp to 198.51.100.2:80-81
snat iif d0 to 203.0.113.1
dnat oif d1 to 198.51.100.2
masquerade oif nosuchdev0
snat saddr 192.0.2.0/24 to 2001:db8::1
snat proto icmpv6 to 203.0.113.1
snat proto sctp to 203.0.113.1
prio 5 masquerade
dnat random to 198.51.100.2
masquerade saddr 192.0.2.1/24
EOF_BAD
	tb_expect "nothing changed" "$(nat_json)" = "$before"
}

@test "no more than 64 rules" {
	local i

	for ((i = 1; i <= 64; i++)); do echo "nat add masquerade"; done >"$TB_TMP/full.batch"
	tb_xnf -b "$TB_TMP/full.batch"
	tb_expect "64 rules" "$(nat_json | jq '.rules | length')" -eq 64
	run -1 tb_xnf -j nat add masquerade
	jq -e '.schema == "xnf/error/1"' <<<"$output"
	tb_expect "still 64" "$(nat_json | jq '.rules | length')" -eq 64
}

@test "a batch of rules is all or nothing" {
	printf '%s\n' "nat add masquerade oif d1" \
		"nat add snat oif d1 to 203.0.113.1" \
		"nat add dnat iif d0 proto tcp dport 8080 to 198.51.100.2:80" \
		"nat add dnat dport 80 to 198.51.100.2" >"$TB_TMP/bad.batch"
	run -1 tb_xnf -b "$TB_TMP/bad.batch"
	tb_expect "none of them" "$(nat_json | jq '.rules | length')" -eq 0
	run -1 tb_xnf -j -b "$TB_TMP/bad.batch"
	jq -e '.schema == "xnf/error/1"' <<<"$output"
	head -n 3 "$TB_TMP/bad.batch" >"$TB_TMP/good.batch"
	echo "nat del prio 10" >>"$TB_TMP/good.batch"
	tb_xnf -b "$TB_TMP/good.batch"
	tb_expect "the batch's result" "$(nat_json | jq -c '[.rules[] | [.prio, .type]]')" = \
		'[[20,"snat"],[30,"dnat"]]'
}

@test "every nat change is in the change log" {
	local log

	tb_xnf nat add masquerade oif d1
	tb_xnf nat del prio 10
	run -1 tb_xnf nat del prio 10
	tb_xnf nat flush
	log=$(tb_xnf -j monitor last 4 once | jq -c 'select(.command != null) | [.command, .result]')
	echo "$log"
	grep -q '"nat add masquerade oif d1"' <<<"$log"
	tb_expect "del and the refused del" "$(grep -c '"nat del prio 10"' <<<"$log")" -eq 2
	grep -q '"nat flush"' <<<"$log"
}

@test "an AF_XDP worker refuses a device whose chain has nat" {
	tb_xnf attach d0 chain conntrack,nat,xsk
	run tb_xnf worker d0 nf l3fwd egress d1 duration 5
	echo "$output"
	[ "$status" -ne 0 ]
	run tb_xnf -j worker d0 nf l3fwd egress d1 duration 5
	[ "$status" -ne 0 ]
	jq -e '.schema == "xnf/error/1"' <<<"$output"
	tb_expect "no worker" "$(tb_xnf -j status d0 | jq '[.workers[]? | select(.state == "running")] | length')" -eq 0
	# Without nat, the same worker runs.
	tb_xnf chain set d0 conntrack,xsk
	run -0 tb_xnf worker d0 nf l3fwd egress d1 duration 1
}
