#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# traffic.bats - xnf forwarding real traffic: a source, the DUT running xnf
# and a sink, each in its own network namespace (testbed/testbed.bash).
# Every test builds its own test bed and tears it down, even when it fails.
#
# What proves that xnf, not the DUT's kernel, forwarded: the chain's
# redirect counter (xnf -j stats) grows by the number of packets sent, and
# the kernel's forwarding counters (/proc/net/snmp, snmp6) do not move.
# Assertions use JSON, counters, exit codes and tcpdump's decoding of what
# arrived; never the wording of xnf's messages.

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
	tb_setup
}

teardown()
{
	tb_teardown
}

N=10    # pings per burst
M=5     # datagrams per UDP burst

# stat_grew BEFORE DEV JQ N: the counter JQ of DEV grew by at least N
# since BEFORE (an `xnf -j stats` output).
stat_grew()
{
	[ "$(tb_delta "$1" "$(tb_stats_json)" "$2" "$3")" -ge "$4" ]
}

# fw_hits_grew BEFORE N: the rules' hits add up to at least N more than
# in BEFORE (an `xnf -j fw show` output).
fw_hits_grew()
{
	[ "$(tb_xnf -j fw show | jq --argjson a "$1" \
		'[., $a] | map([.rules[].packets] | add // 0) | .[0] - .[1]')" -ge "$2" ]
}

@test "1-, 2- and 3-NF chains, tail-called and fused, forward ping and UDP both ways" {
	local chain mode fused before after k0 k1 got port=7000

	tb_routes
	for chain in l3fwd firewall,l3fwd firewall,l3fwd,l2fwd; do
		for mode in tailcall fused; do
			fused=false
			if [ "$mode" = fused ]; then
				fused=true
				tb_attach_both "$chain" fused
			else
				tb_attach_both "$chain"
			fi
			got=$(tb_xnf -j status | jq -c '[.devices[] | [.dev, .chain, .fused, .attached]] | sort')
			tb_expect "status ($chain $mode)" "$got" = \
				"[[\"d0\",\"$chain\",$fused,true],[\"d1\",\"$chain\",$fused,true]]"

			k0=$(tb_kfwd)
			before=$(tb_stats_json)
			tb_ping_ok "$TB_SRC" $TB_SINK4 $N
			after=$(tb_stats_json)
			# Echo requests one way, replies the other: all by xnf.
			tb_expect "$chain $mode: d0 redirects" \
				"$(tb_chain_delta "$before" "$after" d0 redirect)" -eq $N
			tb_expect "$chain $mode: d1 redirects" \
				"$(tb_chain_delta "$before" "$after" d1 redirect)" -eq $N

			before=$after
			port=$((port + 1))
			got=$(tb_udp_echo "$TB_SRC" 4 $TB_SINK4 $port $M)
			tb_expect "$chain $mode: UDP lines echoed" "$got" -eq $M
			after=$(tb_stats_json)
			tb_expect "$chain $mode: d0 UDP redirects" \
				"$(tb_chain_delta "$before" "$after" d0 redirect)" -ge 1
			tb_expect "$chain $mode: d1 UDP redirects" \
				"$(tb_chain_delta "$before" "$after" d1 redirect)" -ge 1
			k1=$(tb_kfwd)
			tb_expect "$chain $mode: kernel forwarded (v4 v6)" "$k1" = "$k0"

			tb_xnf detach d0
			tb_xnf detach d1
		done
	done
}

@test "TTL and hop limit decremented exactly once, checksums right on arrival" {
	local mode dump n kpid spid

	# Distinctive initial TTLs: the source 77, the sink 99.
	tb_src sysctl -q -w net.ipv4.ip_default_ttl=77 net.ipv6.conf.s0.hop_limit=77
	tb_sink sysctl -q -w net.ipv4.ip_default_ttl=99 net.ipv6.conf.k0.hop_limit=99
	tb_routes
	for mode in tailcall fused; do
		if [ "$mode" = fused ]; then
			tb_attach_both firewall,l3fwd,l2fwd fused
		else
			tb_attach_both firewall,l3fwd,l2fwd
		fi
		rm -f "$TB_TMP"/k0.pcap "$TB_TMP"/s0.pcap
		# On k0: 4 ICMP + 4 UDP per family from the source; on s0: the
		# 8 echo replies from the sink.
		tb_capture "$TB_SINK" k0 16 "$TB_TMP/k0.pcap" \
			"(src $TB_SRC4 or src $TB_SRC6) and (icmp or icmp6 or udp)"
		kpid=$TB_CAPTURE_PID
		tb_capture "$TB_SRC" s0 8 "$TB_TMP/s0.pcap" \
			"(src $TB_SINK4 and icmp[icmptype] == icmp-echoreply) or (src $TB_SINK6 and icmp6 and ip6[40] == 129)"
		spid=$TB_CAPTURE_PID
		tb_ping_ok "$TB_SRC" $TB_SINK4 4 -t 77
		tb_ping_ok "$TB_SRC" $TB_SINK6 4
		tb_udp_send "$TB_SRC" $TB_SINK4 9 4
		tb_udp_send "$TB_SRC" $TB_SINK6 9 4
		wait "$kpid"
		wait "$spid"

		dump=$(timeout 10 tcpdump -r "$TB_TMP/k0.pcap" -n -vv 2>/dev/null)
		echo "$dump"
		n=$(grep -c "ttl 76," <<<"$dump" || true)
		tb_expect "$mode: IPv4 packets at the sink with ttl 76" "$n" -eq 8
		n=$(grep -c "hlim 76," <<<"$dump" || true)
		tb_expect "$mode: IPv6 packets at the sink with hlim 76" "$n" -eq 8
		n=$(grep -c "udp sum ok" <<<"$dump" || true)
		tb_expect "$mode: UDP checksums verified by tcpdump" "$n" -eq 8
		n=$(grep -Eci "bad|wrong|incorrect" <<<"$dump" || true)
		tb_expect "$mode: bad checksums at the sink" "$n" -eq 0

		dump=$(timeout 10 tcpdump -r "$TB_TMP/s0.pcap" -n -vv 2>/dev/null)
		echo "$dump"
		n=$(grep -c "ttl 98," <<<"$dump" || true)
		tb_expect "$mode: IPv4 replies at the source with ttl 98" "$n" -eq 4
		n=$(grep -c "hlim 98," <<<"$dump" || true)
		tb_expect "$mode: IPv6 replies at the source with hlim 98" "$n" -eq 4
		n=$(grep -Eci "bad|wrong|incorrect" <<<"$dump" || true)
		tb_expect "$mode: bad checksums at the source" "$n" -eq 0

		tb_xnf detach d0
		tb_xnf detach d1
	done
}

@test "a drop rule blocks exactly its flow and counts it" {
	local before after fw hits n=20

	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	tb_xnf fw add drop proto udp dport 5001
	tb_udp_sink "$TB_SINK" 4 5001 "$TB_TMP/5001"
	tb_udp_sink "$TB_SINK" 4 5002 "$TB_TMP/5002"

	before=$(tb_stats_json)
	tb_udp_send "$TB_SRC" $TB_SINK4 5001 $n
	tb_udp_send "$TB_SRC" $TB_SINK4 5002 $n
	# 5002 was sent after 5001 on the same path: once it is all there,
	# any 5001 datagram that got through is there too.
	tb_wait_lines "$TB_TMP/5002" $n
	after=$(tb_stats_json)
	tb_expect "datagrams to 5001 received" "$(tb_lines "$TB_TMP/5001")" -eq 0
	tb_expect "datagrams to 5002 received" "$(tb_lines "$TB_TMP/5002")" -eq $n

	fw=$(tb_xnf -j fw show)
	hits=$(jq -e '.rules[] | select(.action == "drop" and .proto == "udp" and .dport == "5001") | .packets' <<<"$fw")
	tb_expect "hits of the drop rule" "$hits" -eq $n
	tb_expect "drop reason fw_deny on d0" \
		"$(tb_delta "$before" "$after" d0 .drop_reasons.fw_deny)" -eq $n
	tb_expect "chain drops on d0" \
		"$(tb_chain_delta "$before" "$after" d0 drop)" -eq $n
	tb_expect "chain redirects on d0" \
		"$(tb_chain_delta "$before" "$after" d0 redirect)" -eq $n

	# The same rule set in the fused chain.
	tb_xnf chain set d0 firewall,l3fwd,l2fwd fused
	before=$after
	tb_udp_send "$TB_SRC" $TB_SINK4 5001 $n
	tb_udp_send "$TB_SRC" $TB_SINK4 5002 $n
	tb_wait_lines "$TB_TMP/5002" $((2 * n))
	after=$(tb_stats_json)
	tb_expect "fused: datagrams to 5001 received" "$(tb_lines "$TB_TMP/5001")" -eq 0
	tb_expect "fused: datagrams to 5002 received" "$(tb_lines "$TB_TMP/5002")" -eq $((2 * n))
	tb_expect "fused: drop reason fw_deny on d0" \
		"$(tb_delta "$before" "$after" d0 .drop_reasons.fw_deny)" -eq $n
	hits=$(tb_xnf -j fw show | jq -e '.rules[] | select(.dport == "5001") | .packets')
	tb_expect "fused: hits of the drop rule" "$hits" -eq $((2 * n))
}

# nft's input vs forward: under a default-drop firewall, what is addressed
# to the router itself goes to its kernel (fw_input kernel, the default),
# whose own rules (none here) let the ping be answered; forwarded traffic
# meets the rules. With fw_input rules the rules filter both. (Multicast,
# such as IPv6 neighbour discovery, meets the rules either way: not
# counted here.)
@test "traffic to the router itself reaches its kernel under a default-drop firewall; fw_input rules drops it" {
	local before after r

	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	tb_xnf fw default drop

	before=$(tb_stats_json)
	tb_ping_ok "$TB_SRC" $TB_D04 5
	after=$(tb_stats_json)
	tb_expect "passed to the kernel as local on d0" \
		"$(tb_delta "$before" "$after" d0 .pass_reasons.local)" -ge 5
	r=$(tb_ping_unanswered "$TB_SRC" $TB_SINK4 3)
	tb_expect "forwarded pings answered" "${r#* }" -eq 0

	tb_xnf config set fw_input rules
	tb_xnf save | grep -qx 'config set fw_input rules'
	before=$(tb_stats_json)
	r=$(tb_ping_unanswered "$TB_SRC" $TB_D04 5)
	after=$(tb_stats_json)
	tb_expect "fw_input rules: pings to the router answered" "${r#* }" -eq 0
	tb_expect "fw_input rules: dropped as fw_deny on d0" \
		"$(tb_delta "$before" "$after" d0 .drop_reasons.fw_deny)" -ge 5
}

# The issue 34 case: a router whose connected subnet is a `kernel` route
# (as `xnf route sync` mirrors one) and a firewall that keeps SSH from
# outside out. With l3fwd before the firewall, l3fwd would hand the SYN to
# the kernel, which forwards it without the firewall: so that order is
# refused, the running chain stays, and the SYN meets the drop rule.
@test "a chain with the firewall after l3fwd is refused: SSH from outside stays blocked" {
	local hits

	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	tb_xnf route replace 198.51.100.0/24 kernel
	tb_xnf fw add prio 10 drop proto tcp dport 22
	run -1 tb_xnf chain set d0 l3fwd,firewall
	tb_expect "d0's chain" "$(tb_xnf -j status | jq -r '.devices[] | select(.dev == "d0") | .chain')" = firewall,l3fwd,l2fwd

	tb_bg "$TB_SINK" timeout "$TB_TIMEOUT" socat -u TCP4-LISTEN:22,reuseaddr \
		"OPEN:$TB_TMP/ssh,creat,append"
	tb_until "a socket on tcp port 22" tb_run "$TB_SINK" sh -c \
		'ss -Hlnt "sport = :22" | grep -q .'
	run tb_src timeout 10 socat -u - "TCP4:$TB_SINK4:22,connect-timeout=2" <<<ssh
	tb_expect "connect from outside: exit" "$status" -ne 0
	tb_expect "bytes at the sink" "$(tb_lines "$TB_TMP/ssh")" -eq 0
	hits=$(tb_xnf -j fw show | jq '.rules[] | select(.prio == 10) | .packets')
	tb_expect "SYNs the drop rule saw" "$hits" -ge 1
}

@test "a route removed or added takes effect on live traffic" {
	local before after k0 k1

	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes

	before=$(tb_stats_json)
	tb_ping_ok "$TB_SRC" $TB_SINK4 $N
	after=$(tb_stats_json)
	tb_expect "with the route: d0 redirects" \
		"$(tb_chain_delta "$before" "$after" d0 redirect)" -eq $N

	# Without it, l3fwd passes the packets to the kernel as no_route; the
	# DUT's kernel forwards them (ip_forward=1), so ping still works.
	tb_xnf route del 198.51.100.0/24
	k0=$(tb_kfwd)
	before=$(tb_stats_json)
	tb_ping_ok "$TB_SRC" $TB_SINK4 $N
	after=$(tb_stats_json)
	k1=$(tb_kfwd)
	tb_expect "without the route: d0 redirects" \
		"$(tb_chain_delta "$before" "$after" d0 redirect)" -eq 0
	tb_expect "without the route: d0 no_route passes" \
		"$(tb_delta "$before" "$after" d0 .pass_reasons.no_route)" -ge $N
	tb_expect "without the route: IPv4 forwarded by the kernel" \
		"$(( ${k1%% *} - ${k0%% *} ))" -ge $N
	# The replies still have their route: xnf forwards them.
	tb_expect "without the route: d1 redirects" \
		"$(tb_chain_delta "$before" "$after" d1 redirect)" -eq $N

	tb_xnf route add 198.51.100.0/24 via $TB_SINK4
	k0=$(tb_kfwd)
	before=$(tb_stats_json)
	tb_ping_ok "$TB_SRC" $TB_SINK4 $N
	after=$(tb_stats_json)
	k1=$(tb_kfwd)
	tb_expect "route back: d0 redirects" \
		"$(tb_chain_delta "$before" "$after" d0 redirect)" -eq $N
	tb_expect "route back: kernel forwarded (v4 v6)" "$k1" = "$k0"
}

# ping_batch K: the K-th batch of 500 echo requests, 2 ms apart, in the
# background (every reply waited for, at most 100 s); returns once its
# first request went through d0. Sets PING_PID.
ping_batch()
{
	local st
	st=$(tb_stats_json)
	tb_bg "$TB_SRC" timeout 120 ping -q -n -c 500 -i 0.002 -w 100 $TB_SINK4 \
		>"$TB_TMP/ping.$1.out"
	PING_PID=$TB_BG_PID
	tb_until "ping batch $1 to reach d0" \
		stat_grew "$st" d0 '.nfs[] | select(.nf == "chain") | .redirect' 1
}

# ping_batch_ok K: batch K ended with every reply.
ping_batch_ok()
{
	local out
	wait "$PING_PID" || true
	out=$(cat "$TB_TMP/ping.$1.out")
	echo "$out"
	tb_expect "ping batch $1 sent/received" \
		"$(awk '/packets transmitted/ { print $1, $4 }' <<<"$out")" = "500 500"
}

# Each switch is made while a batch of pings runs (a new batch starts when
# the last one ended): under traffic however fast or slow the machine is.
@test "chain set under continuous traffic loses nothing" {
	local before after i args chain fused st id old_id batches=0
	local -a plan=(
		"firewall,l3fwd,l2fwd tailcall"
		"l3fwd,l2fwd"
		"l3fwd"
		"l3fwd fused"
		"firewall,l3fwd,l2fwd"
		"firewall,l3fwd tailcall"
		"l3fwd,l2fwd fused"
		"firewall,l3fwd,l2fwd tailcall"
		"l3fwd"
		"firewall,l3fwd,l2fwd fused"
	)

	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	before=$(tb_stats_json)
	old_id=$(tb_xnf -j status d0 | jq -r .prog_id)

	fused=false
	for i in "${!plan[@]}"; do
		if ((batches == 0)) || ! kill -0 "$PING_PID" 2>/dev/null; then
			((batches == 0)) || ping_batch_ok $batches
			batches=$((batches + 1))
			ping_batch $batches
		fi
		args=${plan[$i]}
		# shellcheck disable=SC2086
		tb_xnf chain set d0 $args
		chain=${args%% *}
		case $args in
		*" fused") fused=true ;;
		*" tailcall") fused=false ;;
		esac
		st=$(tb_xnf -j status d0)
		tb_expect "switch $i: chain" "$(jq -r .chain <<<"$st")" = "$chain"
		tb_expect "switch $i: fused" "$(jq -r .fused <<<"$st")" = "$fused"
		id=$(jq -r .prog_id <<<"$st")
		tb_expect "switch $i: a new program runs" "$id" -ne "$old_id"
		tb_expect "switch $i: the program on d0 is the one status names" \
			"$(tb_xdp_prog_id "$TB_DUT" d0)" -eq "$id"
		old_id=$id
	done
	ping_batch_ok $batches
	after=$(tb_stats_json)
	tb_expect "d0 redirects" "$(tb_chain_delta "$before" "$after" d0 redirect)" -eq $((500 * batches))
	tb_expect "d0 drops" "$(tb_chain_delta "$before" "$after" d0 drop)" -eq 0
}

@test "detach restores the kernel path" {
	local before after k0 k1 dev

	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	before=$(tb_stats_json)
	tb_ping_ok "$TB_SRC" $TB_SINK4 $N
	after=$(tb_stats_json)
	tb_expect "attached: d0 redirects" \
		"$(tb_chain_delta "$before" "$after" d0 redirect)" -eq $N

	tb_xnf detach d0
	tb_xnf detach d1
	for dev in d0 d1; do
		tb_expect "$dev: XDP program after detach" \
			"$(tb_xdp_prog_id "$TB_DUT" $dev)" = none
		tb_expect "$dev: pins after detach" \
			"$(test -e "$XNF_PIN_ROOT/dev/$dev" && echo present || echo gone)" = gone
	done
	tb_expect "status after detach" "$(tb_xnf -j status | jq -c .devices)" = "[]"

	k0=$(tb_kfwd)
	tb_ping_ok "$TB_SRC" $TB_SINK4 $N
	tb_ping_ok "$TB_SRC" $TB_SINK6 $N
	k1=$(tb_kfwd)
	tb_expect "IPv4 forwarded by the kernel" "$(( ${k1%% *} - ${k0%% *} ))" -ge $((2 * N))
	tb_expect "IPv6 forwarded by the kernel" "$(( ${k1##* } - ${k0##* } ))" -ge $((2 * N))
}

@test "IPv6 forwards through xnf: ping and UDP" {
	local before after k0 k1

	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	tb_udp_sink "$TB_SINK" 6 5006 "$TB_TMP/u6"
	k0=$(tb_kfwd)
	before=$(tb_stats_json)
	tb_ping_ok "$TB_SRC" $TB_SINK6 $N
	tb_udp_send "$TB_SRC" $TB_SINK6 5006 $M
	tb_wait_lines "$TB_TMP/u6" $M
	after=$(tb_stats_json)
	k1=$(tb_kfwd)
	tb_expect "datagrams received" "$(tb_lines "$TB_TMP/u6")" -eq $M
	tb_expect "d0 redirects" "$(tb_chain_delta "$before" "$after" d0 redirect)" -eq $((N + M))
	tb_expect "d1 redirects" "$(tb_chain_delta "$before" "$after" d1 redirect)" -eq $N
	tb_expect "kernel forwarded (v4 v6)" "$k1" = "$k0"

	# And back: an echo flow over IPv6.
	tb_expect "UDP lines echoed" "$(tb_udp_echo "$TB_SRC" 6 $TB_SINK6 7006 $M)" -eq $M
}

@test "VLAN-tagged flow over the kernel's VLAN devices: passed with reason vlan" {
	local before after

	tb_probe_vlan || skip "kernel without 802.1Q VLAN devices (CONFIG_VLAN_8021Q)"
	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	ip -n "$TB_SRC" link add link s0 name s0.100 type vlan id 100
	ip -n "$TB_DUT" link add link d0 name d0.100 type vlan id 100
	ip -n "$TB_SRC" addr add 203.0.113.1/24 dev s0.100
	ip -n "$TB_DUT" addr add 203.0.113.254/24 dev d0.100
	ip -n "$TB_SRC" link set s0.100 up
	ip -n "$TB_DUT" link set d0.100 up
	ip -n "$TB_SRC" neigh replace 203.0.113.254 lladdr $TB_MAC_D0 dev s0.100 nud permanent
	ip -n "$TB_DUT" neigh replace 203.0.113.1 lladdr $TB_MAC_S0 dev d0.100 nud permanent
	# The sink over the VLAN: the DUT's kernel routes from d0.100 to d1.
	ip -n "$TB_SRC" route add $TB_SINK4/32 via 203.0.113.254 dev s0.100

	before=$(tb_stats_json)
	tb_ping_ok "$TB_SRC" 203.0.113.254 $N
	tb_ping_ok "$TB_SRC" $TB_SINK4 $N
	after=$(tb_stats_json)
	tb_expect "d0 passes with reason vlan" \
		"$(tb_delta "$before" "$after" d0 .pass_reasons.vlan)" -ge $((2 * N))
	tb_expect "d0 redirects" "$(tb_chain_delta "$before" "$after" d0 redirect)" -eq 0
}

# Works without 802.1Q support in the kernel: the frames are written raw.
@test "tagged frames are never routed by xnf, even with a route (reason vlan)" {
	local before after ip ip_hdr icmp frame1 frame2 i

	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	# ICMP echo 203.0.113.1 -> 198.51.100.1: xnf has a route for it.
	ip_hdr="4500 001c 0001 0000 4001 0000 cb00 7101 c633 6401"
	ip="4500 001c 0001 0000 4001 $(tb_ipv4_csum "$ip_hdr") cb00 7101 c633 6401"
	icmp="0800 f7fd 0001 0001"
	# One 802.1Q tag (VLAN 100), and two (802.1ad 200, then 802.1Q 100).
	frame1="$(tb_mac_hex $TB_MAC_D0) $(tb_mac_hex $TB_MAC_S0) 8100 0064 0800 $ip $icmp"
	frame2="$(tb_mac_hex $TB_MAC_D0) $(tb_mac_hex $TB_MAC_S0) 88a8 00c8 8100 0064 0800 $ip $icmp"

	before=$(tb_stats_json)
	for ((i = 0; i < M; i++)); do
		tb_send_frame "$TB_SRC" s0 "$frame1"
		tb_send_frame "$TB_SRC" s0 "$frame2"
	done
	tb_until "d0 to pass the $((2 * M)) frames" \
		stat_grew "$before" d0 .pass_reasons.vlan $((2 * M))
	after=$(tb_stats_json)
	tb_expect "d0 passes with reason vlan" \
		"$(tb_delta "$before" "$after" d0 .pass_reasons.vlan)" -eq $((2 * M))
	tb_expect "d0 malformed drops" \
		"$(tb_delta "$before" "$after" d0 .drop_reasons.malformed)" -eq 0
	tb_expect "d0 redirects" "$(tb_chain_delta "$before" "$after" d0 redirect)" -eq 0
}

# rx_frame4 SRC DST DPORT [bad]: hex of a UDP frame from the source to the
# DUT's d0, addresses as 8 hex digits; "bad" adds one to the IPv4 header
# checksum. The UDP checksum is 0 (none), which IPv4 allows.
rx_frame4()
{
	local hdr csum
	hdr="4500 0024 0001 0000 4011 0000 $1 $2"
	csum=$(tb_ipv4_csum "$hdr")
	[ "${4:-}" = bad ] && csum=$(printf '%04x' $(((16#$csum + 1) & 0xffff)))
	echo "$(tb_mac_hex $TB_MAC_D0) $(tb_mac_hex $TB_MAC_S0) 0800" \
		"4500 0024 0001 0000 4011 $csum $1 $2" \
		"0400 $(printf '%04x' "$3") 0010 0000 786e 662d 7465 7374"
}

# rx_frame6 SRC DST DPORT: the same for IPv6 (32 hex digits per address;
# the UDP checksum is left 0: only where the frame arrives matters).
rx_frame6()
{
	echo "$(tb_mac_hex $TB_MAC_D0) $(tb_mac_hex $TB_MAC_S0) 86dd" \
		"6000 0000 0010 1140 $1 $2" \
		"0400 $(printf '%04x' "$3") 0010 0000 786e 662d 7465 7374"
}

# rx_send BASE: M copies each of, to UDP port BASE + n:
#   0 a good frame 192.0.2.1 -> 198.51.100.1
#   1 the same with its header checksum one too high
#   2 from 127.0.0.1 (a martian source)
#   3 IPv6 from ::1 (a martian source)
rx_send()
{
	local i src4=c0000201 sink4=c6336401
	local lo6=00000000000000000000000000000001
	local sink6=20010db8000200000000000000000001
	for ((i = 0; i < M; i++)); do
		tb_send_frame "$TB_SRC" s0 "$(rx_frame4 $src4 $sink4 $1)"
		tb_send_frame "$TB_SRC" s0 "$(rx_frame4 $src4 $sink4 $(($1 + 1)) bad)"
		tb_send_frame "$TB_SRC" s0 "$(rx_frame4 7f000001 $sink4 $(($1 + 2)))"
		tb_send_frame "$TB_SRC" s0 "$(rx_frame6 $lo6 $sink6 $(($1 + 3)))"
	done
	sleep 0.2
}

# rx_arrived PCAP PORT: frames to UDP port PORT in the sink's capture.
rx_arrived()
{
	timeout 10 tcpdump -r "$1" -n "udp dst port $2" 2>/dev/null | wc -l
}

# The DUT kernel's count of IPv4 header checksum errors (ip_rcv_core).
rx_kcsum()
{
	tb_dut nstat -asz IpExtInCsumErrors | awk '$1 == "IpExtInCsumErrors" { print $2 }'
}

# rx_round BASE: rx_send BASE with xnf attached; sets the caller's before
# and after (xnf -j stats) and kcsum (InCsumErrors counted meanwhile).
rx_round()
{
	local k0
	before=$(tb_stats_json)
	k0=$(rx_kcsum)
	rx_send "$1"
	kcsum=$(($(rx_kcsum) - k0))
	after=$(tb_stats_json)
}

@test "a bad IPv4 header checksum and martian sources are discarded, by Linux alone and by xnf" {
	local pcap=$TB_TMP/rx.pcap cap k0 before after kcsum

	tb_capture "$TB_SINK" k0 1000 "$pcap" "udp and dst portrange 6000-6099"
	cap=$TB_CAPTURE_PID

	# Linux alone: what RFC 1812 asks, and what xnf must match.
	k0=$(rx_kcsum)
	rx_send 6000
	tb_expect "Linux: InCsumErrors" $(($(rx_kcsum) - k0)) -eq $M

	# xnf's l3fwd: the same discards, its own reasons, the kernel sees
	# none of them.
	tb_attach_both l3fwd
	tb_routes
	tb_expect "martian defaults to drop" \
		"$(tb_xnf -j config show | jq -r .martian)" = drop
	rx_round 6010
	tb_expect "xnf: bad_csum drops" \
		"$(tb_delta "$before" "$after" d0 .drop_reasons.bad_csum)" -eq $M
	tb_expect "xnf: martian drops" \
		"$(tb_delta "$before" "$after" d0 .drop_reasons.martian)" -eq $((2 * M))
	tb_expect "xnf: redirects" \
		"$(tb_chain_delta "$before" "$after" d0 redirect)" -eq $M
	tb_expect "xnf: InCsumErrors" "$kcsum" -eq 0

	# martian pass: the kernel gets them, and discards them itself.
	tb_xnf config set martian pass
	tb_expect "martian set to pass" \
		"$(tb_xnf -j config show | jq -r .martian)" = pass
	rx_round 6020
	tb_expect "martian pass: martian passes" \
		"$(tb_delta "$before" "$after" d0 .pass_reasons.martian)" -eq $((2 * M))
	tb_expect "martian pass: bad_csum drops" \
		"$(tb_delta "$before" "$after" d0 .drop_reasons.bad_csum)" -eq $M

	# A firewall alone is no router: it leaves the header checksum to
	# the router behind it, here the DUT's kernel.
	tb_xnf chain set d0 firewall
	rx_round 6030
	tb_expect "firewall alone: bad_csum drops" \
		"$(tb_delta "$before" "$after" d0 .drop_reasons.bad_csum)" -eq 0
	tb_expect "firewall alone: passed to the kernel" \
		"$(tb_chain_delta "$before" "$after" d0 pass)" -eq $((4 * M))
	tb_expect "firewall alone: InCsumErrors" "$kcsum" -eq $M

	tb_bg_stop "$cap"
	local base kind want
	for base in 6000 6010 6020 6030; do
		for kind in 0 1 2 3; do
			want=0
			[ $kind = 0 ] && want=$M
			tb_expect "arrived at the sink, port $((base + kind))" \
				"$(rx_arrived "$pcap" $((base + kind)))" -eq $want
		done
	done
}

# Every class of docs/design.md "Receive checks", one UDP frame each:
# "EXPECT SRC DST [bad]", EXPECT fwd when Linux forwards it (6.18).
RX_CLASSES=(
	"fwd 192.0.2.1 198.51.100.1"
	"drop 192.0.2.1 198.51.100.1 bad"
	"drop 0.0.0.0 198.51.100.1"
	"fwd 0.1.2.3 198.51.100.1"
	"drop 127.0.0.1 198.51.100.1"
	"drop 224.0.0.1 198.51.100.1"
	"drop 239.1.1.1 198.51.100.1"
	"drop 255.255.255.255 198.51.100.1"
	"fwd 240.0.0.1 198.51.100.1"
	"fwd 169.254.1.1 198.51.100.1"
	"drop 192.0.2.1 0.0.0.0"
	"fwd 192.0.2.1 0.1.2.3"
	"drop 192.0.2.1 127.0.0.1"
	"fwd 192.0.2.1 240.0.0.1"
	"fwd 192.0.2.1 169.254.1.1"
	"drop 192.0.2.1 239.1.2.3"
	"drop 192.0.2.1 255.255.255.255"
	"fwd 2001:db8:1::1 2001:db8:2::1"
	"drop ::1 2001:db8:2::1"
	"drop 2001:db8:1::1 ::1"
	"drop :: 2001:db8:2::1"
	"drop ff0e::1 2001:db8:2::1"
	"drop 2001:db8:1::1 ff01::1"
	"drop 2001:db8:1::1 ff00::1"
	"drop 2001:db8:1::1 ff02::1"
	"drop 2001:db8:1::1 ff0e::1"
	"drop fe80::1 2001:db8:2::1"
	"drop 2001:db8:1::1 fe80::1"
	"fwd ::ffff:192.0.2.1 2001:db8:2::1"
	"fwd ::192.0.2.1 2001:db8:2::1"
	"fwd 2001:db8:1::1 ::"
	"fwd 2001:db8:1::1 ::ffff:198.51.100.1"
)

# rx_classes PCAP BASE: one frame of each RX_CLASSES entry i to UDP port
# BASE + i, and what the sink received of them into PCAP.
rx_classes()
{
	local i exp src dst bad cap hex=()

	# The addresses in hex, all in one go (python3 starts slowly).
	mapfile -t hex < <(for c in "${RX_CLASSES[@]}"; do
		read -r exp src dst bad <<<"$c"
		echo "$src $dst"
	done | python3 -c '
import ipaddress, sys
for line in sys.stdin:
    print(" ".join(ipaddress.ip_address(a).packed.hex() for a in line.split()))')
	tb_capture "$TB_SINK" k0 100 "$1" "udp and dst portrange $2-$(($2 + 99))"
	cap=$TB_CAPTURE_PID
	for ((i = 0; i < ${#RX_CLASSES[@]}; i++)); do
		read -r exp src dst bad <<<"${RX_CLASSES[i]}"
		read -r src dst <<<"${hex[i]}"
		if [ ${#src} -eq 32 ]; then
			tb_send_frame "$TB_SRC" s0 "$(rx_frame6 $src $dst $(($2 + i)))"
		else
			tb_send_frame "$TB_SRC" s0 "$(rx_frame4 $src $dst $(($2 + i)) $bad)"
		fi
	done
	sleep 0.2
	tb_bg_stop "$cap"
}

# rx_classes_check PCAP BASE WHO: every class arrived at the sink (or not)
# as RX_CLASSES expects.
rx_classes_check()
{
	local i exp src dst bad n fail=0
	for ((i = 0; i < ${#RX_CLASSES[@]}; i++)); do
		read -r exp src dst bad <<<"${RX_CLASSES[i]}"
		n=$(rx_arrived "$1" $(($2 + i)))
		if { [ "$exp" = fwd ] && [ "$n" -ne 1 ]; } ||
		   { [ "$exp" = drop ] && [ "$n" -ne 0 ]; }; then
			echo "FAIL: $3: $src -> $dst ${bad:-}: $n at the sink, expected $exp" >&2
			fail=1
		fi
	done
	return $fail
}

@test "every receive-check class: xnf forwards exactly what Linux alone forwards" {
	local json

	# Routes that cover every destination, in the kernel and in xnf.
	tb_dut ip route add default via $TB_SINK4
	tb_dut ip -6 route add default via $TB_SINK6

	rx_classes "$TB_TMP/linux.pcap" 6100
	tb_attach_both l3fwd
	tb_routes
	tb_xnf route add 0.0.0.0/0 via $TB_SINK4
	tb_xnf route add ::/0 via $TB_SINK6
	rx_classes "$TB_TMP/lpm.pcap" 6200
	json=$(tb_stats_json d0)
	tb_xnf detach d0
	tb_xnf detach d1
	tb_attach_both l3fwd fib
	rx_classes "$TB_TMP/fib.pcap" 6300

	rx_classes_check "$TB_TMP/linux.pcap" 6100 "Linux alone"
	rx_classes_check "$TB_TMP/lpm.pcap" 6200 "xnf l3fwd"
	rx_classes_check "$TB_TMP/fib.pcap" 6300 "xnf l3fwd fib"
	tb_expect "xnf: bad_csum" "$(tb_stat "$json" d0 .drop_reasons.bad_csum)" -eq 1
	tb_expect "xnf: martian" "$(tb_stat "$json" d0 .drop_reasons.martian)" -eq 13
}

@test "fib mode forwards with the kernel's tables; a missing neighbour passes as no_neigh" {
	local before after k0 k1 st

	tb_attach_both l3fwd fib
	st=$(tb_xnf -j status | jq -c '[.devices[] | [.dev, .chain, .l3fwd]] | sort')
	tb_expect "status" "$st" = '[["d0","l3fwd","fib"],["d1","l3fwd","fib"]]'
	tb_expect "xnf routes" "$(tb_xnf -j route show | jq '.routes | length')" -eq 0

	tb_udp_sink "$TB_SINK" 4 5009 "$TB_TMP/u4"
	k0=$(tb_kfwd)
	before=$(tb_stats_json)
	tb_ping_ok "$TB_SRC" $TB_SINK4 $N
	tb_ping_ok "$TB_SRC" $TB_SINK6 $N
	tb_udp_send "$TB_SRC" $TB_SINK4 5009 $M
	tb_wait_lines "$TB_TMP/u4" $M
	after=$(tb_stats_json)
	k1=$(tb_kfwd)
	tb_expect "datagrams received" "$(tb_lines "$TB_TMP/u4")" -eq $M
	tb_expect "d0 redirects" "$(tb_chain_delta "$before" "$after" d0 redirect)" -eq $((2 * N + M))
	tb_expect "d1 redirects" "$(tb_chain_delta "$before" "$after" d1 redirect)" -eq $((2 * N))
	tb_expect "kernel forwarded (v4 v6)" "$k1" = "$k0"

	# No neighbour entry for the sink: the first packets go to the kernel,
	# which resolves it with ARP; then xnf forwards again.
	ip -n "$TB_DUT" neigh del $TB_SINK4 dev d1
	before=$(tb_stats_json)
	tb_ping_ok "$TB_SRC" $TB_SINK4 $N
	after=$(tb_stats_json)
	tb_expect "d0 no_neigh passes" \
		"$(tb_delta "$before" "$after" d0 .pass_reasons.no_neigh)" -ge 1
	tb_expect "kernel resolved the sink" \
		"$(ip -n "$TB_DUT" -j neigh show $TB_SINK4 dev d1 | jq -r '.[0].lladdr')" = $TB_MAC_K0
	before=$after
	tb_ping_ok "$TB_SRC" $TB_SINK4 $N
	after=$(tb_stats_json)
	tb_expect "resolved: d0 redirects" "$(tb_chain_delta "$before" "$after" d0 redirect)" -eq $N
	ip -n "$TB_DUT" neigh replace $TB_SINK4 lladdr $TB_MAC_K0 dev d1 nud permanent
}

# kill_one I OP: xnf killed by SIGKILL after a random short time in the
# middle of OP (chain: chain set alternating between two chains; fw: fw add;
# route: route add). Sets KILL_WHAT.
kill_one()
{
	local i=$1 op=$2 t rc=0
	local -a times=(0.05 0.01 0.02 0.03 0.05 0.06 0.08 0.1 0.12 0.2)

	t=${times[RANDOM % ${#times[@]}]}
	case $op in
	chain)
		if ((i % 2)); then
			tb_xnf_killed KILL "$t" chain set d0 firewall,l3fwd,l2fwd || rc=$?
		else
			tb_xnf_killed KILL "$t" chain set d0 firewall,l3fwd || rc=$?
		fi ;;
	fw) tb_xnf_killed KILL "$t" fw add drop proto udp dport $((6000 + i)) || rc=$? ;;
	route) tb_xnf_killed KILL "$t" route add 203.0.113.$i/32 via $TB_SINK4 || rc=$? ;;
	esac
	KILL_WHAT="round $i: $op killed after ${t}s (exit $rc)"
	echo "$KILL_WHAT"
}

# What must hold whatever the moment of the kill: xnf still attached with
# the old or the new chain, its tables readable, packets forwarded.
check_alive()
{
	local what=$1 st
	st=$(tb_xnf -j status d0)
	tb_expect "$what: attached" "$(jq -r .attached <<<"$st")" = true
	tb_expect "$what: chain old or new" \
		"$(jq -r '.chain | IN("firewall,l3fwd,l2fwd", "firewall,l3fwd")' <<<"$st")" = true
	tb_expect "$what: an XDP program on d0" "$(tb_xdp_prog_id "$TB_DUT" d0)" != none
	tb_xnf -j route show | jq -e '.routes | type == "array"' >/dev/null
	tb_xnf -j fw show | jq -e '.rules | type == "array"' >/dev/null
	tb_ping_ok "$TB_SRC" $TB_SINK4 2
}

# What xnf shows is what runs: the program status names is the one on d0,
# and every rule `fw show` lists is in force (one datagram to its port
# counts one hit).
check_shown_is_running()
{
	local what=$1 st port ports before after
	st=$(tb_xnf -j status d0)
	tb_expect "$what: the program on d0 is the one status names" \
		"$(tb_xdp_prog_id "$TB_DUT" d0)" = "$(jq -r .prog_id <<<"$st")"
	before=$(tb_xnf -j fw show)
	ports=$(jq -r '.rules[].dport' <<<"$before")
	for port in $ports; do
		tb_udp_send "$TB_SRC" $TB_SINK4 "$port" 1
	done
	# A listed rule that is not in force never counts its datagram: the
	# wait gives up, and the check below says which.
	tb_until "the listed rules to count the datagrams" \
		fw_hits_grew "$before" "$(wc -w <<<"$ports")" || true
	after=$(tb_xnf -j fw show)
	for port in $ports; do
		tb_expect "$what: hits of the listed rule for dport $port" \
			"$(jq -n --argjson a "$before" --argjson b "$after" --arg p "$port" \
			  '[$b, $a] | map(.rules[] | select(.dport == $p) | .packets) | .[0] - .[1]')" -eq 1
	done
}

@test "xnf killed during fw add or route add leaves the dataplane forwarding" {
	local i op before after

	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	for ((i = 0; i < 12; i++)); do
		op=fw
		((i % 2)) && op=route
		kill_one $i $op 2>/dev/null
		check_alive "$KILL_WHAT"
	done

	before=$(tb_stats_json)
	tb_ping_ok "$TB_SRC" $TB_SINK4 $N
	after=$(tb_stats_json)
	tb_expect "d0 redirects after the kills" \
		"$(tb_chain_delta "$before" "$after" d0 redirect)" -eq $N
	# The next complete commands bring back a state in which what xnf
	# shows is what runs.
	tb_xnf chain set d0 firewall,l3fwd,l2fwd
	tb_xnf fw add drop proto udp dport 6999
	check_shown_is_running "after a complete chain set and fw add"
}

# chain set pins the new chain ("prog_new", "chain_new") before it switches,
# so a kill at any point leaves a filled prog array; the next xnf command
# finishes or undoes the switch.
@test "xnf killed during chain set leaves the dataplane forwarding" {
	local i

	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	for ((i = 0; i < 16; i++)); do
		kill_one $i chain 2>/dev/null
		check_alive "$KILL_WHAT"
	done
}

# A killed chain set or fw add can stop between writing its state and
# switching the dataplane; the next command (status, fw show included)
# finishes or undoes it, so what they show is what runs.
@test "a killed xnf never leaves status or fw show describing what does not run" {
	local i op

	tb_attach_both firewall,l3fwd,l2fwd fused
	tb_routes
	for ((i = 0; i < 30; i++)); do
		op=fw
		((i % 2)) && op=chain
		kill_one $i $op 2>/dev/null
		check_shown_is_running "$KILL_WHAT"
	done
}

@test "bpftool reads every pinned map, with BTF field names" {
	local f maps out small=() all=() n

	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	tb_xnf fw add drop proto udp dport 5001
	tb_ping_ok "$TB_SRC" $TB_SINK4 2

	# Which pins are maps, from bpftool's own walk of the bpffs mounts.
	maps=$(timeout 10 bpftool -f -j map show |
	       jq -c --arg r "$XNF_PIN_ROOT/" '[.[] | .pinned[]? as $p |
			select($p | startswith($r)) | {path: $p, max_entries}]')
	for f in "$XNF_PIN_ROOT"/tables/* "$XNF_PIN_ROOT"/dev/d0/*; do
		n=$(jq --arg p "$f" '[.[] | select(.path == $p) | .max_entries][0] // -1' <<<"$maps")
		if [ "$n" -lt 0 ]; then
			# Not a map: the link and the program of d0, nothing else.
			case ${f##*/} in
			link) timeout 10 bpftool -j link show pinned "$f" | jq -e '.type == "xdp"' >/dev/null ;;
			prog) timeout 10 bpftool -j prog show pinned "$f" | jq -e '.type == "xdp"' >/dev/null ;;
			*) tb_expect "${f#"$XNF_PIN_ROOT"/}: bpftool cannot read it" "" = map ;;
			esac
			continue
		fi
		all+=("map show pinned $f")
		# Small maps in full; the big firewall and route tables only as
		# `map show` (a full dump of those takes seconds).
		[ "$n" -le 1024 ] && small+=("map dump pinned $f")
	done
	tb_expect "pinned maps" "${#all[@]}" -ge 20
	tb_expect "small maps" "${#small[@]}" -ge 8

	# One bpftool process per list (bpftool batch stops at an error).
	printf '%s\n' "${all[@]}" >"$TB_TMP/show.batch"
	out=$(timeout 30 bpftool -j batch file "$TB_TMP/show.batch")
	tb_expect "map show of every pinned map" \
		"$(jq '[.[] | .output | objects | select(.id and .name and .max_entries)] | length' <<<"$out")" \
		-eq "${#all[@]}"
	printf '%s\n' "${small[@]}" >"$TB_TMP/dump.batch"
	out=$(timeout 30 bpftool -j batch file "$TB_TMP/dump.batch")
	tb_expect "map dump of every small map" \
		"$(jq '[.[] | .output | arrays] | length' <<<"$out")" -eq "${#small[@]}"
	tb_expect "xnf_cfg has named fields" \
		"$(jq '.[] | select(.command[3] | endswith("/xnf_cfg")) | .output[0].formatted.value | has("no_route")' <<<"$out")" = true
	tb_expect "xnf_stats has named fields" \
		"$(jq '.[] | select(.command[3] | endswith("/xnf_stats")) | .output[0].formatted.values[0].value | has("nf")' <<<"$out")" = true
}

# u32_key N: N as the bytes of a __u32 map key, for bpftool (host order).
u32_key()
{
	local b=($(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))

	if [ "$(printf '\1\0\0\0' | od -An -tu4 | tr -d ' ')" = 1 ]; then
		echo "${b[*]}"
	else
		echo "${b[3]} ${b[2]} ${b[1]} ${b[0]}"
	fi
}

# pinned_value MAP KEY...: bpftool's formatted value of one element of the
# pinned map ROOT/MAP.
pinned_value()
{
	local map=$1

	shift
	timeout 10 bpftool -j map lookup pinned "$XNF_PIN_ROOT/$map" key "$@" |
		jq -c .formatted.value
}

# A field that holds one enumerator has the enum as its type in BTF
# (include/uapi/xnf_dp.h, XNF_ENUM_U32), so bpftool prints its name.
@test "bpftool names the enumerated fields of the pinned maps" {
	local cfg rt val id slot nh gen n

	tb_attach_both firewall,l3fwd
	tb_routes
	tb_xnf route add 203.0.113.0/24 blackhole
	tb_xnf fw add drop proto udp dport 5001
	tb_xnf config set no_route drop

	cfg=$(pinned_value tables/xnf_cfg $(u32_key 0))
	tb_expect "xnf_cfg actions" \
		"$(jq -c '[.no_route, .ttl_expired, .l2_miss, .martian]' <<<"$cfg")" = \
		'["XNF_ACT_DROP","XNF_ACT_PASS","XNF_ACT_FLOOD","XNF_ACT_DROP"]'
	tb_expect "xnf_dev: the chain's NFs" \
		"$(pinned_value dev/d0/xnf_dev $(u32_key 0) | jq -c '.nf[:.chain_len]')" = \
		'["XNF_NF_FIREWALL","XNF_NF_L3FWD"]'

	# The copy of the route tables that packets read, longest prefix
	# match on a /32 key.
	rt=xnf_rt4
	[ "$(jq .rt_copy <<<"$cfg")" = 0 ] || rt=xnf_rt4_b
	val=$(pinned_value tables/$rt $(u32_key 32) 198 51 100 1)
	tb_expect "route via a neighbour" "$(jq -c '[.type, .plen]' <<<"$val")" = '["XNF_RT_UNICAST",24]'
	tb_expect "own address" \
		"$(pinned_value tables/$rt $(u32_key 32) 192 0 2 254 | jq -r .type)" = XNF_RT_LOCAL
	tb_expect "blackhole" \
		"$(pinned_value tables/$rt $(u32_key 32) 203 0 113 9 | jq -r .type)" = XNF_RT_BLACKHOLE
	# Its next hop: xnf_nh_live names the live slot of xnf_nh.
	id=$(jq .nh <<<"$val")
	slot=$(pinned_value tables/xnf_nh_live $(u32_key "$id") | jq .slot)
	tb_expect "live slot" "$slot" -gt 0
	nh=$(pinned_value tables/xnf_nh $(u32_key $((slot - 1))))
	tb_expect "next hop" "$(jq -c '[.state, .gw_family]' <<<"$nh")" = '["XNF_NH_VALID","XNF_AF_INET"]'

	# The active firewall generation: its header and the one rule's bit
	# (xnf_fw_order holds two generations of XNF_FW_MAX_RULES).
	gen=$(pinned_value tables/xnf_fw_active $(u32_key 0))
	n=$(timeout 10 bpftool -j map show pinned "$XNF_PIN_ROOT/tables/xnf_fw_order" |
		jq '.max_entries / 2')
	tb_expect "default action" \
		"$(pinned_value tables/xnf_fw_hdr $(u32_key "$gen") | jq -r .default_action)" = XNF_FW_ALLOW
	tb_expect "the rule's action" \
		"$(pinned_value tables/xnf_fw_order $(u32_key $((gen * n))) | jq -r .action)" = XNF_FW_DROP
}

# stats_settled: one `xnf -j stats` (in js) whose counters add up (ok) and
# that counts the M drops of the stats test.
stats_settled()
{
	js=$(tb_stats_json) || return 1
	ok=$(jq '[.devices[] |
		(.nfs[] | .in == .pass + .drop + .redirect),
		(.nfs[] | .in_bytes == .pass_bytes + .drop_bytes + .redirect_bytes),
		(.nfs[] | .in_bytes >= 14 * .in),
		(.nfs[] | .in == ([.percpu[].in] | add)),
		(.batch.packets == (.nfs[] | select(.nf == "chain") | .in)),
		((.drop_reasons | add) == (.nfs[] | select(.nf == "chain") | .drop)),
		((.drop_reason_bytes | add) == (.nfs[] | select(.nf == "chain") | .drop_bytes)),
		((.pass_reason_bytes | add) == (.nfs[] | select(.nf == "chain") | .pass_bytes)),
		((.pass_reasons | add) == (.nfs[] | select(.nf == "chain") | .pass))
		] | all' <<<"$js")
	[ "$ok" = true ] && [ "$(tb_stat "$js" d0 .drop_reasons.fw_deny)" -ge $M ]
}

@test "stats: valid JSON, counters add up, batch histogram matches, watch ends" {
	local js ok lines

	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	tb_xnf fw add drop proto udp dport 5001
	tb_ping_ok "$TB_SRC" $TB_SINK4 $N
	tb_ping_ok "$TB_SRC" $TB_SINK6 $N
	tb_udp_send "$TB_SRC" $TB_SINK4 5001 $M
	tb_udp_send "$TB_SRC" $TB_SINK4 5002 $M

	# Counters are per CPU and read CPU by CPU: exact on a quiet
	# interface. The datagrams to 5001 may still be on their way, and IPv6
	# multicast of the hosts too: a snapshot that caught a packet
	# half-counted, or before the drops, is read again.
	tb_until "consistent counters with the $M drops" stats_settled
	echo "$js" | jq -c '.devices[] | {dev, nfs: [.nfs[] | del(.percpu)], batch: .batch.packets}'
	tb_expect "counters consistent" "$ok" = true
	tb_expect "devices" "$(jq -c '[.devices[].dev] | sort' <<<"$js")" = '["d0","d1"]'
	tb_expect "d0 chain in" "$(tb_chain "$js" d0 in)" -ge $((2 * N + 2 * M))
	tb_expect "d0 fw_deny" "$(tb_stat "$js" d0 .drop_reasons.fw_deny)" -eq $M
	# Each datagram "<i>\n" (i < 10): Ethernet 14 + IPv4 20 + UDP 8 + 2.
	tb_expect "d0 fw_deny bytes" "$(tb_stat "$js" d0 .drop_reason_bytes.fw_deny)" -eq $((44 * M))
	tb_expect "firewall hits in stats" \
		"$(jq '.fw_hits[] | select(.action == "drop") | .packets' <<<"$js")" -eq $M

	# watch: two refreshes, one JSON object per line, then exit 0.
	run -0 timeout "$TB_TIMEOUT" ip netns exec "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" \
		"$XNF" -j stats watch 0.2 count 2
	lines=$(printf '%s\n' "$output" | jq -c '[.interval > 0, (.devices | length)]')
	tb_expect "watch refreshes" "$(echo "$lines" | tr -d '\n')" = "[true,2][true,2]"
	run -0 timeout "$TB_TIMEOUT" ip netns exec "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" \
		"$XNF" stats watch 0.2 count 2
	# Not a terminal: lines only, no terminal controls.
	[[ "$output" != *$'\e'* ]]
	local piped=${#lines[@]}

	# On a terminal of 12 rows and 40 columns (script(1) gives it one):
	# every refresh is drawn from the top left corner (CUP home) and fits
	# the screen, 11 lines at most, none wider than 40 columns; two
	# interfaces do not fit, so the refreshes fill it.
	run -0 timeout "$TB_TIMEOUT" ip netns exec "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" \
		TERM=xterm script -qec "stty rows 12 cols 40; '$XNF' stats watch 0.2 count 2" /dev/null
	local drawn widest
	read -r drawn widest < <(/usr/bin/python3 -c '
import sys
out = sys.stdin.read().replace("\r", "").replace("\x1b[K", "").replace("\x1b[J", "")
refreshes = [r.rstrip("\n").split("\n") for r in out.split("\x1b[H")[2:]]
print(",".join(str(len(r)) for r in refreshes), max(len(l) for r in refreshes for l in r))' \
		<<<"$output")
	printf "%s\n" "$output" | cat -v | tail -13
	echo "piped: $piped lines; on the terminal: lines per refresh $drawn, widest $widest"
	tb_expect "piped output longer than the terminal" "$piped" -gt 22
	tb_expect "two refreshes, each fills the 11 rows" "$drawn" = "11,11"
	tb_expect "no line wider than the terminal" "$widest" -le 40
}

# d1_xmit JSON JQ: JQ applied to the xmit counters of d1 in the output
# of `xnf -j stats`: an attached interface's, or (D1_PORT=1) those of an
# egress port xnf is not attached to.
d1_xmit()
{
	local at='.devices[] | select(.dev == "d1")'
	[ -z "${D1_PORT:-}" ] ||
		at='.egress_ports[] | select(.dev == "d1" and .attached == false)'
	jq -e "$at | .xmit | $2" <<<"$1"
}

# xmit_delta JQ: how much JQ of d1's xmit counters grew from before to
# after.
xmit_delta()
{
	local a b
	a=$(d1_xmit "$before" "$1") && b=$(d1_xmit "$after" "$1") || return 1
	echo $((b - a))
}

# xmit_settled: every datagram of a round that got past s0 was redirected
# by d0 and accounted on d1 (sets after, s0d, redir, lost, left): lost
# after xnf's verdict are the frames d1's driver refused and the
# redirects to d1 that failed.
xmit_settled()
{
	after=$(tb_stats_json) || return 1
	s0d=$(($(tb_link "$TB_SRC" s0 tx.dropped) - s0))
	redir=$(tb_chain_delta "$before" "$after" d0 redirect) &&
	lost=$(xmit_delta '.drops + .redirect_err') &&
	left=$(xmit_delta .sent) || return 1
	((redir + s0d >= N && left + lost >= redir))
}

# delivered_settled: every datagram of a round arrived or was counted lost
# (sets got).
delivered_settled()
{
	got=$(($(tb_lines "$TB_TMP/5001") - lines))
	((got + s0d + lost >= N))
}

# xmit_round WHAT: N datagrams from the source to the sink's UDP port
# 5001 over d1; checks that sent = received + counted drops, and that
# d0's redirects are d1's frames sent and lost (LOST, REDIR).
xmit_round()
{
	local before after s0 s0d lines got redir lost left

	before=$(tb_stats_json)
	s0=$(tb_link "$TB_SRC" s0 tx.dropped)
	lines=$(tb_lines "$TB_TMP/5001")
	tb_udp_send "$TB_SRC" $TB_SINK4 5001 $N
	tb_until "d0's redirects accounted on d1" xmit_settled &&
	tb_until "datagrams delivered or counted lost" delivered_settled ||
		return 1
	echo "$after" | jq -c '[.devices[], .egress_ports[]?] | map({dev, xmit})'
	echo "$1: sent $N, s0 tx_dropped $s0d, d0 redirected $redir," \
		"d1 sent $left, d1 lost $lost, received $got" >&2
	tb_expect "$1: redirected by d0" "$redir" -eq $((N - s0d))
	tb_expect "$1: every redirect accounted on d1" "$((left + lost))" -eq "$redir"
	tb_expect "$1: sent = received + counted drops" "$((got + s0d + lost))" -eq $N
	LOST=$lost REDIR=$redir
}

# lost_round GRO: xmit_round with GRO of k0 GRO, d1 attached; WARNED: the
# devices status warns about.
lost_round()
{
	tb_sink ethtool -K k0 gro "$1" >/dev/null || return 1
	WARNED=$(tb_xnf -j status | jq -c '[.devices[] | select(.warnings != []) | .dev]')
	xmit_round "gro $1"
}

@test "a redirect into a veth that cannot receive is counted as lost, not only as redirect" {
	tb_attach_both l3fwd
	tb_routes
	tb_udp_sink "$TB_SINK" 4 5001 "$TB_TMP/5001"
	lost_round on
	tb_expect "nothing lost with GRO on" "$LOST" -eq 0
	tb_expect "no warning with GRO on" "$WARNED" = '[]'
	# The sink's end without XDP and GRO: no NAPI runs there, so its
	# peer d1 cannot take redirected frames (NETDEV_XDP_ACT_NDO_XMIT off).
	lost_round off
	tb_expect "lost after the verdict with GRO off" "$LOST" -ge 1
	tb_expect "status warns about d1 with GRO off" "$WARNED" = '["d1"]'
	# An attach warns too (and succeeds).
	tb_xnf detach d1
	run -0 tb_xnf attach d1 chain l3fwd
	tb_expect "attach warns" "$(grep -c '^Warning: ' <<<"$output")" -eq 1
}

@test "a redirect to a port xnf is not attached to is counted where the kernel drops it, and warned about" {
	local prom warned D1_PORT=1

	tb_xnf attach d0 chain l3fwd
	tb_udp_sink "$TB_SINK" 4 5001 "$TB_TMP/5001"
	# k0 without XDP and GRO: no NAPI runs there, so its peer d1, where
	# xnf is not attached, cannot take redirected frames.
	tb_sink ethtool -K k0 gro off >/dev/null
	run -0 tb_xnf route add 198.51.100.0/24 dev d1 lladdr $TB_MAC_K0
	tb_expect "route add warns" "$(grep -c '^Warning: ' <<<"$output")" -eq 1
	warned=$(tb_xnf -j status | jq -c '[.egress_ports[] | select(.attached == false and .warnings != []) | .dev]')
	tb_expect "status warns about the port d1" "$warned" = '["d1"]'
	xmit_round "gro off"
	tb_expect "redirected" "$REDIR" -ge 1
	tb_expect "every redirect lost after the verdict, on d1" "$LOST" -eq "$REDIR"
	prom=$(tb_xnf stats -f prometheus)
	tb_expect "Prometheus: d1's redirect errors, not attached" \
		"$(grep -c '^xnf_redirect_errors_total{interface="d1",attached="false"} [1-9]' <<<"$prom")" -eq 1

	# GRO on at k0: d1 takes them, and says nothing.
	tb_sink ethtool -K k0 gro on >/dev/null
	warned=$(tb_xnf -j status | jq -c '[.egress_ports[] | select(.warnings != []) | .dev]')
	tb_expect "no warning with GRO on" "$warned" = '[]'
	xmit_round "gro on"
	tb_expect "nothing lost with GRO on" "$LOST" -eq 0
	run -0 tb_xnf route add 198.51.100.77/32 dev d1 lladdr $TB_MAC_K0
	tb_expect "route add says nothing with GRO on" "$(grep -c '^Warning: ' <<<"$output")" -eq 0
}

@test "status warns about a veth sender with tx checksum offload on, and not once it is off" {
	tb_attach_both l3fwd
	# tb_setup turned it off at s0 and k0 (the peers of d0 and d1).
	tb_expect "no warning" "$(tb_xnf -j status | jq -c '[.devices[] | select(.warnings != []) | .dev]')" = '[]'
	tb_src ethtool -K s0 tx on >/dev/null
	tb_expect "d0 warned" "$(tb_xnf -j status | jq -c '[.devices[] | select(.warnings != []) | .dev]')" = '["d0"]'
	tb_src ethtool -K s0 tx off >/dev/null
	tb_expect "no warning again" "$(tb_xnf -j status | jq -c '[.devices[] | select(.warnings != []) | .dev]')" = '[]'
}

# The ports as ip(8) lists links, by interface index, wherever xnf lists
# them; and status names l3fwd's mode (fib or lpm) only for a chain that
# uses it: with l3fwd, or xsk, whose workers' l3fwd follows it.
@test "status, stats and Prometheus list the ports by ifindex; status names l3fwd's mode only where it is used" {
	local want

	# Names that sort against their indexes (zz0 before aa0), attached
	# in index order (a directory lists them the other way round).
	ip -n "$TB_DUT" link add zz0 type veth peer name zz1 &&
		ip -n "$TB_DUT" link add aa0 type veth peer name aa1 || return 1
	for d in zz0 zz1 aa0 aa1; do
		ip -n "$TB_DUT" link set "$d" up
	done
	tb_xnf attach d0 chain firewall
	tb_xnf attach d1 chain xsk
	tb_xnf attach zz0 chain l3fwd fib
	tb_xnf attach aa0 chain l2fwd
	want=$(ip -n "$TB_DUT" -j link show | jq -c '[.[] | select(.ifname |
		IN("d0", "d1", "zz0", "aa0")) | .ifname]')
	tb_expect "ip link's order" "$want" = '["d0","d1","zz0","aa0"]'
	tb_expect "status" "$(tb_xnf -j status | jq -c '[.devices[].dev]')" = "$want"
	tb_expect "status: ascending ifindex" \
		"$(tb_xnf -j status | jq '[.devices[].ifindex] | . == sort')" = true
	tb_expect "stats" "$(tb_stats_json | jq -c '[.devices[].dev]')" = "$want"
	tb_expect "Prometheus" "$(tb_xnf stats -f prometheus |
		sed -n 's/^xnf_interface_info{interface="\([^"]*\)".*/\1/p' |
		jq -Rsc 'split("\n") | map(select(. != ""))')" = "$want"
	tb_expect "chain show" "$(tb_xnf -j chain show | jq -c '[.devices[].dev]')" = "$want"

	tb_expect "l3fwd's mode by chain" \
		"$(tb_xnf -j status | jq -c '[.devices[] | [.chain, .l3fwd]]')" = \
		'[["firewall",null],["xsk","lpm"],["l3fwd","fib"],["l2fwd",null]]'
	tb_expect "status DEV: none for l2fwd" "$(tb_xnf -j status aa0 | jq -c .l3fwd)" = null
	tb_expect "status DEV: fib for l3fwd" "$(tb_xnf -j status zz0 | jq -r .l3fwd)" = fib
}

# Three rules, added out of priority order, each matched: fw show, the
# text of stats and the Prometheus labels list them in priority order and
# write each alike: what it matches in the words and order of `fw add`.
@test "a rule reads alike in fw show, stats and Prometheus, in priority order" {
	local fw st prom

	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	tb_xnf fw add prio 20 allow proto udp dst $TB_SINK4/32 dport 7002-7003
	tb_xnf fw add prio 10 allow proto udp src $TB_SRC4/32 dst $TB_SINK4/32 dport 7001
	tb_xnf fw add prio 5 allow proto icmp src $TB_SRC4/32
	tb_ping_ok "$TB_SRC" $TB_SINK4 2
	tb_udp_send "$TB_SRC" $TB_SINK4 7001 2
	tb_udp_send "$TB_SRC" $TB_SINK4 7002 2
	tb_until "every rule to have hits" eval \
		'[ "$(tb_xnf -j fw show | jq "[.rules[].packets | select(. > 0)] | length")" -eq 3 ]'

	# "prio 5 allow proto icmp src 192.0.2.1/32  packets 2 bytes 196"
	fw=$(tb_xnf fw show | sed -n 's/^prio \([0-9]*\) [a-z]* \(.*\)  packets .*/\1 \2/p')
	# "  5  allow  2  2  196  proto icmp src 192.0.2.1/32", after the
	# line "firewall: ..." and the head of the table.
	st=$(tb_xnf stats | awk '/^firewall:/ { on = 1; next }
		on && $1 ~ /^[0-9]+$/ { p = $1; for (i = 1; i <= 5; i++) $i = ""
			sub(/^ +/, ""); print p, $0 }')
	prom=$(tb_xnf stats -f prometheus |
		sed -n 's/^xnf_fw_rule_matched_packets_total{prio="\([0-9]*\)",rule="prio [0-9]* [a-z]* \(.*\)"} .*/\1 \2/p')
	echo "fw show:"$'\n'"$fw"$'\n'"stats:"$'\n'"$st"$'\n'"Prometheus:"$'\n'"$prom" >&2
	tb_expect "fw show: the rules by prio" "$(awk '{ print $1 }' <<<"$fw" | tr '\n' ' ')" = "5 10 20 "
	tb_expect "stats reads as fw show" "$st" = "$fw"
	tb_expect "Prometheus reads as fw show" "$prom" = "$fw"
	tb_expect "stats -j: by prio" "$(tb_stats_json | jq -c '[.fw_hits[].prio]')" = '[5,10,20]'
	tb_expect "fw show -j: by prio" "$(tb_xnf -j fw show | jq -c '[.rules[].prio]')" = '[5,10,20]'
}

# The packets no rule matches get the default policy, and a counter of
# their own: fw show, stats and Prometheus. fw reset zeroes it with the
# rules' and changes no rule; it is in the change log, as stats reset is.
@test "the default policy counts what it decided; fw reset zeroes every counter and changes no rule" {
	local fw before after saved n=6 m=4 d0

	# Only the test's packets: no IPv6 from the hosts (router
	# solicitations would get the default policy too).
	tb_src sysctl -q -w net.ipv6.conf.$TB_S0.disable_ipv6=1
	tb_sink sysctl -q -w net.ipv6.conf.$TB_K0.disable_ipv6=1
	tb_attach_both firewall,l3fwd,l2fwd
	tb_routes
	tb_xnf fw add prio 10 drop proto udp dport 5001
	d0=$(tb_xnf -j fw show | jq .default_packets)

	# Requests through d0, replies through d1: no rule matches them.
	tb_ping_ok "$TB_SRC" $TB_SINK4 $n
	tb_udp_send "$TB_SRC" $TB_SINK4 5001 $m
	tb_until "the rule's hits" eval \
		'[ "$(tb_xnf -j fw show | jq ".rules[0].packets")" -eq '$m' ]'
	fw=$(tb_xnf -j fw show)
	tb_expect "the default policy's packets" "$(jq .default_packets <<<"$fw")" -eq $((d0 + 2 * n))
	tb_expect "its bytes" "$(jq .default_bytes <<<"$fw")" -gt 0
	tb_expect "stats: the same" \
		"$(tb_stats_json | jq -c '[.fw_default, .fw_default_packets, .fw_default_bytes]')" = \
		"$(jq -c '[.default, .default_packets, .default_bytes]' <<<"$fw")"
	tb_expect "Prometheus: the same" \
		"$(tb_xnf stats -f prometheus | awk '$1 == "xnf_fw_default_matched_packets_total{policy=\"allow\"}" { print $2 }')" \
		-eq $((d0 + 2 * n))

	# Dropped by the default: counted there and as fw_deny.
	tb_xnf fw default drop
	before=$(tb_stats_json)
	tb_ping_unanswered "$TB_SRC" $TB_SINK4 $n
	after=$(tb_stats_json)
	tb_expect "dropped by the default policy" \
		"$(jq .fw_default_packets <<<"$after")" -eq $((d0 + 3 * n))
	tb_expect "as fw_deny on d0" "$(tb_delta "$before" "$after" d0 .drop_reasons.fw_deny)" -eq $n

	saved=$(tb_xnf save)
	tb_xnf fw reset
	fw=$(tb_xnf -j fw show)
	tb_expect "reset: the default's" "$(jq -c '[.default_packets, .default_bytes]' <<<"$fw")" = '[0,0]'
	tb_expect "reset: the rules'" "$(jq -c '[.rules[] | .packets, .bytes] | unique' <<<"$fw")" = '[0]'
	tb_expect "reset: the rules and the policy as they were" "$(tb_xnf save)" = "$saved"
	tb_expect "reset: in the change log" \
		"$(tb_xnf -j monitor last 1 once | jq -c '[.command, .result]')" = '["fw reset","ok"]'
	# Not by a prefix; and stats reset zeroes the default's too.
	run -1 tb_xnf fw res
	tb_ping_unanswered "$TB_SRC" $TB_SINK4 2
	tb_expect "counting again" "$(tb_xnf -j fw show | jq .default_packets)" -eq 2
	tb_xnf stats reset
	tb_expect "stats reset" "$(tb_xnf -j fw show | jq .default_packets)" -eq 0
}
