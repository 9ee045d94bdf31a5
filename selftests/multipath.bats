#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# multipath.bats - `xnf route add PREFIX nexthop NH nexthop NH ...`: what
# `route show -j` says of the group, that a replace with one next hop fewer
# keeps the others' buckets (resilient), and traffic over veths: many flows
# from the source through l3fwd on d0 to a route over d1, d2 and d3 (three
# ports of the sink), each flow on one port only, all ports used, and a
# next hop removed moves its own flows only. Saving and applying multipath
# routes: config.bats. The hash itself (symmetric, fragments) and the
# userspace l3fwd: the unit tests (selftests/unit/multipath.c,
# unf_multipath_vs_xdp).

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=120}"

load ../testbed/testbed

GEN=${GEN:-$(dirname "$XNF")/xnf-gen}

MP=203.0.113.0/24
NH_A=02:78:6e:00:0f:01
NH_B=02:78:6e:00:0f:02

# Two more ports between the DUT and the sink, d2-k2 and d3-k3, besides
# d1-k0; no addresses, and no IPv6 on the DUT's ends (nor on s0, d0 and
# d1 in the traffic test), so that the only frames on them are the test's.
extra_ports()
{
	local i
	for i in 2 3; do
		ip -n "$TB_SINK" link add k$i address 02:78:6e:00:0e:0$i type veth \
			peer name d$i address 02:78:6e:00:0d:0$i netns "$TB_DUT" &&
		tb_dut sysctl -q -w net.ipv6.conf.d$i.disable_ipv6=1 &&
		tb_sink sysctl -q -w net.ipv6.conf.k$i.disable_ipv6=1 &&
		ip -n "$TB_DUT" link set d$i up &&
		ip -n "$TB_SINK" link set k$i up &&
		# NAPI on k$i, which XDP redirects into d$i need.
		tb_sink ethtool -K k$i gro on >/dev/null || return 1
	done
}

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
	[ -z "$TB_SKIP" ] || return 0
	tb_testbed_up l3fwd && extra_ports
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
	tb_xnf -j route show | jq -ec --arg d $MP '.routes[] | select(.dst == $d)'
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
		"$(tb_xnf -j route show | jq -r '.routes[] | select(.dst == "198.51.100.0/24") | .group')" = null
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

# ---- traffic ----------------------------------------------------------------

FLOWS=60 PER_FLOW=4

# Each egress port's next hop: a MAC of no host, so the sink's kernel
# drops what a capture saw (no ICMP back).
declare -gA HOP=([d1]=02:78:6e:00:0c:01 [d2]=02:78:6e:00:0c:02 [d3]=02:78:6e:00:0c:03)
declare -gA PEER=([d1]=k0 [d2]=k2 [d3]=k3)

# Counters of one round: the veths' (s0 into d0; d1..d3 into the sink)
# and xnf's on d0.
round_counters()
{
	local d
	echo "s0.tx_dropped $(tb_link "$TB_SRC" s0 tx.dropped)"
	for d in d1 d2 d3; do
		echo "$d.tx_dropped $(tb_link "$TB_DUT" $d tx.dropped)"
		echo "$d.rx $(tb_link "$TB_SINK" ${PEER[$d]} rx.packets)"
	done
	tb_xnf -j stats | jq -r '.devices[] | select(.dev == "d0") |
		"xnf.drop \([.drop_reasons[]] | add // 0)", "xnf.pass \([.pass_reasons[]] | add // 0)"'
}

# delta BEFORE AFTER KEY
delta()
{
	echo $(($(awk -v k="$3" '$1 == k { print $2 }' <<<"$2") -
		$(awk -v k="$3" '$1 == k { print $2 }' <<<"$1")))
}

# Frames of the round that arrived at a sink port or were counted
# dropped on the way.
round_seen()
{
	local now k sum=0
	now=$(round_counters)
	for k in d1.rx d2.rx d3.rx s0.tx_dropped d1.tx_dropped d2.tx_dropped \
		d3.tx_dropped xnf.drop xnf.pass; do
		sum=$((sum + $(delta "$ROUND0" "$now" $k)))
	done
	echo $sum
}

round_done() { (($(round_seen) >= $1)); }

# traffic_round NAME: FLOWS flows of PER_FLOW frames each from s0 to
# 203.0.113.1 (flow i from source port 2000+i), captured on every sink
# port; writes "SPORT DEV" per frame that arrived to $TB_TMP/NAME.flows
# and checks that every frame sent arrived or was counted dropped.
traffic_round()
{
	local name=$1 d sent pid now arrived drops
	local -A cap=()
	for d in d1 d2 d3; do
		tb_capture "$TB_SINK" ${PEER[$d]} 100000 "$TB_TMP/$name.$d.pcap" \
			"udp and src host $TB_SRC4 and dst port 9"
		cap[$d]=$TB_CAPTURE_PID
	done
	ROUND0=$(round_counters)
	tb_src "$GEN" s0 count $((FLOWS * PER_FLOW)) flows $FLOWS sport 2000 \
		dport 9 rate 1000 duration 100 size 64 src $TB_SRC4 \
		dst 203.0.113.1 smac $TB_MAC_S0 dmac $TB_MAC_D0 -j >"$TB_TMP/$name.gen.json"
	sent=$(jq .sent "$TB_TMP/$name.gen.json")
	tb_expect "sent" "$sent" -eq $((FLOWS * PER_FLOW))
	tb_until "every frame to arrive or be counted dropped" round_done "$sent"
	now=$(round_counters)
	arrived=$(($(delta "$ROUND0" "$now" d1.rx) + $(delta "$ROUND0" "$now" d2.rx) +
		$(delta "$ROUND0" "$now" d3.rx)))
	drops=$(($(round_seen) - arrived))
	echo "$name: sent $sent, arrived $arrived (d1 $(delta "$ROUND0" "$now" d1.rx)," \
		"d2 $(delta "$ROUND0" "$now" d2.rx), d3 $(delta "$ROUND0" "$now" d3.rx))," \
		"counted dropped $drops" >&2
	tb_expect "sent = arrived + counted drops" "$(round_seen)" -eq "$sent"
	tb_expect "xnf dropped or passed none" \
		"$(($(delta "$ROUND0" "$now" xnf.drop) + $(delta "$ROUND0" "$now" xnf.pass)))" -eq 0
	: >"$TB_TMP/$name.flows"
	for d in d1 d2 d3; do
		tb_bg_stop "${cap[$d]}"
		# "... IP 192.0.2.1.2003 > 203.0.113.1.9: UDP ...": the source
		# port is the fifth field of the third word.
		tcpdump -r "$TB_TMP/$name.$d.pcap" -n 2>/dev/null |
			awk -v d=$d '{ split($3, a, "."); print a[5], d }' >>"$TB_TMP/$name.flows"
		tb_expect "$d: frames captured = frames the port received" \
			"$(grep -c " $d\$" "$TB_TMP/$name.flows")" -eq "$(delta "$ROUND0" "$now" $d.rx)"
	done
	# Every flow arrived, unless a veth dropped all its frames.
	tb_expect "flows seen" "$(awk '{ print $1 }' "$TB_TMP/$name.flows" | sort -u | wc -l)" \
		-ge $((FLOWS - drops))
	# No flow split: one port per flow.
	tb_expect "flows on more than one port" \
		"$(sort -u "$TB_TMP/$name.flows" | awk '{ print $1 }' | uniq -d | wc -l)" -eq 0
}

# port_of NAME: "SPORT DEV" per flow of the round NAME.
port_of() { sort -u "$TB_TMP/$1.flows"; }

@test "traffic: a flow takes one next hop, all take some, a removed next hop moves only its own" {
	[ -x "$GEN" ] || skip "xnf-gen not built"
	local d on moved=0 stayed=0 sport dev1 dev2
	tb_src sysctl -q -w net.ipv6.conf.s0.disable_ipv6=1
	tb_dut sysctl -q -w net.ipv6.conf.d0.disable_ipv6=1 net.ipv6.conf.d1.disable_ipv6=1
	tb_xnf route add $MP nexthop dev d1 lladdr ${HOP[d1]} \
		nexthop dev d2 lladdr ${HOP[d2]} nexthop dev d3 lladdr ${HOP[d3]}

	traffic_round three
	for d in d1 d2 d3; do
		on=$(awk -v d=$d '$2 == d' <(port_of three) | wc -l)
		echo "flows on $d: $on" >&2
		tb_expect "flows on $d" "$on" -gt 0
	done

	# d3 leaves the group: only its flows move.
	tb_xnf route replace $MP nexthop dev d1 lladdr ${HOP[d1]} nexthop dev d2 lladdr ${HOP[d2]}
	traffic_round two
	tb_expect "flows on d3 after it left" "$(awk '$2 == "d3"' <(port_of two) | wc -l)" -eq 0
	while read -r sport dev1; do
		dev2=$(awk -v s="$sport" '$1 == s { print $2 }' <(port_of two))
		[ -n "$dev2" ] || continue # all its frames dropped by a veth
		if [ "$dev1" = d3 ]; then
			moved=$((moved + 1))
		else
			tb_expect "flow from port $sport stays on $dev1" "$dev2" = "$dev1"
			stayed=$((stayed + 1))
		fi
	done < <(port_of three)
	echo "flows kept their next hop: $stayed, moved off d3: $moved" >&2
	tb_expect "flows that moved" "$moved" -gt 0
	tb_expect "flows that stayed" "$stayed" -gt 0
}

# route get of a flow answers with the next hop its packets take: each
# flow of a round, asked by its keys, names the port it arrived on.
@test "traffic: route get of a flow names the next hop its packets took" {
	[ -x "$GEN" ] || skip "xnf-gen not built"
	local sport dev got n=0
	tb_src sysctl -q -w net.ipv6.conf.s0.disable_ipv6=1
	tb_dut sysctl -q -w net.ipv6.conf.d0.disable_ipv6=1 net.ipv6.conf.d1.disable_ipv6=1
	tb_xnf route add $MP nexthop dev d1 lladdr ${HOP[d1]} \
		nexthop dev d2 lladdr ${HOP[d2]} nexthop dev d3 lladdr ${HOP[d3]}

	traffic_round get
	while read -r sport dev; do
		got=$(tb_xnf -j route get 203.0.113.1 from $TB_SRC4 proto udp \
			sport "$sport" dport 9 | jq -r .dev)
		tb_expect "flow from port $sport: the next hop route get names" "$got" = "$dev"
		n=$((n + 1))
	done < <(port_of get)
	tb_expect "flows asked about" "$n" -gt $((FLOWS / 2))
	# Without a flow, the group; a flow given in part is refused.
	tb_expect "no flow: the group" \
		"$(tb_xnf -j route get 203.0.113.1 | jq -c '[.flow, .dev, (.nexthops | length)]')" = \
		'[null,null,3]'
	run -1 tb_xnf route get 203.0.113.1 from $TB_SRC4 proto udp
	run -1 tb_xnf route get 203.0.113.1 sport 2000 dport 9
}
