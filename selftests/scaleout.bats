#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# scaleout.bats - SO_N (default 2) xnf routers behind an edge router that
# learns the service prefix from each of them by BGP (BIRD) and spreads
# flows over them by ECMP, with BFD watching every session
# (testbed/scaleout.bash draws the test bed). Each router's xnf runs
# its l3fwd by its own LPM, which `xnf route sync` fills from the routes
# BIRD puts in the router's kernel (SO_MODE=sync); one test runs l3fwd in
# fib mode instead, asking the kernel's FIB per packet.
#
# Every number asserted is a count: frames the generator sent, datagrams
# the sink counted per (router, flow), frames each router's xnf forwarded,
# frames the veth rings dropped (testbed.bash, tb_link). Nothing is timed:
# a wait polls for a condition (the edge's route, a BFD state, a count).
# Routing is dual stack; each test runs with IPv4 and with IPv6 traffic.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=300}"

load ../testbed/scaleout

FLOWS=$SO_FLOWS
# Up to 1 kpps the generator sleeps between frames (tools/gen.c).
PER_FLOW=50
RATE=$SO_RATE

setup_file()
{
	SO_SKIP=$(so_missing)
	export SO_SKIP
}

# Each test brings the routers up (so_up) after setting SO_MODE or not.
setup()
{
	[ -z "$SO_SKIP" ] || skip "$SO_SKIP"
	so_setup
}

teardown()
{
	# A failure's message gets the edge's view of the sessions.
	if [ -z "${BATS_TEST_COMPLETED:-}" ] && [ -n "${TB_TMP:-}" ]; then
		echo "the edge's protocol state changes:"
		so_edge_states
	fi
	so_teardown
}

# attempt FUNC: FUNC; if it fails while the edge's sessions with a router
# the test leaves alone (2..SO_N) went down unasked, the machine stalled
# the daemons past BFD's 300 ms or BGP's hold time (another suite loading
# the kernel), and that attempt's counts say nothing about xnf: FUNC runs
# once more on a new test bed, said on the test's output. A second
# failure stands.
attempt()
{
	local rc downs
	downs=$(so_unasked_downs)
	set +e
	(
		set -e
		"$@"
	)
	rc=$?
	set -e
	((rc != 0)) || return 0
	[ "$(so_unasked_downs)" -gt "$downs" ] || return "$rc"
	echo "# $BATS_TEST_DESCRIPTION: the edge lost a session unasked (machine load); again on a new test bed" >&3
	so_edge_states 12 >&2
	so_teardown
	so_setup
	so_up
	"$@"
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

# Every router carries flows, no flow goes through two; each router's
# xnf forwarded them by the route BIRD made (in sync mode the one the sync
# mirrored into xnf's LPM), none by its kernel.
t_spread()
{
	local k r0 r fwd kf0 route
	for ((k = 1; k <= SO_N; k++)); do
		r0[k]=$(so_xnf_forwarded "$k")
		kf0[k]=$(so_kfwd "$k")
	done
	send_all
	echo "sent $SENT, ring drops $DROPS, received $(so_received)"
	tb_expect "received" "$(so_received)" -eq $((SENT - DROPS))
	tb_expect "flows seen" "$(so_flows | awk '{ print $2 }' | sort -u | wc -l)" -eq $FLOWS
	tb_expect "flows split over routers" "$(so_split | wc -l)" -eq 0
	for ((k = 1; k <= SO_N; k++)); do
		r=$(so_flows | awk -v d="k$k" '$1 == d { n += $3 } END { print n + 0 }')
		fwd=$(($(so_xnf_forwarded "$k") - r0[k]))
		echo "router $k: $(so_flows_via "$k") flows, $r datagrams, xnf forwarded $fwd," \
			"kernel forwarded (IPv4 IPv6) ${kf0[k]} before, $(so_kfwd "$k") after"
		tb_expect "flows through router $k" "$(so_flows_via "$k")" -ge 1
		# What reached the sink through router k went through its
		# xnf, not its kernel.
		tb_expect "xnf of router $k forwarded" "$fwd" -ge "$r"
		tb_expect "datagrams router $k's kernel forwarded (IPv4 IPv6)" \
			"$(so_kfwd "$k")" = "${kf0[k]}"
		[ "$SO_MODE" = sync ] || continue
		# The route xnf took: BIRD's static route, from the kernel
		# through the sync (which still runs).
		route=$(so_route_get "$k" "$(so_svc)")
		echo "router $k: xnf route get $(so_svc): $route"
		jq -e --arg n "$(so_svc_net)" --arg v "$(so_sink_addr_f "$k")" \
			'.dst == $n and .type == "unicast" and .via == $v and .origin == "sync"' <<<"$route"
		ip -n "$(so_ns "r$k")" -"$SO_FAMILY" route show "$(so_svc_net)" proto bird |
			grep -q "via $(so_sink_addr_f "$k") "
		so_sync_running "$k"
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

# route_is K DST JQ: router K's xnf has one route DST and JQ holds for
# it; with JQ "gone", it has none.
route_is()
{
	local sel
	sel=$(so_xnf "$1" -j route show | jq -c --arg d "$2" '[.routes[] | select(.dst == $d)]') ||
		return 1
	if [ "$3" = gone ]; then
		jq -e 'length == 0' <<<"$sel" >/dev/null
	else
		jq -e "length == 1 and (.[0] | .origin == \"sync\" and ($3))" <<<"$sel" >/dev/null
	fi
}

# follow_step WHAT ROUTE4 ROUTE6 JQ4 JQ6: router 1's BIRD gets ROUTE4 and
# ROUTE6 (static routes, or nothing) in protocols of their own, by `birdc
# configure`; then, until router 1's xnf shows F4 as JQ4 says and F6 as
# JQ6 says.
F4=198.18.0.0/24
F6=2001:db8:18::/48
follow_step()
{
	SO_STATIC_EXTRA="protocol static follow4 { ipv4; $2 }
		protocol static follow6 { ipv6; $3 }" so_router_reconf 1
	tb_until "$1 (IPv4) in xnf" route_is 1 $F4 "$4"
	tb_until "$1 (IPv6) in xnf" route_is 1 $F6 "$5"
}

t_follow()
{
	local a4 b4 a6 b6
	a4=$(so_sink_addr 1) b4=$(so_edge_addr 1)
	a6=$(so_sink_addr6 1) b6=$(so_edge_addr6 1)
	follow_step "an added route" "route $F4 via $a4;" "route $F6 via $a6;" \
		".type == \"unicast\" and .via == \"$a4\" and .dev == \"p1\" and .neighbour" \
		".type == \"unicast\" and .via == \"$a6\" and .dev == \"p1\" and .neighbour"
	follow_step "a new next hop" "route $F4 via $b4;" "route $F6 via $b6;" \
		".type == \"unicast\" and .via == \"$b4\" and .dev == \"p0\" and .neighbour" \
		".type == \"unicast\" and .via == \"$b6\" and .dev == \"p0\" and .neighbour"
	follow_step "two next hops" "route $F4 via $a4 via $b4;" "route $F6 via $a6 via $b6;" \
		".type == \"multipath\" and ([.nexthops[] | .via + \" \" + .dev] | sort) == ([\"$a4 p1\", \"$b4 p0\"] | sort) and all(.nexthops[]; .neighbour)" \
		".type == \"multipath\" and ([.nexthops[] | .via + \" \" + .dev] | sort) == ([\"$a6 p1\", \"$b6 p0\"] | sort) and all(.nexthops[]; .neighbour)"
	follow_step "back to one next hop" "route $F4 via $a4;" "route $F6 via $a6;" \
		".type == \"unicast\" and .via == \"$a4\"" \
		".type == \"unicast\" and .via == \"$a6\""
	follow_step "a removed route" "" "" gone gone
	# The service's routes were not touched meanwhile, and the sync
	# batched every change.
	so_synced 1
	so_sync_event 1 batch '.added >= 1'
	so_sync_running 1
}

@test "fib mode, IPv4: flows spread over every router, each flow through one router" {
	SO_MODE=fib
	SO_FAMILY=4
	so_up
	attempt t_spread
}

@test "the sync follows BIRD's routes: added, next hop changed, multipath, removed (IPv4 and IPv6)" {
	so_up
	t_follow
}

@test "IPv4: flows spread over every router, each flow through one router" {
	SO_FAMILY=4
	so_up
	attempt t_spread
}

@test "IPv4: drain: a router's flows move to the others without loss, the others' stay" {
	SO_FAMILY=4
	so_up
	attempt t_drain
}

@test "IPv4: silent failure: BFD takes the router out, only its flows lose, it comes back" {
	SO_FAMILY=4
	so_up
	attempt t_silent
}

@test "IPv4: links down: the router is routed around, only its flows lose, it comes back" {
	SO_FAMILY=4
	so_up
	attempt t_linkdown
}

@test "IPv6: flows spread over every router, each flow through one router" {
	SO_FAMILY=6
	so_up
	attempt t_spread
}

@test "IPv6: drain: a router's flows move to the others without loss, the others' stay" {
	SO_FAMILY=6
	so_up
	attempt t_drain
}

@test "IPv6: silent failure: BFD takes the router out, only its flows lose, it comes back" {
	SO_FAMILY=6
	so_up
	attempt t_silent
}

@test "IPv6: links down: the router is routed around, only its flows lose, it comes back" {
	SO_FAMILY=6
	so_up
	attempt t_linkdown
}
