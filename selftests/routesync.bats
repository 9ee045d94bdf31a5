#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# routesync.bats - `xnf route sync` mirrors the DUT kernel's routes into
# xnf's tables, and `xnf neigh follow` keeps next hops in step with their
# neighbours: changes made with `ip route` and `ip neigh` show in `xnf -j
# route show` and in where the traffic goes; an overrun ends in a resync;
# a sync killed between a batch's writes and its commit leaves the last
# complete set; a restart converges, removals included, and is not
# refused for a dead sync's pid; a route's MTU is honoured (the kernel
# answers what is larger) and an encapsulation passes to the kernel; on a
# 10,000-route table xnf answers as the kernel's FIB.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=300}"

load ../testbed/testbed

GW2=198.51.100.2
GW3=198.51.100.3
GW2_6=2001:db8:2::2
MAC2=02:78:6e:00:0f:02
MAC3=02:78:6e:00:0f:03
NEW=02:78:6e:00:0f:99
P4=203.0.113.0/24
P6=2001:db8:99::/48
HAND=198.18.5.0/24
STALE=203.0.113.96/29
ENCAP=203.0.113.224/28
MTU_PFX=203.0.113.240/28

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
	[ -z "$TB_SKIP" ] || return 0
	tb_setup && tb_attach_both l3fwd || return 1
	# Two more gateways on d1's subnet, known to the DUT's kernel.
	ip -n "$TB_DUT" neigh replace $GW2 lladdr $MAC2 dev d1 nud permanent &&
		ip -n "$TB_DUT" neigh replace $GW3 lladdr $MAC3 dev d1 nud permanent &&
		ip -n "$TB_DUT" neigh replace $GW2_6 lladdr $MAC2 dev d1 nud permanent
}

teardown_file()
{
	tb_teardown
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	SYNC_PID=
}

teardown()
{
	[ -z "$TB_SKIP" ] || return 0
	rs_stop
	tb_xnf route sync flush >/dev/null 2>&1 || true
	tb_xnf route flush >/dev/null 2>&1 || true
	tb_xnf route del $P4 2>/dev/null || true
	tb_xnf route del $HAND 2>/dev/null || true
	tb_xnf chain set d0 l3fwd lpm >/dev/null 2>&1 || true
	tb_xnf chain set d1 l3fwd lpm >/dev/null 2>&1 || true
	ip -n "$TB_DUT" route flush root 203.0.113.0/24 2>/dev/null || true
	ip -n "$TB_DUT" route flush root 198.18.0.0/15 2>/dev/null || true
	ip -n "$TB_DUT" -6 route flush root 2001:db8:99::/48 2>/dev/null || true
	ip -n "$TB_DUT" -6 route flush root 2001:db8:1000::/36 2>/dev/null || true
	ip -n "$TB_DUT" route del 198.51.100.128/25 dev d1 2>/dev/null || true
	ip -n "$TB_DUT" nexthop flush >/dev/null 2>&1 || true
	ip -n "$TB_DUT" link del rsbr0 2>/dev/null || true
	ip -n "$TB_DUT" link set d1 mtu 1500
	ip -n "$TB_SINK" link set k0 address $TB_MAC_K0
	tb_sink sysctl -q -w net.ipv4.neigh.k0.mcast_solicit=3 \
		net.ipv4.neigh.k0.ucast_solicit=3 >/dev/null
	ip -n "$TB_SINK" neigh replace $TB_D14 lladdr $TB_MAC_D1 dev k0 nud permanent
	ip -n "$TB_SINK" addr del 203.0.113.1/32 dev lo 2>/dev/null || true
	ip -n "$TB_DUT" neigh flush dev d1 nud all 2>/dev/null || true
	ip -n "$TB_DUT" neigh replace $TB_SINK4 lladdr $TB_MAC_K0 dev d1 nud permanent
	ip -n "$TB_DUT" neigh replace $TB_SINK6 lladdr $TB_MAC_K0 dev d1 nud permanent
	ip -n "$TB_DUT" neigh replace $GW2 lladdr $MAC2 dev d1 nud permanent
	ip -n "$TB_DUT" neigh replace $GW3 lladdr $MAC3 dev d1 nud permanent
	ip -n "$TB_DUT" neigh replace $GW2_6 lladdr $MAC2 dev d1 nud permanent
	tb_dut sysctl -q -w net.ipv4.neigh.d1.base_reachable_time_ms=30000 \
		net.ipv4.neigh.d1.delay_first_probe_time=5 \
		net.ipv4.neigh.d1.interval_probe_time_ms=5000 \
		net.ipv4.neigh.d1.retrans_time_ms=1000 >/dev/null
}

# rs_start [ARGS...]: `xnf -j route sync ARGS` in the background, its
# events in $TB_TMP/sync.out; returns once it has started. With
# RS_CMD="neigh follow", that command instead.
rs_start()
{
	: >"$TB_TMP/sync.out"
	# shellcheck disable=SC2086 # RS_CMD is two words
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" ${RS_ENV:-} \
		timeout 600 "$XNF" -j ${RS_CMD:-route sync} "$@" \
		>"$TB_TMP/sync.out" 2>&1
	SYNC_PID=$TB_BG_PID
	tb_until "the sync to start" rs_event started ||
		{ cat "$TB_TMP/sync.out" >&2; return 1; }
}

# rs_stop: SIGTERM to the sync, which must say it stopped.
rs_stop()
{
	[ -n "$SYNC_PID" ] || return 0
	kill -TERM "$SYNC_PID" 2>/dev/null || true
	wait "$SYNC_PID" 2>/dev/null || true
	SYNC_PID=
}

# rs_event NAME [JQ]: the sync printed an event NAME (for which JQ holds).
rs_event()
{
	jq -e --arg e "$1" "select(.event == \$e) | ${2:-true}" \
		"$TB_TMP/sync.out" 2>/dev/null | grep -qx true
}

# route_of DST: the object of DST in `xnf -j route show`, or nothing.
route_of()
{
	tb_xnf -j route show | jq -c --arg d "$1" '.routes[] | select(.dst == $d)'
}

# route_is DST JQ: DST is in xnf's tables and JQ holds for it.
route_is()
{
	route_of "$1" | jq -e "$2" >/dev/null
}

# route_gone DST: no route DST in xnf's tables.
route_gone()
{
	[ -z "$(route_of "$1")" ]
}

@test "sync follows add, replace, delete and multipath changes made with ip route" {
	rs_start
	ip -n "$TB_DUT" route add $P4 via $TB_SINK4
	tb_until "$P4 via the sink" route_is $P4 \
		".type == \"unicast\" and .via == \"$TB_SINK4\" and .dev == \"d1\" and .lladdr == \"$TB_MAC_K0\" and .origin == \"sync\""
	ip -n "$TB_DUT" route replace $P4 via $GW2
	tb_until "$P4 via $GW2" route_is $P4 ".via == \"$GW2\" and .lladdr == \"$MAC2\""
	ip -n "$TB_DUT" route replace $P4 nexthop via $GW2 nexthop via $GW3
	tb_until "$P4 over two next hops" route_is $P4 \
		"[.nexthops[].via] | sort == [\"$GW2\", \"$GW3\"]"
	ip -n "$TB_DUT" route del $P4
	tb_until "$P4 gone" route_gone $P4

	# IPv6: multipath built with append, one next hop deleted by name.
	ip -n "$TB_DUT" -6 route add $P6 via $TB_SINK6
	ip -n "$TB_DUT" -6 route append $P6 via $GW2_6
	tb_until "$P6 over two next hops" route_is $P6 \
		"[.nexthops[].via] | sort == [\"$TB_SINK6\", \"$GW2_6\"]"
	ip -n "$TB_DUT" -6 route del $P6 via $TB_SINK6
	tb_until "$P6 via $GW2_6 only" route_is $P6 \
		".type == \"unicast\" and .via == \"$GW2_6\" and .lladdr == \"$MAC2\""
	ip -n "$TB_DUT" -6 route del $P6
	tb_until "$P6 gone" route_gone $P6
	rs_event batch '.added >= 1'
	# The change log has the start and the batches, under the sync's pid.
	run -0 tb_xnf -j monitor once
	jq -s -e '[.[] | select(.command == "route sync")] |
		(.[0].message == "started") and (length >= 5) and
		all(.result == "ok") and (map(.pid) | unique | length == 1)' <<<"$output"
}

@test "routes through kernel nexthop objects (ip nexthop, as FRR installs them) follow the objects" {
	rs_start
	ip -n "$TB_DUT" nexthop add id 7710 via $GW2 dev d1
	ip -n "$TB_DUT" nexthop add id 7711 via $GW3 dev d1
	ip -n "$TB_DUT" nexthop add id 7712 group 7710/7711
	ip -n "$TB_DUT" route add $P4 nhid 7712
	tb_until "$P4 over the group" route_is $P4 \
		"[.nexthops[].via] | sort == [\"$GW2\", \"$GW3\"]"
	# The kernel announces no route when an object changes.
	ip -n "$TB_DUT" nexthop replace id 7710 via $TB_SINK4 dev d1
	tb_until "the changed member" route_is $P4 \
		"[.nexthops[].via] | sort == [\"$TB_SINK4\", \"$GW3\"]"
	ip -n "$TB_DUT" nexthop del id 7711
	tb_until "one member left" route_is $P4 ".type == \"unicast\" and .via == \"$TB_SINK4\""
	# The last one's delete takes the route with it, unannounced.
	ip -n "$TB_DUT" nexthop del id 7710
	tb_until "$P4 gone" route_gone $P4
}

@test "connected subnets and device routes pass to the kernel; own addresses are local; blackhole and unreachable map" {
	rs_start
	ip -n "$TB_DUT" route add 198.51.100.128/25 dev d1
	ip -n "$TB_DUT" route add blackhole 198.18.1.0/24
	ip -n "$TB_DUT" route add unreachable 198.18.2.0/24
	ip -n "$TB_DUT" route add prohibit 198.18.3.0/24
	tb_until "the device route" route_is 198.51.100.128/25 '.type == "kernel"'
	route_is 198.51.100.0/24 '.type == "kernel"'
	route_is 2001:db8:2::/64 '.type == "kernel"'
	route_is $TB_D14/32 '.type == "local"'
	route_is $TB_D16/128 '.type == "local"'
	tb_until "the blackhole" route_is 198.18.1.0/24 '.type == "blackhole"'
	tb_until "the unreachable" route_is 198.18.2.0/24 '.type == "unreachable"'
	tb_until "the prohibit" route_is 198.18.3.0/24 '.type == "unreachable"'
}

# send_and_capture DST: 20 datagrams from the source to DST, captured as
# the sink's k0 receives them; prints the destination MACs seen.
send_and_capture()
{
	local pcap="$TB_TMP/cap.$BATS_TEST_NUMBER.pcap"
	rm -f "$pcap"
	tb_capture "$TB_SINK" k0 20 "$pcap" udp and dst port 9
	tb_udp_send "$TB_SRC" "$1" 9 20
	wait "$TB_CAPTURE_PID" || true
	tb_sink tcpdump -r "$pcap" -e -n 2>/dev/null | awk '{print $4}' | sort -u | tr -d ,
}

@test "a route through a device without XDP transmit (a bridge) passes to the kernel, reported" {
	ip -n "$TB_DUT" link add rsbr0 type bridge
	ip -n "$TB_DUT" link set rsbr0 up
	ip -n "$TB_DUT" addr add 198.18.200.1/24 dev rsbr0
	ip -n "$TB_DUT" neigh replace 198.18.200.2 lladdr $MAC2 dev rsbr0 nud permanent
	rs_start
	ip -n "$TB_DUT" route add $P4 via 198.18.200.2
	tb_until "$P4 to the kernel" route_is $P4 '.type == "kernel"'
	tb_until "the report" rs_event unsupported ".dst == \"$P4\""
	ip -n "$TB_DUT" link del rsbr0
}

@test "a synced route's next hop follows a new MAC of its neighbour, and the traffic with it" {
	local k0 macs
	rs_start
	ip -n "$TB_DUT" route add $P4 via $TB_SINK4
	tb_until "$P4 synced" route_is $P4 ".lladdr == \"$TB_MAC_K0\""
	ip -n "$TB_DUT" neigh replace $TB_SINK4 lladdr $NEW dev d1 nud permanent
	tb_until "the new MAC in the next hop" route_is $P4 ".lladdr == \"$NEW\""
	tb_until "the neigh event" rs_event neigh ".via == \"$TB_SINK4\" and .lladdr == \"$NEW\""
	k0=$(tb_kfwd)
	macs=$(send_and_capture 203.0.113.7)
	tb_expect "destination MAC on the wire" "$macs" = $NEW
	tb_expect "forwarded by xnf, not the kernel" "$(tb_kfwd)" = "$k0"
}

@test "a neighbour that goes makes its next hop pass to the kernel, which resolves it again" {
	local before after
	rs_start
	ip -n "$TB_DUT" route add $P4 via $TB_SINK4
	tb_until "$P4 synced" route_is $P4 ".lladdr == \"$TB_MAC_K0\""
	ip -n "$TB_DUT" neigh del $TB_SINK4 dev d1
	tb_until "state kernel" rs_event neigh ".via == \"$TB_SINK4\" and .state == \"kernel\""
	route_is $P4 '.neighbour == false'
	before=$(tb_stats_json)
	tb_udp_send "$TB_SRC" 203.0.113.7 9 5
	after=$(tb_stats_json)
	tb_expect "passed for want of a neighbour" \
		"$(tb_delta "$before" "$after" d0 '.pass_reasons.no_neigh')" -ge 1
	# The kernel's ARP found the sink again, and the next hop follows.
	tb_until "valid again" rs_event neigh \
		".via == \"$TB_SINK4\" and .state == \"valid\" and .lladdr == \"$TB_MAC_K0\""
	tb_until "$P4 through the sink's MAC" route_is $P4 ".lladdr == \"$TB_MAC_K0\""
}

@test "a route added by hand follows its neighbour under xnf neigh follow" {
	local k0 macs
	tb_xnf route add $P4 via $TB_SINK4
	RS_CMD="neigh follow" rs_start
	ip -n "$TB_DUT" neigh replace $TB_SINK4 lladdr $NEW dev d1 nud permanent
	tb_until "the new MAC" route_is $P4 ".lladdr == \"$NEW\""
	run -0 tb_xnf -j monitor once
	jq -s -e --arg mac "$NEW" 'any(.[]; .command == "neigh follow" and
		(.message | contains($mac)))' <<<"$output"
	k0=$(tb_kfwd)
	macs=$(send_and_capture 203.0.113.8)
	tb_expect "destination MAC on the wire" "$macs" = $NEW
	tb_expect "forwarded by xnf" "$(tb_kfwd)" = "$k0"
	# Back, and the route is still the operator's.
	ip -n "$TB_DUT" neigh replace $TB_SINK4 lladdr $TB_MAC_K0 dev d1 nud permanent
	tb_until "the old MAC" route_is $P4 ".lladdr == \"$TB_MAC_K0\" and .origin == \"static\""
	# Gone: packets pass to the kernel; the last MAC stays, so that xnf
	# save still writes a route that xnf apply takes.
	ip -n "$TB_DUT" neigh del $TB_SINK4 dev d1
	tb_until "no neighbour" route_is $P4 ".neighbour == false and .lladdr == \"$TB_MAC_K0\""
	run -0 tb_xnf save
	[[ "$output" == *"route add $P4 via $TB_SINK4 dev d1 lladdr $TB_MAC_K0"* ]]
}

# neigh_of ADDR: the DUT's neighbour entry of ADDR on d1 (ip -j -d neigh).
neigh_of()
{
	ip -n "$TB_DUT" -j -d neigh show "$1" dev d1 | jq -c '.[0] // empty'
}

# managed ADDR: the DUT's entry of ADDR is managed, made so by xnf.
managed()
{
	neigh_of "$1" | jq -e 'has("managed") and .protocol == "88"' >/dev/null
}

# neigh_in ADDR STATE: the DUT's entry of ADDR is in STATE.
neigh_in()
{
	neigh_of "$1" | jq -e --arg s "$2" '.state | index($s)' >/dev/null
}

# no_neigh ADDR: the DUT has no entry of ADDR on d1.
no_neigh()
{
	[ -z "$(neigh_of "$1")" ]
}

# fast_neigh: the DUT's neighbour timers on d1 short (reachable time
# 0.5-1.5 s, probes 200 ms apart), so that a stale entry is found out in
# seconds.
fast_neigh()
{
	tb_dut sysctl -q -w net.ipv4.neigh.d1.base_reachable_time_ms=1000 \
		net.ipv4.neigh.d1.delay_first_probe_time=1 \
		net.ipv4.neigh.d1.interval_probe_time_ms=500 \
		net.ipv4.neigh.d1.retrans_time_ms=200 >/dev/null
}

# A next hop changes its MAC without telling (no gratuitous ARP; its own
# neighbour cache flushed, so it asks nothing either): the DUT's kernel,
# which XDP's packets never confirm the entry to, would keep the old MAC
# for ever. Managed, the entry is probed, fails, is resolved again.
# A MAC change flushes the sink's neighbour entries, permanent ones too
# (neigh_changeaddr), and an ARP request of the sink's for the DUT would
# tell the DUT the new MAC: the sink sends none (solicitations 0); it
# still answers the DUT's, and learns the DUT's MAC from it.
@test "a next hop that changes its MAC silently under traffic is resolved again, in the sync and under neigh follow" {
	local mode t0 t1 out sent got
	ip -n "$TB_SINK" addr add 203.0.113.1/32 dev lo
	tb_sink sysctl -q -w net.ipv4.neigh.k0.mcast_solicit=0 \
		net.ipv4.neigh.k0.ucast_solicit=0 >/dev/null
	fast_neigh
	for mode in sync follow; do
		ip -n "$TB_SINK" neigh replace $TB_D14 lladdr $TB_MAC_D1 dev k0 nud permanent
		ip -n "$TB_DUT" neigh del $TB_SINK4 dev d1 2>/dev/null || true
		ip -n "$TB_DUT" neigh replace $TB_SINK4 lladdr $TB_MAC_K0 dev d1 nud reachable
		if [ $mode = sync ]; then
			ip -n "$TB_DUT" route add $P4 via $TB_SINK4
			rs_start
		else
			tb_xnf route add $P4 via $TB_SINK4
			RS_CMD="neigh follow" rs_start
		fi
		tb_until "$P4 through the sink" route_is $P4 \
			".lladdr == \"$TB_MAC_K0\" and .neighbour"
		tb_ping_ok "$TB_SRC" 203.0.113.1 5
		out="$TB_TMP/ping.$mode"
		tb_bg "$TB_SRC" timeout -s INT 120 ping -n -i 0.1 203.0.113.1 >"$out" 2>&1
		local ping=$TB_BG_PID
		sleep 1
		t0=$(date +%s%N)
		ip -n "$TB_SINK" link set k0 address $NEW
		ip -n "$TB_SINK" neigh flush dev k0 nud all
		# Within the reachable time and the probes (seconds), far
		# inside TB_WAIT.
		tb_until "$mode: the new MAC in the next hop" route_is $P4 \
			".lladdr == \"$NEW\" and .neighbour"
		t1=$(date +%s%N)
		tb_until "$mode: replies again" tb_ping_ok "$TB_SRC" 203.0.113.1 3
		kill -INT $ping
		wait $ping || true
		sent=$(awk '/packets transmitted/ { print $1 }' "$out")
		got=$(awk '/packets transmitted/ { print $4 }' "$out")
		echo "# $mode: next hop's new MAC in xnf after $(((t1 - t0) / 1000000)) ms;" \
			"$((sent - got)) of $sent pings lost (100 ms apart)" >&3
		tb_expect "$mode: the replies are the ping's count" \
			"$(grep -c 'bytes from' "$out")" -eq "$got"
		tb_expect "$mode: replies after the change" "$got" -gt 10
		rs_stop
		if [ $mode = sync ]; then
			ip -n "$TB_DUT" route del $P4
			tb_xnf route sync flush
		else
			tb_xnf route del $P4
		fi
		ip -n "$TB_SINK" link set k0 address $TB_MAC_K0
	done
}

@test "next hops' neighbours are managed while a route uses them; an operator's are left alone" {
	ip -n "$TB_DUT" neigh del $TB_SINK4 dev d1
	ip -n "$TB_DUT" neigh replace $TB_SINK4 lladdr $TB_MAC_K0 dev d1 nud reachable
	# By hand: made managed by route add, released by route del.
	tb_xnf route add $P4 via $TB_SINK4
	managed $TB_SINK4
	tb_xnf route add $HAND via $GW2
	neigh_in $GW2 PERMANENT
	! managed $GW2
	tb_xnf route del $P4
	no_neigh $TB_SINK4
	tb_xnf route del $HAND
	neigh_in $GW2 PERMANENT
	# An operator's managed entry stays when the route goes.
	ip -n "$TB_DUT" neigh replace $TB_SINK4 dev d1 managed
	tb_xnf route add $P4 via $TB_SINK4
	tb_xnf route del $P4
	neigh_of $TB_SINK4 | jq -e 'has("managed") and .protocol == null'
	# The sync: kept while the kernel's route is there.
	ip -n "$TB_DUT" neigh del $TB_SINK4 dev d1
	rs_start
	ip -n "$TB_DUT" route add $P4 via $TB_SINK4
	tb_until "$P4 synced" route_is $P4 ".neighbour"
	managed $TB_SINK4
	# The operator made it permanent: left so; made dynamic: managed.
	ip -n "$TB_DUT" neigh replace $TB_SINK4 lladdr $TB_MAC_K0 dev d1 nud permanent
	sleep 0.5
	neigh_in $TB_SINK4 PERMANENT
	ip -n "$TB_DUT" neigh replace $TB_SINK4 lladdr $TB_MAC_K0 dev d1 nud stale
	tb_until "managed again" managed $TB_SINK4
	# The sink is a host of d1's subnet too: its host entry keeps it
	# after the route; the sync's flush releases it.
	ip -n "$TB_DUT" route del $P4
	tb_until "$P4 gone" route_gone $P4
	managed $TB_SINK4
	rs_stop
	tb_xnf route sync flush
	no_neigh $TB_SINK4
}

# Traffic between hosts of the DUT's two connected subnets (the source's
# and the sink's LANs), the most common traffic of a LAN router: host
# entries forward it in XDP.
@test "hosts of connected subnets with a known MAC are forwarded in XDP; unresolved ones pass to the kernel" {
	local before after k0 dst
	rs_start
	for dst in $TB_SINK4/32 $TB_SRC4/32 $TB_SINK6/128 $TB_SRC6/128; do
		tb_until "the host entry $dst" route_is $dst \
			'.type == "unicast" and .host and .path == "xdp" and .via == (.dst | sub("/.*"; ""))'
	done
	run -0 tb_xnf -j route get $TB_SINK4
	jq -e ".host and .path == \"xdp\" and .dev == \"d1\" and .lladdr == \"$TB_MAC_K0\"" <<<"$output"
	run -0 tb_xnf route get $TB_SINK4
	[[ "$output" == *" host path xdp"* ]]
	# No neighbour: the subnet's route, the kernel's path.
	run -0 tb_xnf -j route get 198.51.100.77
	jq -e '.type == "kernel" and .dst == "198.51.100.0/24" and (.host | not) and .path == "kernel"' <<<"$output"
	run -0 tb_xnf route get 198.51.100.77
	[[ "$output" == *" path kernel"* ]]
	before=$(tb_stats_json)
	k0=$(tb_kfwd)
	tb_ping_ok "$TB_SRC" $TB_SINK4 20
	tb_ping_ok "$TB_SRC" $TB_SINK6 20
	after=$(tb_stats_json)
	tb_expect "kernel forwarded nothing" "$(tb_kfwd)" = "$k0"
	tb_expect "d0's requests redirected" \
		"$(tb_chain_delta "$before" "$after" d0 redirect)" -ge 40
	tb_expect "d1's replies redirected" \
		"$(tb_chain_delta "$before" "$after" d1 redirect)" -ge 40
	tb_expect "nothing passed to the kernel's FIB" \
		"$(tb_delta "$before" "$after" d0 '.pass_reasons.fib_other')" -eq 0

	# In step with the neighbour table: a new host, a new MAC, a failed
	# or deleted one.
	ip -n "$TB_DUT" neigh replace 198.51.100.20 lladdr $MAC2 dev d1 nud stale
	tb_until "a new host" route_is 198.51.100.20/32 ".host and .lladdr == \"$MAC2\""
	ip -n "$TB_DUT" neigh replace 198.51.100.20 lladdr $MAC3 dev d1 nud reachable
	tb_until "its new MAC" route_is 198.51.100.20/32 ".lladdr == \"$MAC3\""
	ip -n "$TB_DUT" neigh replace 198.51.100.20 dev d1 nud failed 2>/dev/null ||
		ip -n "$TB_DUT" neigh del 198.51.100.20 dev d1
	tb_until "gone with it" route_gone 198.51.100.20/32
	ip -n "$TB_DUT" neigh replace 198.51.100.21 lladdr $MAC2 dev d1 nud permanent
	tb_until "a permanent one" route_is 198.51.100.21/32 ".host"
	ip -n "$TB_DUT" neigh del 198.51.100.21 dev d1
	tb_until "deleted" route_gone 198.51.100.21/32
	# A route of its own (more specific than the subnet) takes it.
	ip -n "$TB_DUT" neigh replace 198.51.100.22 lladdr $MAC2 dev d1 nud permanent
	tb_until "host .22" route_is 198.51.100.22/32 ".host"
	ip -n "$TB_DUT" route add 198.51.100.16/28 via $GW3
	tb_until "the /28's route takes .22" route_gone 198.51.100.22/32
	ip -n "$TB_DUT" route del 198.51.100.16/28
	tb_until "back" route_is 198.51.100.22/32 ".host"
	ip -n "$TB_DUT" neigh del 198.51.100.22 dev d1
	# Derived state: not saved.
	tb_xnf save >"$TB_TMP/save.out"
	! grep -q "$TB_SINK4/32" "$TB_TMP/save.out"
}

# Hosts of the connected subnets against the kernel's FIB: every
# destination of d1's subnet (neighbours in every state, and none) gets the
# path the kernel's `ip route get` and neighbour table give it.
@test "connected-subnet hosts: xnf's tables answer as the kernel's FIB and neighbour table" {
	local i n
	for i in $(seq 10 59); do
		case $((i % 5)) in
		0) ip -n "$TB_DUT" neigh replace 198.51.100.$i lladdr 02:78:6e:00:01:$i dev d1 nud permanent ;;
		1) ip -n "$TB_DUT" neigh replace 198.51.100.$i lladdr 02:78:6e:00:01:$i dev d1 nud stale ;;
		2) ip -n "$TB_DUT" neigh replace 198.51.100.$i lladdr 02:78:6e:00:01:$i dev d1 nud reachable ;;
		3) ip -n "$TB_DUT" neigh replace 198.51.100.$i dev d1 nud incomplete 2>/dev/null || true ;;
		4) ;; # none
		esac
	done
	rs_start
	: >"$TB_TMP/hosts.gets"
	for i in $(seq 1 70); do
		echo "route get 198.51.100.$i" >>"$TB_TMP/hosts.gets"
	done
	tb_run "$TB_DUT" ip -force -j -batch "$TB_TMP/hosts.gets" \
		>"$TB_TMP/hosts.kernel" 2>/dev/null || true
	ip -n "$TB_DUT" -j neigh show >"$TB_TMP/hosts.neigh"
	tb_xnf -j -b "$TB_TMP/hosts.gets" >"$TB_TMP/hosts.xnf"
	n=$(python3 "$BATS_TEST_DIRNAME/lib/fibgen.py" compare "$TB_TMP/hosts.gets" \
		"$TB_TMP/hosts.kernel" "$TB_TMP/hosts.xnf" "$TB_TMP/hosts.neigh")
	tb_expect "destinations compared" "$n" -eq 70
}

@test "the sync refuses to start while routes added by hand are in the tables" {
	tb_xnf route add $P4 via $TB_SINK4
	run -1 tb_xnf route sync
	[[ "$output" == *"Error: 1 route added by hand is in the tables"* ]]
	run -1 tb_xnf -j route sync
	jq -e '.error' <<<"$output"
	route_is $P4 '.origin == "static"'
}

# One source of truth: while a sync owns the tables (running or stopped),
# routes are not changed by hand; `route sync flush` hands them back.
@test "routes by hand are refused while a sync owns the tables; flush hands them back" {
	ip -n "$TB_DUT" route add $P4 via $GW2
	rs_start
	tb_until "the sync to mirror $P4" route_is $P4 '.origin == "sync"'
	run -1 tb_xnf route add $HAND via $GW2
	run -1 tb_xnf route del $P4
	run -1 tb_xnf -j route replace $P4 via $GW3
	jq -e '.error | type == "string"' <<<"$output"
	route_is $P4 '.origin == "sync" and .via == "'$GW2'"'
	# The configuration holds no synced route, and applying it back
	# leaves them alone.
	tb_xnf save >"$TB_TMP/saved.conf"
	run -1 grep -q "$P4" "$TB_TMP/saved.conf"
	tb_xnf apply "$TB_TMP/saved.conf"
	route_is $P4 '.origin == "sync" and .via == "'$GW2'"'
	rs_stop
	# Stopped, its routes keep forwarding and still belong to it.
	route_is $P4 '.origin == "sync"'
	run -1 tb_xnf route add $HAND via $GW2
	tb_xnf route sync flush
	route_gone $P4
	tb_xnf route add $HAND via $GW2
	route_is $HAND '.origin == "static" and .via == "'$GW2'"'
	tb_xnf route del $HAND
}

# Routes by hand are refused while every l3fwd attached forwards by the
# kernel's FIB (which never reads them), accepted again with one in lpm.
@test "routes by hand are refused while every l3fwd runs in fib mode" {
	tb_xnf chain set d0 l3fwd fib
	tb_xnf route add $HAND via $GW2
	tb_xnf route del $HAND
	tb_xnf chain set d1 l3fwd fib
	run -1 tb_xnf route add $HAND via $GW2
	route_gone $HAND
	tb_xnf chain set d0 l3fwd lpm
	tb_xnf route add $HAND via $GW2
	route_is $HAND '.origin == "static"'
	tb_xnf route del $HAND
	tb_xnf chain set d1 l3fwd lpm
}

# `apply check` runs every check `apply` runs: a file with a route by
# hand is refused by both while a sync owns the tables, and while every
# l3fwd the file attaches forwards by the kernel's FIB; the file as saved
# passes both.
@test "apply check refuses the routes by hand that apply refuses" {
	ip -n "$TB_DUT" route add $P4 via $GW2
	rs_start
	tb_until "the sync to mirror $P4" route_is $P4 '.origin == "sync"'
	tb_xnf save >"$TB_TMP/saved.conf"
	{ cat "$TB_TMP/saved.conf"; echo "route add $HAND via $GW2 dev d1 lladdr $MAC2"; } \
		>"$TB_TMP/hand.conf"
	run -1 tb_xnf apply check "$TB_TMP/hand.conf"
	run -1 tb_xnf apply "$TB_TMP/hand.conf"
	run -1 tb_xnf -b - <<<"route add $HAND blackhole"
	route_gone $HAND
	run -0 tb_xnf apply check "$TB_TMP/saved.conf"
	run -0 tb_xnf apply "$TB_TMP/saved.conf"
	rs_stop
	tb_xnf route sync flush

	sed 's/^\(attach d[01] chain l3fwd .*\) lpm/\1 fib/' "$TB_TMP/hand.conf" >"$TB_TMP/fib.conf"
	[ "$(grep -c '^attach d[01] .* fib' "$TB_TMP/fib.conf")" -eq 2 ]
	run -1 tb_xnf apply check "$TB_TMP/fib.conf"
	run -1 tb_xnf apply "$TB_TMP/fib.conf"
	route_gone $HAND
	tb_expect "d0 in lpm" "$(tb_xnf -j status | jq -r '.devices[] | select(.dev == "d0") | .l3fwd')" = lpm
	# With one l3fwd left in lpm, xnf's routes are read: accepted.
	sed '0,/ fib$/s/ fib$/ lpm/' "$TB_TMP/fib.conf" >"$TB_TMP/one.conf"
	run -0 tb_xnf apply check "$TB_TMP/one.conf"
}

# `xnf route flush` removes every route written by hand, both families
# and multipath, as one edit of the candidate (a batch that flushes and
# adds keeps what it adds), and never a route the sync mirrors.
@test "route flush removes the routes by hand and leaves the synced ones" {
	local n
	tb_xnf route add $P4 nexthop via $GW2 nexthop via $GW3
	tb_xnf route add $HAND via $GW2
	tb_xnf route add 2001:db8:99::/48 via $GW2_6
	tb_xnf -b - <<-EOB
		route flush
		route add $HAND blackhole
	EOB
	n=$(tb_xnf -j route show | jq '.routes | length')
	tb_expect "routes after the batch" "$n" -eq 1
	route_is $HAND '.type == "blackhole" and .origin == "static"'
	tb_xnf route flush
	tb_expect "routes after the flush" "$(tb_xnf -j route show | jq '.routes | length')" -eq 0
	run -0 tb_xnf route flush

	ip -n "$TB_DUT" route add $P4 via $GW2
	rs_start
	tb_until "the sync to mirror $P4" route_is $P4 '.origin == "sync"'
	run -0 tb_xnf route flush
	route_is $P4 '.origin == "sync"'
	run -1 tb_xnf route flush bogus
}

# kernel_set PREFIX...: the kernel's routes inside the test's ranges, as
# sorted "dst type gateways" lines; xnf_set the same of xnf's tables.
kernel_set()
{
	{
		ip -n "$TB_DUT" -j route show table main root 198.18.0.0/15
		ip -n "$TB_DUT" -j -6 route show table main root 2001:db8:1000::/36
	} | jq -r '.[] | (if (.dst | test("/")) then .dst
		elif (.dst | test(":")) then .dst + "/128"
		else .dst + "/32" end) + " " +
		([.gateway] + [.nexthops[]?.gateway] | map(select(. != null)) |
			sort | join(","))' | sort
}

xnf_set()
{
	tb_xnf -j route show | jq -r '.routes[] |
		select(.dst | test("^198\\.1[89]\\.|^2001:db8:1[0-9a-f]{3}:")) |
		.dst + " " + ([.via] + [.nexthops[]?.via] |
			map(select(. != null)) | sort | join(","))' | sort
}

sets_equal()
{
	diff <(kernel_set) <(xnf_set) >/dev/null
}

@test "an overrun ends in a resync that leaves no stale route and the kernel's table" {
	local i pid
	rs_start rcvbuf 4096 resync 0
	# 300 routes the sync knows...
	for ((i = 0; i < 300; i++)); do
		echo "route add 198.18.$((i / 256)).$((i % 256))/32 via $GW2"
	done | ip -n "$TB_DUT" -batch -
	tb_until "the first routes" sets_equal
	# ...then, while it reads nothing, a burst the socket cannot hold:
	# all of them deleted, 3000 others added.
	pid=$(jq -r 'select(.event == "started") | .pid' "$TB_TMP/sync.out")
	kill -STOP "$pid"
	{
		for ((i = 0; i < 300; i++)); do
			echo "route del 198.18.$((i / 256)).$((i % 256))/32"
		done
		for ((i = 0; i < 3000; i++)); do
			echo "route add 198.19.$((i / 256)).$((i % 256))/32 via $GW3"
		done
	} | ip -n "$TB_DUT" -batch -
	kill -CONT "$pid"
	tb_until "an overrun" rs_event overrun
	tb_until "the resync after it" rs_event resync '.reason == "overrun"'
	tb_until "the table equal to the kernel's" sets_equal
	tb_expect "stale routes" "$(xnf_set | grep -c '^198\.18\.' || true)" -eq 0
	tb_expect "routes" "$(xnf_set | wc -l)" -eq 3000
}

# routes_in PREFIX N: xnf's tables hold N routes whose dst starts so.
routes_in()
{
	[ "$(tb_xnf -j route show | jq --arg p "$1" \
		'[.routes[] | select(.dst | startswith($p))] | length')" -eq "$2" ]
}

@test "a sync killed between a batch's writes and its commit leaves the last complete set" {
	local before i rc
	# Batch 1 is the first sync; it dies on batch 2, before the commit.
	RS_ENV="XNF_RTSYNC_KILL_BATCH=2" rs_start
	before=$(tb_xnf -j route show)
	{
		for ((i = 0; i < 200; i++)); do
			echo "route add 198.18.0.$i/32 via $GW2"
		done
		echo "route del 198.51.100.0/24 dev d1"
	} | ip -n "$TB_DUT" -batch -
	rc=0
	wait "$SYNC_PID" || rc=$?
	SYNC_PID=
	tb_expect "killed by SIGKILL (timeout passes 128 + 9 on)" "$rc" -eq 137
	tb_expect "the live table is the one before the batch" \
		"$(tb_xnf -j route show)" = "$before"
	# A new sync converges on what the kernel has.
	ip -n "$TB_DUT" route add 198.51.100.0/24 dev d1 proto kernel scope link src $TB_D14
	rs_start
	tb_until "the 200 routes" routes_in 198.18.0. 200
	route_is 198.51.100.0/24 '.type == "kernel"'
}

# A restart converges to the kernel's table, removals included: a route
# the kernel deleted while the sync was down goes at the start, and the
# start counts it (issue 33: it stayed until the first periodic resync,
# never with resync 0).
@test "a restarted sync removes the routes the kernel deleted while it was down" {
	rs_start
	ip -n "$TB_DUT" route add $STALE via $GW2
	tb_until "$STALE mirrored" route_is $STALE '.origin == "sync"'
	rs_stop
	ip -n "$TB_DUT" route del $STALE
	route_is $STALE '.origin == "sync"'
	rs_start resync 0
	route_gone $STALE
	rs_event started '.deleted == 1'
	rs_event resync '.reason == "start" and .deleted == 1'
	# Nothing else had changed: a second restart writes nothing.
	rs_stop
	rs_start resync 0
	rs_event started '.added == 0 and .replaced == 0 and .deleted == 0'
}

# zombie PID: PID has exited and waits for its parent to reap it.
zombie()
{
	[ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]
}

# Liveness is the sync's lock, which a dead process cannot hold: a sync
# killed by SIGKILL is replaced at once, even while its pid still exists
# (a zombie its parent has not reaped yet), and the new one converges.
# While one runs, a second is refused.
@test "a sync killed by SIGKILL is replaced at once, even as a zombie, and converges" {
	local pid parent rc
	rs_start
	ip -n "$TB_DUT" route add $STALE via $GW2
	tb_until "$STALE mirrored" route_is $STALE '.origin == "sync"'
	run -1 tb_xnf -j route sync
	jq -e '.error | test("pid")' <<<"$output"
	pid=$(jq -r 'select(.event == "started") | .pid' "$TB_TMP/sync.out")
	# Its parent (timeout) stopped, the killed sync stays a zombie.
	parent=$SYNC_PID
	kill -STOP "$parent"
	kill -KILL "$pid"
	tb_until "the sync a zombie" zombie "$pid"
	ip -n "$TB_DUT" route del $STALE
	rc=0
	rs_start resync 0 || rc=$?
	kill -CONT "$parent"
	wait "$parent" 2>/dev/null || true
	tb_expect "the new sync started" "$rc" -eq 0
	route_gone $STALE
	rs_event started '.deleted == 1'
}

# The issue's burst: a sync killed by SIGKILL, then the kernel's table
# changes by thousands of routes while none runs; the restart's first
# sync alone makes xnf's table the kernel's (no periodic resync, no link
# event), stale routes removed and counted.
@test "a sync killed before a burst of changes converges at its restart, stale routes removed" {
	local i pid
	rs_start resync 0
	for ((i = 0; i < 300; i++)); do
		echo "route add 198.18.$((i / 256)).$((i % 256))/32 via $GW2"
	done | ip -n "$TB_DUT" -batch -
	tb_until "the first routes" sets_equal
	pid=$(jq -r 'select(.event == "started") | .pid' "$TB_TMP/sync.out")
	kill -KILL "$pid"
	wait "$SYNC_PID" 2>/dev/null || true
	SYNC_PID=
	{
		for ((i = 0; i < 300; i++)); do
			echo "route del 198.18.$((i / 256)).$((i % 256))/32"
		done
		for ((i = 0; i < 3000; i++)); do
			echo "route add 198.19.$((i / 256)).$((i % 256))/32 via $GW3"
		done
	} | ip -n "$TB_DUT" -batch -
	rs_start resync 0
	sets_equal
	rs_event started '.deleted == 300 and .added == 3000'
}

# pcap_count FILE: the packets a capture wrote.
pcap_count()
{
	tcpdump -r "$1" -n 2>/dev/null | wc -l
}

# A route's MTU is honoured (issue 33): a DF packet larger than it goes to
# the kernel, whose ICMP "fragmentation needed" (MTU 1400) reaches the
# sender, as path MTU discovery needs; one that fits is forwarded by XDP.
@test "a route's MTU: a larger DF packet gets the kernel's frag-needed at the source, one that fits is forwarded by XDP" {
	local before after k fits=$TB_TMP/fits.pcap icmp=$TB_TMP/fragneeded.pcap
	ip -n "$TB_DUT" route add $MTU_PFX via $TB_SINK4 mtu 1400
	rs_start
	tb_until "$MTU_PFX mirrored" route_is $MTU_PFX '.type == "unicast" and .origin == "sync"'
	# 1400 bytes (IPv4 total length), DF: through XDP to the sink.
	k=$(tb_kfwd)
	tb_capture "$TB_SINK" k0 1 "$fits" icmp and 'ip[2:2] == 1400'
	tb_src ping -M do -s 1372 -c 1 -W 1 203.0.113.241 >/dev/null || true
	wait "$TB_CAPTURE_PID" || true
	tb_expect "the 1400-byte packet at the sink" "$(pcap_count "$fits")" -eq 1
	tb_expect "forwarded by xnf, not the kernel" "$(tb_kfwd)" = "$k"
	# 1422 bytes, DF: to the kernel, which answers the source.
	before=$(tb_stats_json)
	tb_capture "$TB_SRC" s0 1 "$icmp" \
		'icmp[0] == 3 and icmp[1] == 4 and icmp[6:2] == 1400'
	tb_src ping -M do -s 1394 -c 1 -W 1 203.0.113.241 >/dev/null || true
	wait "$TB_CAPTURE_PID" || true
	after=$(tb_stats_json)
	tb_expect "ICMP fragmentation needed, MTU 1400, at the source" \
		"$(pcap_count "$icmp")" -eq 1
	tb_expect "passed to the kernel (frag_needed)" \
		"$(tb_delta "$before" "$after" d0 '.pass_reasons.frag_needed')" -eq 1
	route_is $MTU_PFX '.mtu == 1400'
	run -0 tb_xnf -j route get 203.0.113.241
	jq -e '.mtu == 1400 and .reason == null' <<<"$output"

	# The egress device's MTU, on a route without one: the same answer.
	ip -n "$TB_DUT" route add $P4 via $TB_SINK4
	tb_until "$P4 mirrored" route_is $P4 '.type == "unicast" and .mtu == null'
	ip -n "$TB_DUT" link set d1 mtu 1300
	tb_capture "$TB_SRC" s0 1 "$icmp.dev" \
		'icmp[0] == 3 and icmp[1] == 4 and icmp[6:2] == 1300'
	tb_src ping -M do -s 1372 -c 1 -W 1 203.0.113.7 >/dev/null || true
	wait "$TB_CAPTURE_PID" || true
	ip -n "$TB_DUT" link set d1 mtu 1500
	tb_expect "ICMP fragmentation needed, MTU 1300, at the source" \
		"$(pcap_count "$icmp.dev")" -eq 1
}

# An encapsulation xnf cannot add in XDP (issue 33): the route passes to
# the kernel, reported, and packets leave with the segment routing header.
@test "a route with an encapsulation (seg6) passes to the kernel, reported, and packets leave encapsulated" {
	local cap=$TB_TMP/srh.pcap before after
	ip -n "$TB_DUT" route add $ENCAP encap seg6 mode encap segs $GW2_6 \
		via $TB_SINK4 dev d1
	rs_start
	tb_until "$ENCAP mirrored" route_is $ENCAP '.origin == "sync"'
	before=$(tb_stats_json)
	# IPv6 with a routing header (43), to the segment, on the sink's link.
	tb_capture "$TB_SINK" k0 1 "$cap" ip6 and 'ip6[6] == 43'
	tb_udp_send "$TB_SRC" 203.0.113.225 9 1
	wait "$TB_CAPTURE_PID" || true
	after=$(tb_stats_json)
	tb_expect "left with its segment routing header" "$(pcap_count "$cap")" -eq 1
	tb_expect "passed to the kernel (fib_other)" \
		"$(tb_delta "$before" "$after" d0 '.pass_reasons.fib_other')" -eq 1
	route_is $ENCAP '.type == "kernel" and .reason == "encap"'
	tb_until "the report" rs_event unsupported ".dst == \"$ENCAP\""
	run -0 tb_xnf -j route get 203.0.113.225
	jq -e '.type == "kernel" and .reason == "encap"' <<<"$output"
}

@test "on a 10,000-route table, xnf's tables answer as the kernel's FIB" {
	local n
	python3 "$BATS_TEST_DIRNAME/lib/fibgen.py" routes 10000 1 $TB_SINK4 $GW2 $GW3 \
		>"$TB_TMP/fib.batch"
	ip -n "$TB_DUT" -batch "$TB_TMP/fib.batch"
	rs_start
	tb_until "the whole table" sets_equal
	python3 "$BATS_TEST_DIRNAME/lib/fibgen.py" gets "$TB_TMP/fib.batch" 10000 2 \
		>"$TB_TMP/fib.gets"
	tb_run "$TB_DUT" ip -force -j -batch "$TB_TMP/fib.gets" \
		>"$TB_TMP/fib.kernel" 2>/dev/null || true
	tb_xnf -j -b "$TB_TMP/fib.gets" >"$TB_TMP/fib.xnf"
	n=$(python3 "$BATS_TEST_DIRNAME/lib/fibgen.py" compare "$TB_TMP/fib.gets" \
		"$TB_TMP/fib.kernel" "$TB_TMP/fib.xnf")
	tb_expect "destinations compared" "$n" -eq 10000
}

# The table as ip route names it: main by default, a name of rt_tables
# (a private one, on a tmpfs in a mount namespace of the sync's own), or
# the number; JSON keeps the number, with the name beside it. Last: its
# syncs of other tables would be in the change log the first test reads.
@test "the sync names its table as ip route does, and keeps its number in JSON" {
	local wrap=$TB_TMP/rt_tables.sh

	rs_start
	tb_expect "the main table" \
		"$(jq -sc 'map(select(.event == "started"))[0] | [.table, .table_name]' \
			"$TB_TMP/sync.out")" = '[254,"main"]'
	rs_stop
	printf '%s\n' '#!/bin/sh' \
		'mount -t tmpfs tmpfs /etc/iproute2 &&' \
		'printf "254\tmain\n100\tisp1\n" >/etc/iproute2/rt_tables && exec "$@"' >"$wrap"
	chmod +x "$wrap"
	RS_ENV="unshare -m $wrap" rs_start table isp1
	tb_expect "a table of rt_tables" \
		"$(jq -sc 'map(select(.event == "started"))[0] | [.table, .table_name]' \
			"$TB_TMP/sync.out")" = '[100,"isp1"]'
	rs_stop
	rs_start table 101
	tb_expect "a table without a name" \
		"$(jq -sc 'map(select(.event == "started"))[0] | [.table, .table_name]' \
			"$TB_TMP/sync.out")" = '[101,"101"]'
}
