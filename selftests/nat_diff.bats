#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# nat_diff.bats - NAT against Linux: the same packet sequences through a
# Linux router with nftables' NAT (masquerade, snat to a range, a port
# forward) and a stateful forward policy, and through xnf with the same
# rules, every packet that leaves compared: its fate, addresses, ports
# (a translation by its properties: the same for a flow's every packet,
# kept or in range), checksums, the header an ICMP error quotes
# (selftests/lib/nat_diff.py sends them and compares).
#
#   [lin] lan0 --- Linux router (nft nat, conntrack) --- wan0 [lout]
#   [xin] lan0 --- xnf (conntrack,nat,firewall,l3fwd) --- wan0 [xout]
#
# Both beds are testbed.bash's (tb_veths: the same addresses and MACs),
# with the router's ports named lan0 and wan0 as the rules say; the inside
# has more hosts than 192.0.2.1 (a second one for port collisions, the
# port forward's server, a host of the snat rule), all behind s0. The
# Linux bed's namespaces are added to tb_teardown's list, so teardown
# removes both beds, even after a failure.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=300}"

load ../testbed/testbed
load lib/twobed

DIFF=("/usr/bin/python3" "$TB_TOP/selftests/lib/nat_diff.py")

# The inside hosts besides 192.0.2.1 (nat_diff.py's IN2, SRV, POOLED,
# IN2_6).
MORE_INSIDE=(192.0.2.2 192.0.2.10 192.0.2.130 2001:db8:1::2)

# The Linux router's rule set. NAT statements end a chain's evaluation:
# the first rule that matches translates. (`snat to` with ports needs the
# protocol: one rule each for TCP and UDP, ICMP falls to masquerade.) An
# inet table: masquerade is IPv4's and IPv6's (NAT66), as xnf's rule
# without addresses is.
LINUX_RULES='table inet nat {
	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		iifname "wan0" tcp dport 8080 dnat ip to 192.0.2.10:80
	}
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "wan0" ip saddr 192.0.2.128/25 meta l4proto tcp snat ip to 198.51.100.200-198.51.100.201:30000-30009
		oifname "wan0" ip saddr 192.0.2.128/25 meta l4proto udp snat ip to 198.51.100.200-198.51.100.201:30000-30009
		oifname "wan0" masquerade
	}
}
table inet filter {
	chain forward {
		type filter hook forward priority 0; policy drop;
		ct state established,related accept
		ct state invalid drop
		iifname "lan0" accept
		iifname "wan0" tcp dport 22 ct state new accept
		iifname "wan0" ip daddr 192.0.2.10 tcp dport 80 ct state new accept
	}
}'

# xnf's words for it: nat before the firewall, which sees the forwarded
# connection's translated destination as nft's forward chain does.
XNF_NAT='nat add prio 10 dnat iif wan0 proto tcp dport 8080 to 192.0.2.10:80
nat add prio 20 snat oif wan0 saddr 192.0.2.128/25 proto tcp to 198.51.100.200-198.51.100.201:30000-30009
nat add prio 21 snat oif wan0 saddr 192.0.2.128/25 proto udp to 198.51.100.200-198.51.100.201:30000-30009
nat add prio 30 masquerade oif wan0'
XNF_FW='fw add allow ct state established,related
fw add drop ct state invalid
fw add allow iif lan0
fw add allow iif wan0 proto tcp dport 22 ct state new
fw add allow iif wan0 dst 192.0.2.10/32 proto tcp dport 80 ct state new
fw default drop'

# Differences between the two routers, with the reason: LABEL=REASON,
# LABEL a packet's label in nat_diff.py's output.
EXPECTED=(
	# XDP cannot reassemble: a chain with conntrack passes every fragment
	# to the router's kernel (reason frag, docs/conntrack.md), which has
	# no NAT rules here: a masqueraded flow's fragments leave with the
	# inside's own address, and an answer's fragments to the masquerade
	# address end in the router's kernel. Linux reassembles, translates
	# and fragments again.
	"frag-udp fragmented answer=fragments go to the kernel, which has no NAT rules here"
	"frag-udp fragmented request=fragments go to the kernel, which has no NAT rules here"
	"frag-first fragmented first request=fragments go to the kernel, which has no NAT rules here"
	# Listed so that a fix shows (the difference then ends: remove these
	# lines): a packet of a translated flow from the outside whose
	# TTL expires, or too big for the inside, has its destination
	# translated by nat before l3fwd passes it to the router's kernel
	# (ttl_expired, frag_needed); the kernel's error then quotes the
	# inside host's address and port. Linux's quotes the packet as the
	# outside sent it (path MTU discovery and traceroute from the outside
	# through a port forward or to a masqueraded peer break).
	"err-udp TTL 1 from outside=BUG: the time exceeded quotes the inside's address"
	"err-udp too big for the inside, DF, from outside=BUG: the frag needed quotes the inside's address"
	"fwd-tcp TTL 1 from outside=BUG: the time exceeded quotes the forward's inside address"
	"masq6-udp hop limit 1 from outside=BUG: the time exceeded quotes the inside's address"
)

# The hosts' kernels must see nothing of the test: their prerouting and
# output drop everything (packet sockets capture before prerouting), so
# they answer no stray segment with a RST and no datagram with an ICMP
# error, and send nothing of their own.
HOST_RULES='table inet natdiff_host {
	chain pre { type filter hook prerouting priority -400; policy drop; }
	chain out { type filter hook output priority -400; policy drop; }
}'

setup_file()
{
	twobed_setup_file
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	twobed_beds || return 1
	local ns a
	for ns in "$L_R" "$X_R"; do
		# No redirects or other messages of the routers' own; the far
		# router of the ICMP errors is out there (reverse path filter).
		tb_run "$ns" sysctl -q -w net.ipv4.conf.all.send_redirects=0 \
			net.ipv4.conf.default.send_redirects=0 \
			net.ipv4.conf.lan0.send_redirects=0 \
			net.ipv4.conf.wan0.send_redirects=0 >/dev/null &&
		ip -n "$ns" route add 203.0.113.0/24 via $TB_SINK4 &&
		ip -n "$ns" -6 route add 2001:db8:3::/64 via $TB_SINK6 || return 1
		for a in "${MORE_INSIDE[@]}"; do
			ip -n "$ns" neigh replace "$a" lladdr $TB_MAC_S0 dev lan0 \
				nud permanent || return 1
		done
		ip -n "$ns" neigh replace 198.51.100.2 lladdr $TB_MAC_K0 dev wan0 \
			nud permanent || return 1
		# a smaller MTU inside (nat_diff.py's LAN_MTU): a datagram
		# from the outside can be too big
		ip -n "$ns" link set lan0 mtu 1400 || return 1
	done
	tb_run "$L_R" nft -f - <<<"$LINUX_RULES" &&
	tb_run "$L_R" sysctl -q -w net.netfilter.nf_conntrack_tcp_be_liberal=1 >/dev/null
}

teardown()
{
	tb_teardown
}

# xnf_router [NAT_RULES [MODE]]: xnf on lan0 and wan0 with the rules (NAT's
# or NAT_RULES, and the policy), the chain tail-called (or MODE: fused).
xnf_router()
{
	tb_attach_both conntrack,nat,firewall,l3fwd ${2:-} && tb_routes &&
	tb_xnf -b - <<<"${1-$XNF_NAT}
$XNF_FW"
}

# bed_json NAME IN OUT: one bed of nat_diff.py's --beds.
bed_json()
{
	jq -n --arg name "$1" --arg in "$2" --arg out "$3" \
		'{name: $name, in_ns: $in, in_dev: "s0", out_ns: $out, out_dev: "k0"}'
}

# nat_diff BED... [-- ARGS]: nat_diff.py on the beds (linux, xnf), its
# results in $TB_TMP/res.json.
nat_diff()
{
	local beds=() b
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		case $1 in
		linux) bed_json linux "$L_IN" "$L_OUT" >"$TB_TMP/bed-linux.json" ;;
		xnf) bed_json xnf "$X_IN" "$X_OUT" >"$TB_TMP/bed-xnf.json" ;;
		esac
		beds+=("$TB_TMP/bed-$1.json")
		shift
	done
	[ "${1:-}" != -- ] || shift
	jq -s . "${beds[@]}" >"$TB_TMP/beds.json"
	run "${DIFF[@]}" --beds "$TB_TMP/beds.json" --out "$TB_TMP/res.json" "$@"
	echo "$output"
}

# got LABEL BED FILTER: FILTER applied to what LABEL's packet became on BED
# (.left, .packet, .notes).
got()
{
	jq -c --arg l "$1" --arg b "$2" ".[] | select(.label == \$l) | .beds[\$b] | $3" \
		"$TB_TMP/res.json"
}

@test "the harness: the Linux router does what the nft NAT rules mean" {
	nat_diff linux
	[ "$status" -eq 0 ]
	local l
	# masquerade: the router's outside address, the port kept, the
	# replies back to the inside host's own address and port
	tb_expect "masq SYN's source" "$(got "masq-tcp#1 in S" linux .packet.src)" = \
		'"XLAT(masq-tcp)"'
	tb_expect "masq SYN's translation" "$(got "masq-tcp#1 in S" linux .notes)" = \
		"[\"XLAT(masq-tcp): address the router's outside address, port kept\"]"
	tb_expect "masq SYN/ACK back" "$(got "masq-tcp#2 out SA" linux \
		'.packet | [.dst, .dport]')" = '["192.0.2.1",40000]'
	tb_expect "masq echo reply back" "$(got "masq-echo reply" linux \
		'.packet | [.dst, .sport]')" = '["192.0.2.1",4660]'
	# UDP checksum 0 stays 0 both ways
	for l in "masq-udp0 request, checksum 0" "masq-udp0 answer, checksum 0"; do
		tb_expect "$l" "$(got "$l" linux .packet.l4_csum)" = '"zero"'
	done
	tb_expect "udp checksum" "$(got "masq-udp answer" linux .packet.l4_csum)" = '"ok"'
	# the second host with the same source port gets another
	tb_expect "collision, first" "$(got "coll-a#1 in S" linux .notes[0])" = \
		"\"XLAT(coll-a): address the router's outside address, port kept\""
	tb_expect "collision, second" "$(got "coll-b#1 in S" linux .notes[0])" = \
		"\"XLAT(coll-b): address the router's outside address, port in 1024-65535\""
	tb_expect "collision udp, second" "$(got "coll-udp-b request" linux .notes[0])" = \
		"\"XLAT(coll-udp-b): address the router's outside address, port in 1024-65535\""
	tb_expect "collision, answer to b" "$(got "coll-b#5 out PA +4" linux \
		'.packet | [.dst, .dport]')" = '["192.0.2.2",33333]'
	# snat to the pool
	tb_expect "snat" "$(got "snat-tcp#1 in S" linux .notes[0])" = \
		'"XLAT(snat-tcp): address in the pool, port in 30000-30009"'
	tb_expect "snat udp" "$(got "snat-udp request" linux .notes[0])" = \
		'"XLAT(snat-udp): address in the pool, port in 30000-30009"'
	# ICMP errors translated back, the quoted header too
	for l in "err-tcp frag needed from a far router" "err-udp time exceeded from a far router" \
		"err-udp port unreachable, fully quoted" "err-echo time exceeded from a far router" \
		"snat-udp time exceeded from a far router"; do
		tb_expect "$l: outer destination, quoted source" "$(got "$l" linux \
			'.packet | [.dst, .quoted.src == .dst, .quoted.ip_csum]')" \
			= '["'"$([[ $l = snat* ]] && echo 192.0.2.130 || echo 192.0.2.1)"'",true,"ok"]'
	done
	tb_expect "quoted udp checksum, fully quoted" "$(got "err-udp port unreachable, fully quoted" \
		linux .packet.quoted.l4_csum)" = '"ok"'
	# the port forward, both ways; an error from the server goes out as
	# the router's
	tb_expect "forwarded SYN" "$(got "fwd-tcp#1 out S" linux '.packet | [.dst, .dport]')" = \
		'["192.0.2.10",80]'
	tb_expect "forward's SYN/ACK" "$(got "fwd-tcp#2 in SA" linux '.packet | [.src, .sport]')" = \
		'["198.51.100.254",8080]'
	tb_expect "the server's error" "$(got "fwd-tcp unreachable from the server, back out" linux \
		'.packet | [.src, .quoted.dst, .quoted.dport]')" = '["198.51.100.254","198.51.100.254",8080]'
	tb_expect "not forwarded" "$(got "fwd-none SYN to the router's 8081" linux .left)" = false
	tb_expect "the far router's error back in" "$(got "fwd-tcp time exceeded from a far router, back in" \
		linux '.packet | [.dst, .quoted.src, .quoted.sport]')" = '["192.0.2.10","192.0.2.10",80]'
	tb_expect "the inside's error out" "$(got "err-udp port unreachable from inside, out" \
		linux '.packet | [.src, .quoted.dst]')" = '["198.51.100.254","XLAT(err-udp)"]'
	tb_expect "collision echo, second" "$(got "coll-echo-b request" linux .notes[0])" = \
		"\"XLAT(coll-echo-b): address the router's outside address, port in 0-65535\""
	tb_expect "the forwarded connection's tuple is taken" "$(got "fwd-clash#1 in S" linux .notes[0])" = \
		"\"XLAT(fwd-clash): address the router's outside address, port in 1024-65535\""
	tb_expect "a second host's forward" "$(got "fwd-tcp2#1 out S" linux '.packet | [.src, .dst]')" = \
		'["198.51.100.2","192.0.2.10"]'
	tb_expect "an error about nothing stays" "$(got "own time exceeded about no connection" linux \
		'[.left, .forwarded]')" = '[false,null]'
	tb_expect "TTL 1 from outside: quoted as sent" "$(got "err-udp TTL 1 from outside" linux \
		'.packet.quoted | [.dst, .dport]')" = '["198.51.100.254",33434]'
	tb_expect "TTL 1 through the forward: quoted as sent" "$(got "fwd-tcp TTL 1 from outside" \
		linux '.packet.quoted | [.dst, .dport]')" = '["198.51.100.254",8080]'
	tb_expect "too big from outside: quoted as sent" "$(got \
		"err-udp too big for the inside, DF, from outside" linux \
		'.packet | [.icmp, .quoted.dst, .quoted.dport]')" = '[[3,4],"198.51.100.254",33434]'
	tb_expect "hop limit 1 from outside: quoted as sent" "$(got "masq6-udp hop limit 1 from outside" \
		linux '.packet.quoted | [.dst, .dport]')" = '["2001:db8:2::fe",5353]'
	tb_expect "snat udp0" "$(got "snat-udp0 answer, checksum 0" linux .packet.l4_csum)" = '"zero"'
	# the router's own addresses: its kernel answers what it got
	for l in "own echo request to the outside address" "own echo request to the inside address" \
		"own udp to a closed port" "own SYN to a closed port" \
		"own udp to the forwarded port (the rule is TCP's)" \
		"own SYN from inside to the forwarded port (no hairpin: iif wan0)" \
		"udp to masq-udp's mapping from another host"; do
		tb_expect "$l" "$(got "$l" linux .left)" = true
	done
	# NAT66
	tb_expect "masq6 SYN's translation" "$(got "masq6-tcp#1 in S" linux .notes)" = \
		"[\"XLAT(masq6-tcp): address the router's outside address, port kept\"]"
	tb_expect "masq6 echo's translation" "$(got "masq6-echo request" linux .notes)" = \
		"[\"XLAT(masq6-echo): address the router's outside address, port kept\"]"
	tb_expect "collision v6, second" "$(got "coll6-b#1 in S" linux .notes[0])" = \
		"\"XLAT(coll6-b): address the router's outside address, port in 1024-65535\""
	tb_expect "masq6 SYN/ACK back" "$(got "masq6-tcp#2 out SA" linux \
		'.packet | [.dst, .dport]')" = '["2001:db8:1::1",40000]'
	for l in "masq6-tcp packet too big from a far router" \
		"masq6-udp time exceeded from a far router" "masq6-udp port unreachable"; do
		tb_expect "$l: outer destination, quoted source" "$(got "$l" linux \
			'.packet | [.dst, .quoted.src, .l4_csum]')" = '["2001:db8:1::1","2001:db8:1::1","ok"]'
	done
	tb_expect "own6 echo" "$(got "own6 echo request to the outside address" linux .left)" = true
	# fragments: reassembled, translated, fragmented again
	for l in "frag-udp fragmented request" "frag-first fragmented first request"; do
		tb_expect "$l" "$(got "$l" linux '[.packet.src, .packet.frag > 0, .copies > 1]')" = \
			'["XLAT('"${l%% *}"')",true,true]'
	done
	tb_expect "fragmented answer" "$(got "frag-udp fragmented answer" linux .packet.dst)" = \
		'"192.0.2.1"'
	tb_expect "the port unreachable quotes the datagram untouched" \
		"$(got "own udp to a closed port" linux '.packet.quoted | [.src, .dst, .dport, .l4_csum]')" \
		= '["198.51.100.1","198.51.100.254",9,"ok"]'
}

# diff_xnf: nat_diff.py with both beds, every sequence; then xnf's own
# accounting: no translation was refused.
diff_xnf()
{
	local e args=()
	for e in "${EXPECTED[@]}"; do
		args+=(--expect "$e")
	done
	nat_diff linux xnf -- "${args[@]}"
	[ "$status" -eq 0 ]
	local st r
	st=$(tb_stats_json)
	for r in nat_no_port nat_no_addr nat_clash; do
		tb_expect "packets refused, $r" \
			"$(jq "[.devices[].drop_reasons.$r // 0] | add" <<<"$st")" -eq 0
	done
}

@test "xnf and Linux: every packet that leaves is the same" {
	xnf_router
	diff_xnf
}

@test "xnf fused and Linux: every packet that leaves is the same" {
	xnf_router "$XNF_NAT" fused
	diff_xnf
}

@test "the harness catches a difference: xnf without the snat rules" {
	# The pool's host is then masqueraded by xnf: its packets leave from
	# the router's address, and only the snat flows' differ.
	xnf_router "$(grep -v ' snat ' <<<"$XNF_NAT")"
	nat_diff linux xnf -- --only snat
	[ "$status" -eq 1 ]
	tb_expect "xnf's translation" "$(got "snat-tcp#1 in S" xnf .notes[0])" = \
		"\"XLAT(snat-tcp): address 198.51.100.254 (NOT in the pool), port kept\""
	# a translation is compared on a flow's first packet (its later ones
	# must have the same): each snat flow's first one differs
	tb_expect "the packets that differ" "$(jq -c '[.[] | select(.problems != []) | .label]' \
		"$TB_TMP/res.json")" = \
		'["snat-tcp#1 in S","snat-udp request","snat-udp0 request, checksum 0"]'
}
