#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# scaleout.bats - SO_N (default 2) xnf routers behind an edge router that
# learns the service prefix from each of them by BGP (BIRD) and spreads
# flows over them by ECMP, with BFD watching every session
# (selftests/lib/scaleout.bash draws the test bed). Each router's xnf runs
# its l3fwd in fib mode and so follows the route BIRD put in its kernel.
#
# Every number asserted is a count: frames the generator sent, datagrams
# the sink counted per (router, flow), frames each router's xnf forwarded,
# frames the veth rings dropped (testbed.bash, tb_link). Nothing is timed:
# a wait polls for a condition (the edge's route, a BFD state, a count).
# Routing is dual stack; each test runs with IPv4 and with IPv6 traffic.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=300}"

load lib/scaleout

FLOWS=$SO_FLOWS
# Up to 1 kpps the generator sleeps between frames (tools/gen.c).
PER_FLOW=50
RATE=$SO_RATE

setup_file()
{
	SO_SKIP=$(so_missing)
	export SO_SKIP
}

setup()
{
	[ -z "$SO_SKIP" ] || skip "$SO_SKIP"
	so_setup
	so_up
}

teardown()
{
	so_teardown
}

# send_all: FLOWS x PER_FLOW frames at RATE, returns once all that were
# not dropped on a ring arrived; sets SENT and DROPS.
send_all()
{
	local drops0
	drops0=$(so_ring_drops)
	SENT=$(so_send $((FLOWS * PER_FLOW)) $FLOWS $RATE)
	tb_expect "frames sent" "$SENT" -eq $((FLOWS * PER_FLOW))
	DROPS=$(($(so_ring_drops) - drops0))
	so_wait_received $((SENT - DROPS))
}

# Every router carries flows, no flow goes through two.
t_spread()
{
	local k r0 r fwd
	for ((k = 1; k <= SO_N; k++)); do
		r0[k]=$(so_xnf_forwarded "$k")
	done
	send_all
	echo "sent $SENT, ring drops $DROPS, received $(so_received)"
	tb_expect "received" "$(so_received)" -eq $((SENT - DROPS))
	tb_expect "flows seen" "$(so_flows | awk '{ print $2 }' | sort -u | wc -l)" -eq $FLOWS
	tb_expect "flows split over routers" "$(so_split | wc -l)" -eq 0
	for ((k = 1; k <= SO_N; k++)); do
		r=$(so_flows | awk -v d="k$k" '$1 == d { n += $3 } END { print n + 0 }')
		fwd=$(($(so_xnf_forwarded "$k") - r0[k]))
		echo "router $k: $(so_flows_via "$k") flows, $r datagrams, xnf forwarded $fwd"
		tb_expect "flows through router $k" "$(so_flows_via "$k")" -ge 1
		# What reached the sink through router k went through its
		# xnf (fib mode), not its kernel.
		tb_expect "xnf of router $k forwarded" "$fwd" -ge "$r"
	done
}

# phase KIND: router 1 leaves by KIND under traffic (so_phase); checks
# the accounting and that only its flows moved.
phase()
{
	so_phase "$1" 1
	echo "$1: sent $SO_SENT, received $SO_RECV, lost $SO_LOST" \
		"(router 1's $SO_K_FLOWS flows for $(so_outage_ms 1) ms), ring drops $SO_RING," \
		"lost on other routers' flows $SO_LOST_OTHER, flows moved $SO_MOVED"
	tb_expect "sent = received + lost + ring drops" "$SO_SENT" -eq $((SO_RECV + SO_LOST + SO_RING))
	tb_expect "router 1's flows moved" "$SO_MOVED" -eq "$SO_K_FLOWS"
	# The edge's kernel picks a path by hash-threshold (BIRD installs a
	# multipath route, not a resilient nexthop group): with more than two
	# routers, taking one out remaps some of the others' flows among them
	# too; moved, not lost (SO_LOST_OTHER).
	if ((SO_N == 2)); then
		tb_expect "other routers' flows moved" "$SO_KEPT_MOVED" -eq 0
	fi
	tb_expect "lost on the other routers' flows, beyond ring drops" \
		"$SO_LOST_OTHER" -le "$SO_RING"
}

# back KIND: router 1 returns and takes traffic again.
back()
{
	so_return "$1" 1
	so_sink_reset
	send_all
	tb_expect "flows through router 1 once back" "$(so_flows_via 1)" -ge 1
	tb_expect "flows split" "$(so_split | wc -l)" -eq 0
	tb_expect "received after the return" "$(so_received)" -eq $((SENT - DROPS))
}

# The drain procedure under traffic: router 1's flows move, nothing is lost.
t_drain()
{
	phase drain
	tb_expect "lost during the drain" "$SO_LOST" -eq 0

	# Drained: nothing through router 1 until it announces normally
	# again, nor when its session is shut down and brought back (the
	# route comes back with the community, still out of the ECMP route).
	so_sink_reset
	send_all
	tb_expect "flows through the drained router" "$(so_flows_via 1)" -eq 0
	tb_expect "received while drained" "$(so_received)" -eq $((SENT - DROPS))
	so_session_down 1
	so_sink_reset
	send_all
	tb_expect "flows with the drained router's session down" "$(so_flows_via 1)" -eq 0
	tb_expect "received with the session down" "$(so_received)" -eq $((SENT - DROPS))
	so_session_up 1
	tb_until "the edge to learn the drained route again" so_edge_learned 1
	tb_expect "edge's next hops, drained session back" "$(so_paths)" -eq $((SO_N - 1))
	back drain
}

# A router that stops without its links going down: only BFD tells the
# edge; what was lost meanwhile is counted in the router.
t_silent()
{
	phase stall
	back stall
}

# Links down: BIRD at the edge sees its interface go down (as fast as
# BFD or faster); the frames lost on the dead link are not counted
# anywhere, so they are what did not arrive once the fence did.
t_linkdown()
{
	phase linkdown
	back linkdown
}

@test "IPv4: flows spread over every router, each flow through one router" {
	SO_FAMILY=4
	t_spread
}

@test "IPv4: drain: a router's flows move to the others without loss, the others' stay" {
	SO_FAMILY=4
	t_drain
}

@test "IPv4: silent failure: BFD takes the router out, only its flows lose, it comes back" {
	SO_FAMILY=4
	t_silent
}

@test "IPv4: links down: the router is routed around, only its flows lose, it comes back" {
	SO_FAMILY=4
	t_linkdown
}

@test "IPv6: flows spread over every router, each flow through one router" {
	SO_FAMILY=6
	t_spread
}

@test "IPv6: drain: a router's flows move to the others without loss, the others' stay" {
	SO_FAMILY=6
	t_drain
}

@test "IPv6: silent failure: BFD takes the router out, only its flows lose, it comes back" {
	SO_FAMILY=6
	t_silent
}

@test "IPv6: links down: the router is routed around, only its flows lose, it comes back" {
	SO_FAMILY=6
	t_linkdown
}
