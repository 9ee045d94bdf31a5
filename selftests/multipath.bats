#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# multipath.bats - `xnf route add PREFIX nexthop NH nexthop NH ...`: what
# `route show -j` says of the group, that a replace with one next hop fewer
# keeps the others' buckets (resilient), and that `xnf save` prints it
# (saving and applying multipath routes: config.bats). The per-flow behaviour is in the unit tests
# (selftests/unit/multipath.c, unf_multipath_vs_xdp).

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=120}"

load lib/testbed

MP=203.0.113.0/24
NH_A=02:78:6e:00:0f:01
NH_B=02:78:6e:00:0f:02

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
	[ -z "$TB_SKIP" ] || return 0
	tb_testbed_up l3fwd
}

teardown_file()
{
	tb_teardown
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
}

teardown()
{
	[ -z "$TB_SKIP" ] || return 0
	tb_xnf route del $MP 2>/dev/null || true
}

# mp_route: the JSON object of $MP in `xnf -j route show`.
mp_route()
{
	tb_xnf -j route show | jq -ec --arg d $MP '.[] | select(.dst == $d)'
}

@test "a multipath route lists its next hops and their share of the buckets" {
	local r
	tb_xnf route add $MP nexthop via $TB_SINK4 dev d1 \
		nexthop dev d1 lladdr $NH_A nexthop dev d1 lladdr $NH_B
	r=$(mp_route)
	tb_expect "type" "$(jq -r .type <<<"$r")" = multipath
	tb_expect "next hops" "$(jq '.nexthops | length' <<<"$r")" -eq 3
	tb_expect "buckets in all" "$(jq '[.nexthops[].buckets] | add' <<<"$r")" -eq 128
	tb_expect "smallest share" "$(jq '[.nexthops[].buckets] | min' <<<"$r")" -ge 42
	tb_expect "the gateway's MAC" \
		"$(jq -r '.nexthops[] | select(.via != null) | .lladdr' <<<"$r")" = $TB_MAC_K0
	tb_expect "no single next hop at the top" "$(jq -r '.dev' <<<"$r")" = null
	tb_expect "a unicast route has no group" \
		"$(tb_xnf -j route show | jq -r '.[] | select(.dst == "198.51.100.0/24") | .group')" = null
	tb_expect "every next hop on d1" \
		"$(jq -r '[.nexthops[].dev] | unique | join(",")' <<<"$r")" = d1
	# add refuses what exists, as for a single next hop.
	run -1 tb_xnf route add $MP nexthop dev d1 lladdr $NH_A nexthop dev d1 lladdr $NH_B
	[ "$(mp_route)" = "$r" ]
}

@test "replacing a multipath route with one next hop fewer keeps the others' buckets" {
	local before after
	tb_xnf route add $MP nexthop via $TB_SINK4 dev d1 \
		nexthop dev d1 lladdr $NH_A nexthop dev d1 lladdr $NH_B
	before=$(mp_route)
	tb_xnf route replace $MP nexthop dev d1 lladdr $NH_A nexthop dev d1 lladdr $NH_B
	after=$(mp_route)
	tb_expect "the same group, changed in place" \
		"$(jq .group <<<"$after")" -eq "$(jq .group <<<"$before")"
	tb_expect "next hops left" "$(jq '.nexthops | length' <<<"$after")" -eq 2
	tb_expect "each of them" "$(jq '[.nexthops[].buckets] | min' <<<"$after")" -eq 64
	# Each remaining next hop has at least the buckets it had.
	jq -e -n --argjson b "$before" --argjson a "$after" '
		[$a.nexthops[] as $n | ($b.nexthops[] | select(.id == $n.id) | .buckets) <= $n.buckets] | all'
	# One next hop left: a unicast route.
	tb_xnf route replace $MP nexthop dev d1 lladdr $NH_A
	tb_expect "one next hop" "$(mp_route | jq -r .type)" = unicast
}

@test "xnf save prints a multipath route with its next hops" {
	tb_xnf route add $MP nexthop dev d1 lladdr $NH_B nexthop dev d1 lladdr $NH_A
	run -0 tb_xnf save
	grep -qx "route add $MP nexthop dev d1 lladdr $NH_A nexthop dev d1 lladdr $NH_B" <<<"$output"
}

@test "malformed multipath routes are refused and change nothing" {
	local before
	before=$(tb_xnf -j route show)
	run -1 tb_xnf route add $MP nexthop
	run -1 tb_xnf route add $MP nexthop dev d1 lladdr $NH_A nexthop
	run -1 tb_xnf route add $MP nexthop dev d1 lladdr $NH_A blackhole
	run -1 tb_xnf route add $MP nexthop blackhole nexthop dev d1 lladdr $NH_A
	run -1 tb_xnf route add $MP nexthop dev d1 lladdr $NH_A nexthop dev d1 lladdr $NH_A
	run -1 tb_xnf route add $MP nexthop dev nosuch0 lladdr $NH_A nexthop dev d1 lladdr $NH_B
	[ "$(tb_xnf -j route show)" = "$before" ]
}
