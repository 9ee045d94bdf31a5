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

# ---- stateful routers -----------------------------------------------------------
#
# Every router runs conntrack,firewall,l3fwd with the classic stateful
# policy (so_ct_policy). CT_CONNS TCP connections from the source (inside,
# p0) to the sink's server echo CT_BYTES1 bytes each; then router 1 is
# drained and they echo CT_BYTES2 more, and close. The connections router
# 1 carried now reach another router in mid-stream, which has no entry for
# them: as Linux with nf_conntrack_tcp_loose=1 (its default), that router
# picks the connection up from its next packet (an entry made ESTABLISHED
# in the TCP state). Linux gives that packet ct state new (IP_CT_NEW: the
# original direction, no reply seen yet), and so does xnf: it is not let
# through by `ct state established`, but by `iif p0` (the inside may open
# anything), which confirms the entry; the server's answers then match
# the entry in the reply direction and pass as established. (Had the
# server's packet come first, from the outside, it would be new and
# dropped, and no entry made: the client's next packet makes it.)
CT_PORT=8080
CT_CONNS=${CT_CONNS:-16}
CT_BYTES1=65536
CT_BYTES2=131072

# ct_entries_of JSON SPORTS: the entries of JSON (so_ct_conns) whose
# original source port is in SPORTS (a JSON array).
ct_entries_of()
{
	jq -c --argjson p "$2" '[.[] | select(.orig.sport as $s | $p | index($s))]' <<<"$1"
}

# ct_closed K SPORTS: router K's entries of the connections SPORTS are all
# in TIME_WAIT (both FINs and the last ACK seen).
ct_closed()
{
	local c
	c=$(ct_entries_of "$(so_ct_conns "$1" $CT_PORT)" "$2") &&
		jq -e --argjson p "$2" 'length == ($p | length) and all(.[]; .state == "TIME_WAIT")' \
			<<<"$c" >/dev/null
}

t_ct_drain()
{
	local k st=$TB_TMP/ct-status go=$TB_TMP/ct-go out=$TB_TMP/ct-client.json \
		srv=$TB_TMP/ct-server.out py="$TB_TOP/selftests/lib/tcp_phases.py" \
		pid conns all=0 mine1 n1 c hits0=() hits=0
	for ((k = 1; k <= SO_N; k++)); do
		tb_until "router $k's route back to the source" so_back_synced "$k"
	done
	so_ct_return $CT_PORT
	: >"$srv"
	tb_bg "$(so_ns sink)" timeout 150 /usr/bin/python3 "$py" serve "$(so_svc)" \
		$CT_PORT "$CT_CONNS" "$srv"
	tb_until "the server to listen" eval \
		'tb_run "$(so_ns sink)" ss -Hltn "sport = :$CT_PORT" | grep -q .'
	tb_bg "$(so_ns src)" timeout 120 /usr/bin/python3 "$py" client "$(so_svc)" \
		$CT_PORT "$CT_CONNS" $CT_BYTES1 $CT_BYTES2 "$st" "$go" >"$out"
	pid=$TB_BG_PID
	tb_until "phase 1 of every connection" test -s "$st"

	# Each connection went through one router, which tracks it as
	# established, with the phase's bytes in both directions.
	for ((k = 1; k <= SO_N; k++)); do
		conns=$(so_ct_conns "$k" $CT_PORT)
		echo "router $k before the drain: $(jq -c '[.[] | {sport: .orig.sport, state, o: .orig.bytes, r: .reply.bytes}]' <<<"$conns")"
		jq -e --argjson b $CT_BYTES1 'all(.[]; .state == "ESTABLISHED" and
			.orig.bytes > $b and .reply.bytes > $b)' <<<"$conns"
		all=$((all + $(jq length <<<"$conns")))
		((k == 1)) || hits0[k]=$(so_fw_hits "$k" 30)
	done
	tb_expect "connections tracked, all routers" "$all" -eq "$CT_CONNS"
	mine1=$(so_ct_conns 1 $CT_PORT | jq -c '[.[].orig.sport]')
	n1=$(jq length <<<"$mine1")
	tb_expect "connections through router 1" "$n1" -ge 1

	so_drain 1
	touch "$go"
	wait "$pid"
	echo "client: $(cat "$out")"
	echo "server: $(tr '\n' ' ' <"$srv")"
	# Every byte of both phases came back, unchanged, on every connection;
	# the server received each connection's bytes exactly.
	jq -e --argjson n "$CT_CONNS" --argjson a $CT_BYTES1 --argjson b $CT_BYTES2 \
		'.connections | length == $n and all(.[];
			.phase1 == {sent: $a, echoed: $a, same: true} and
			.phase2 == {sent: $b, echoed: $b, same: true})' "$out"
	tb_until "the server to log every connection" eval \
		'[ "$(wc -l <"$srv")" -eq "$CT_CONNS" ]'
	jq -se --argjson t $((CT_BYTES1 + CT_BYTES2)) --slurpfile c "$out" \
		'(map(.sport) | sort) == ($c[0].connections | map(.sport) | sort) and
			all(.[]; .bytes == $t)' "$srv"

	# Router 1's connections continued through the others: picked up
	# there from the client's packet (the original direction is the
	# client's), the server's phase 2 answers counted in the reply
	# direction, and the closes tracked to TIME_WAIT.
	c="[]"
	for ((k = 2; k <= SO_N; k++)); do
		c=$(jq -sc 'add' <(echo "$c") <(ct_entries_of "$(so_ct_conns "$k" $CT_PORT)" "$mine1"))
		hits=$((hits + $(so_fw_hits "$k" 30) - hits0[k]))
	done
	# Each picked-up connection's first packet there was new.
	echo "the others' rule 'allow iif p0' matched $hits packets after the drain"
	tb_expect "packets of new connections from the inside, after the drain" "$hits" -ge "$n1"
	echo "router 1's connections, on the others: $c"
	jq -e --argjson p "$mine1" --argjson b $CT_BYTES2 --arg s "$(so_src)" \
		'(map(.orig.sport) | sort) == ($p | sort) and all(.[];
			.orig.src == $s and .orig.bytes > $b and .reply.bytes > $b)' <<<"$c"
	for ((k = 2; k <= SO_N; k++)); do
		tb_until "router $k to see the closes" ct_closed "$k" \
			"$(jq -c '[.[].orig.sport]' <<<"$(ct_entries_of "$(so_ct_conns "$k" $CT_PORT)" "$mine1")")"
	done
}

@test "stateful routers, IPv4: a drained router's TCP connections continue through the others" {
	SO_CT=1
	SO_FAMILY=4
	so_up
	attempt t_ct_drain
}

@test "stateful routers, IPv6: a drained router's TCP connections continue through the others" {
	SO_CT=1
	SO_FAMILY=6
	so_up
	attempt t_ct_drain
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
