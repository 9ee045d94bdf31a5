#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# nat.bats - NAT end to end with real traffic (issue 36): an edge router
# (xnf on lan0 and wan0, chain conntrack,nat,firewall,l3fwd) between an
# inside host and the outside, which knows only the router's wan address:
#
#   [src] 192.0.2.1 -- lan0 [dut] wan0 198.51.100.254 -- 198.51.100.1 [sink]
#         2001:db8:1::1              2001:db8:2::fe      2001:db8:2::1   |
#                                       203.0.113.1, 2001:db8:3::1  k1 |
#                                                           (mtu 1280) |
#                                 203.0.113.2, .3, 2001:db8:3::2  f0 [far]
#
# The sink is the outside host and the outside router (to the far host,
# over a link with a small MTU): it has no route to the inside, so every
# reply that arrives there went to the router's address and was translated
# back by xnf. What arrives is what the peers say they see (nat_peer.py:
# each server names the peer it sees; nat_icmp.py: the ICMP error the
# inside host receives, the header it quotes), what `xnf ct show -j` and
# the counters say; never a timing.
#
# A connection is one nat_peer.py client held open and driven a line at
# a time through a fifo (as conntrack.bats' ct_conn.py): each line comes
# back "ok LINE" or "lost LINE", so every step is bounded and its result
# read, never guessed from a wait.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=240}"

load ../testbed/testbed

PEER=("/usr/bin/python3" "$TB_TOP/selftests/lib/nat_peer.py")
ICMP=("/usr/bin/python3" "$TB_TOP/selftests/lib/nat_icmp.py")

CHAIN=conntrack,nat,firewall,l3fwd

# The edge policy: the inside goes out, the outside reaches only what a
# port forward translates (the firewall sees the translated destination,
# as nft's forward hook does), ICMP errors about known flows come in.
RULES='fw add allow ct state established,related
fw add drop ct state invalid
fw add allow iif lan0
fw add allow iif wan0 proto tcp dport 80 ct state new
fw default drop'

FAR_GW4=203.0.113.1 FAR4=203.0.113.2 FAR4B=203.0.113.3
FAR_GW6=2001:db8:3::1 FAR6=2001:db8:3::2
# A second inside host (an address of the inside host's).
INSIDE2=192.0.2.2
# Addresses the router's wan port takes besides its own in some tests.
WAN_B4=198.51.100.253 WAN_C4=198.51.100.252

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	TB_D0=lan0 TB_D1=wan0
	CONN_FDS=()
	tb_setup && far_setup
}

teardown()
{
	local fd
	for fd in "${CONN_FDS[@]}"; do
		exec {fd}>&-
	done
	tb_teardown
}

# far_setup: the far host behind the sink (which forwards, with a 1280
# byte link to it and no ICMP rate limit: every probe gets its error), and
# the outside made to know nothing of the inside (the sink's default
# routes through the router go).
far_setup()
{
	FAR="${TB_SRC%-src}-far"
	tb_ns_new "$FAR" || return 1
	ip -n "$TB_SINK" link add k1 mtu 1280 type veth peer name f0 mtu 1280 \
		netns "$FAR" || return 1
	ip -n "$TB_SINK" addr add $FAR_GW4/24 dev k1 &&
	ip -n "$TB_SINK" addr add $FAR_GW6/64 dev k1 nodad &&
	ip -n "$FAR" addr add $FAR4/24 dev f0 &&
	ip -n "$FAR" addr add $FAR4B/24 dev f0 &&
	ip -n "$FAR" addr add $FAR6/64 dev f0 nodad &&
	ip -n "$TB_SINK" link set k1 up &&
	ip -n "$FAR" link set f0 up || return 1
	# The far host's MTU would make it announce an MSS that fits the
	# small link (1240), and the inside's TCP would never send a segment
	# too large for it: announcing 1460 is what a host behind a larger
	# link does, and makes the path MTU the sink's link's, found by
	# discovery.
	ip -n "$FAR" route add default via $FAR_GW4 advmss 1460 &&
	ip -n "$FAR" -6 route add default via $FAR_GW6 advmss 1440 &&
	ip -n "$TB_SINK" route del default &&
	ip -n "$TB_SINK" -6 route del default || return 1
	# The far host's and the sink's checksums complete (as tb_veths'):
	# what the sink forwards to the DUT's XDP program is checked there.
	tb_run "$FAR" ethtool -K f0 tx off >/dev/null &&
	tb_sink ethtool -K k1 tx off >/dev/null || return 1
	tb_sink sysctl -q -w net.ipv4.ip_forward=1 net.ipv4.icmp_ratelimit=0 \
		net.ipv6.conf.all.forwarding=1 net.ipv6.icmp.ratelimit=0 >/dev/null &&
	tb_run "$FAR" sysctl -q -w net.ipv4.icmp_ratelimit=0 \
		net.ipv6.icmp.ratelimit=0 >/dev/null || return 1
	# The router's other wan addresses, as the sink's neighbours.
	ip -n "$TB_SINK" neigh replace $WAN_B4 lladdr $TB_MAC_D1 dev "$TB_K0" nud permanent &&
	ip -n "$TB_SINK" neigh replace $WAN_C4 lladdr $TB_MAC_D1 dev "$TB_K0" nud permanent &&
	# The DUT's kernel routes to the far network too (masquerade asks
	# its FIB for the source address).
	ip -n "$TB_DUT" route add 203.0.113.0/24 via $TB_SINK4 &&
	ip -n "$TB_DUT" -6 route add 2001:db8:3::/64 via $TB_SINK6
}

# router [NAT_RULE...]: xnf on lan0 and wan0 with CHAIN and the edge
# policy (one apply), its routes, then each NAT rule (`xnf nat add
# NAT_RULE`). UDP and ICMP flows live 10 minutes: a test's flows outlive
# it however busy the machine (a flow that expired would give its port
# away).
router()
{
	local r
	printf '%s\n' "config set ct_timeout_udp 600" "config set ct_timeout_icmp 600" \
		"attach lan0 chain $CHAIN" "attach wan0 chain $CHAIN" \
		"$RULES" >"$TB_TMP/router.conf" &&
	tb_xnf apply "$TB_TMP/router.conf" && tb_routes &&
	tb_xnf route add 203.0.113.0/24 via $TB_SINK4 &&
	tb_xnf route add 2001:db8:3::/64 via $TB_SINK6 || return 1
	for r in "$@"; do
		# shellcheck disable=SC2086 # a rule is words
		tb_xnf nat add $r || return 1
	done
}

# tcp_server NS PORT NAME: nat_peer.py's TCP server (greets with NAME and
# the peer it sees, echoes).
tcp_server()
{
	tb_bg "$1" timeout 200 "${PEER[@]}" server tcp "$2" "$3"
	tb_until "tcp port $2 listening in $1" listens "$1" "$2"
}

listens()
{
	tb_run "$1" ss -Hltn "sport = :$2" | grep -q .
}

# udp_server NS PORT NAME: nat_peer.py's UDP server; what it receives is
# logged to $TB_TMP/udp-NAME-PORT.log ("ADDR PORT DATA").
udp_server()
{
	tb_bg "$1" timeout 200 "${PEER[@]}" server udp "$2" "$3" "$TB_TMP/udp-$3-$2.log"
	tb_wait_udp_listen "$1" "$2"
}

# udp_flow NS HOST PORT SPORT COUNT TAG: COUNT datagrams, each answered
# (nat_peer.py client udp); prints the answers' "ADDR PORT" (the source
# the server saw), one per line; fails if one is lost.
udp_flow()
{
	local out
	out=$(tb_run "$1" "${PEER[@]}" -w 5 client udp "$2" "$3" "$4" "$5" "$6") ||
		{ echo "udp client: $out" >&2; return 1; }
	if grep -q '^lost' <<<"$out" || [ "$(grep -c '^reply' <<<"$out")" -ne "$5" ]; then
		echo "udp flow $6 from port $4 to $2:$3: $out" >&2
		return 1
	fi
	awk '{ print $4, $5 }' <<<"$out"
}

# conn_open NAME NS HOST PORT [[SADDR,]SPORT]: connection NAME from NS
# to HOST PORT (from SPORT of SADDR); fails if it cannot connect. conn_hello NAME then prints the server's greeting:
# "SERVER ADDR PORT LPORT" (the server's name, the peer it saw, the
# client's own port).
conn_open()
{
	local name=$1 ns=$2 host=$3 port=$4 fd
	mkfifo "$TB_TMP/$name.in"
	: >"$TB_TMP/$name.out"
	# Opened for reading and writing, a fifo blocks nobody: the client's
	# open for reading below finds a writer at once.
	exec {fd}<>"$TB_TMP/$name.in"
	ip netns exec "$ns" timeout 200 "${PEER[@]}" -w 5 client tcp "$host" "$port" ${5:+"$5"} \
		<"$TB_TMP/$name.in" >"$TB_TMP/$name.out" 3>&- &
	TB_PIDS+=($!)
	CONN_FDS+=("$fd")
	eval "CONN_FD_$name=$fd"
	tb_until "connection $name to answer" grep -q '^\(connected\|refused\)' \
		"$TB_TMP/$name.out"
	grep -q '^connected' "$TB_TMP/$name.out" ||
		{ echo "connection $name: $(cat "$TB_TMP/$name.out")" >&2; return 1; }
}

conn_hello()
{
	awk 'NR == 1 && $1 == "connected" { print $2, $3, $4, $5 }' "$TB_TMP/$1.out"
}

# conn_try NAME NS HOST PORT: prints "connected" or "refused" (a SYN that
# nothing answered within 3 s, or a reset).
conn_try()
{
	local name=$1
	tb_run "$2" timeout 20 "${PEER[@]}" -w 3 client tcp "$3" "$4" </dev/null \
		>"$TB_TMP/$name.out" || true
	awk 'NR == 1 { print $1 }' "$TB_TMP/$name.out"
}

# conn_send NAME LINE: LINE over connection NAME; fails unless echoed.
conn_send()
{
	local name=$1 line=$2 fdv="CONN_FD_$1"
	echo "$line" >&"${!fdv}"
	# Fixed strings: a regular expression of a line of thousands of
	# characters takes grep minutes.
	tb_until "connection $name: an answer to ${line:0:40}" \
		grep -q -x -F -e "ok $line" -e "lost $line" "$TB_TMP/$name.out"
	grep -q -x -F "ok $line" "$TB_TMP/$name.out" ||
		{ echo "connection $name: ${line:0:40} lost" >&2; return 1; }
}

# ct_entry JQ_FILTER: the entries of `xnf ct show -j` that JQ_FILTER
# selects, compact, one per line.
ct_entry()
{
	tb_xnf -j ct show | jq -c ".entries[] | select($1)"
}

ct_stat()
{
	tb_xnf -j ct stats | jq -e ".$1"
}

# drop_reason DEV REASON: `xnf -j stats`' count of drops for REASON on DEV.
drop_reason()
{
	tb_stat "$(tb_stats_json)" "$1" ".drop_reasons.$2"
}

# probe ARGS...: nat_icmp.py probe from the inside host; its JSON.
probe()
{
	tb_src "${ICMP[@]}" -w 5 probe "$@"
}

@test "masquerade: TCP, UDP and ping from the inside leave from the router's address, replies come back" {
	local hello lport port got n0 addr uport
	router "masquerade oif wan0"
	tcp_server "$TB_SINK" 80 outside
	udp_server "$TB_SINK" 7000 outside
	n0=$(ct_stat nat_created)

	conn_open m "$TB_SRC" $TB_SINK4 80
	hello=$(conn_hello m)
	read -r _ _ port lport <<<"$hello"
	tb_expect "the outside server's peer" "${hello% * *}" = "outside $TB_D14"
	conn_send m one
	conn_send m two

	got=$(udp_flow "$TB_SRC" $TB_SINK4 7000 5353 3 u) || return 1
	tb_expect "UDP: the source the outside saw" "$(sort -u <<<"$got")" = "$(head -1 <<<"$got")"
	read -r addr uport <<<"$got"
	tb_expect "UDP: the source address the outside saw" "$addr" = $TB_D14

	tb_capture "$TB_SINK" "$TB_K0" 3 "$TB_TMP/ping.pcap" 'icmp[icmptype] == icmp-echo'
	tb_ping_ok "$TB_SRC" $TB_SINK4 3
	wait "$TB_CAPTURE_PID"
	got=$(tcpdump -r "$TB_TMP/ping.pcap" -n 2>/dev/null | awk '{ print $3 }' | sort -u)
	tb_expect "ping: the source the outside saw" "$got" = $TB_D14

	# conntrack -L's two tuples: the original as the inside sent it, the
	# reply as the outside sends it, to the router's address.
	got=$(ct_entry ".proto == \"tcp\" and .orig.dport == 80" |
		jq -r '[.orig.src, .orig.sport, .orig.dst, .reply.src, .reply.sport,
			.reply.dst, .reply.dport] | join(" ")')
	tb_expect "tcp: original and reply tuples" "$got" = \
		"$TB_SRC4 $lport $TB_SINK4 $TB_SINK4 80 $TB_D14 $port"
	got=$(ct_entry ".proto == \"udp\" and .orig.sport == 5353" |
		jq -r '[.orig.src, .orig.dst, .orig.dport, .reply.src, .reply.sport, .reply.dst,
			.reply.dport] | join(" ")')
	tb_expect "udp: original and reply tuples" "$got" = \
		"$TB_SRC4 $TB_SINK4 7000 $TB_SINK4 7000 $TB_D14 $uport"
	got=$(ct_entry ".proto == \"icmp\" and .orig.dst == \"$TB_SINK4\"" |
		jq -r '[.orig.src, .reply.src, .reply.dst] | join(" ")')
	tb_expect "icmp: original and reply tuples" "$got" = "$TB_SRC4 $TB_SINK4 $TB_D14"
	got=$(ct_entry ".orig.src == \"$TB_SRC4\" and .orig.dst == \"$TB_SINK4\"" | jq -c .nat | sort -u)
	tb_expect "the connections' translation" "$got" = \
		'{"snat":true,"dnat":false,"masquerade":true,"oif":"wan0"}'
	# Each translated connection has a second entry, its reply tuple's.
	tb_expect "aliases" "$(ct_stat aliases)" -ge 3
	tb_expect "translations counted" $(($(ct_stat nat_created) - n0)) -ge 3
}

@test "masquerade: a UDP checksum of 0 (none, IPv4) stays 0 both ways, others are right" {
	local got cap
	router "masquerade oif wan0"
	tb_bg "$TB_SINK" env NAT_PEER_NO_CHECK=1 timeout 200 "${PEER[@]}" server udp 7000 outside \
		"$TB_TMP/udp-outside-7000.log"
	tb_wait_udp_listen "$TB_SINK" 7000
	udp_server "$TB_SINK" 7001 outside
	tb_capture "$TB_SINK" "$TB_K0" 4 "$TB_TMP/out.pcap" udp
	cap=$TB_CAPTURE_PID
	tb_capture "$TB_SRC" "$TB_S0" 4 "$TB_TMP/back.pcap" udp
	got=$(NAT_PEER_NO_CHECK=1 udp_flow "$TB_SRC" $TB_SINK4 7000 5400 2 z) || return 1
	tb_expect "no checksum: the source the outside saw" "$(sort -u <<<"$got")" = "$TB_D14 5400"
	got=$(udp_flow "$TB_SRC" $TB_SINK4 7001 5401 2 c) || return 1
	tb_expect "a checksum: the source the outside saw" "$(sort -u <<<"$got")" = "$TB_D14 5401"
	wait "$cap" "$TB_CAPTURE_PID"
	# tcpdump -vv: "[no cksum]" for 0, "[udp sum ok]" for a right one.
	got=$(tcpdump -vv -n -r "$TB_TMP/out.pcap" 2>/dev/null | grep -o '\[no cksum\]\|\[udp sum ok\]\|\[bad udp cksum[^]]*\]' |
		sort | uniq -c | awk '{ $1 = $1; print }' | tr '\n' ,)
	tb_expect "what the outside received" "$got" = "2 [no cksum],2 [udp sum ok],"
	got=$(tcpdump -vv -n -r "$TB_TMP/back.pcap" 2>/dev/null | grep -o '\[no cksum\]\|\[udp sum ok\]\|\[bad udp cksum[^]]*\]' |
		sort | uniq -c | awk '{ $1 = $1; print }' | tr '\n' ,)
	tb_expect "what the inside received" "$got" = "2 [no cksum],2 [udp sum ok],"
}

@test "masquerade over IPv6 (NAT66): the outside sees the router's wan address" {
	local hello
	router "masquerade oif wan0"
	tcp_server "$TB_SINK" 80 outside
	conn_open m6 "$TB_SRC" $TB_SINK6 80
	hello=$(conn_hello m6)
	tb_expect "the outside server's peer" "${hello% * *}" = "outside $TB_D16"
	conn_send m6 one
	tb_expect "ping6 through the translation" "$(tb_ping "$TB_SRC" $TB_SINK6 3)" = "3 3"
}

@test "port forward: the outside reaches the inside server through the router's address:8080" {
	local hello lport got
	router "dnat iif wan0 proto tcp dport 8080 to $TB_SRC4:80"
	tcp_server "$TB_SRC" 80 inside
	conn_open pf "$TB_SINK" $TB_D14 8080
	hello=$(conn_hello pf)
	lport=${hello##* }
	# The inside server sees the outside client as it is.
	tb_expect "the inside server's peer" "$hello" = "inside $TB_SINK4 $lport $lport"
	conn_send pf one
	conn_send pf two
	got=$(ct_entry ".proto == \"tcp\" and .orig.dport == 8080" |
		jq -r '[.orig.src, .orig.sport, .orig.dst, .reply.src, .reply.sport,
			.reply.dst, .reply.dport] | join(" ")')
	tb_expect "original and reply tuples" "$got" = \
		"$TB_SINK4 $lport $TB_D14 $TB_SRC4 80 $TB_SINK4 $lport"
	tb_expect "the connection's translation" \
		"$(ct_entry ".proto == \"tcp\" and .orig.dport == 8080" | jq -c .nat)" = \
		'{"snat":false,"dnat":true,"masquerade":false,"oif":null}'
	# A port nothing forwards is the router's: its kernel resets it.
	tb_expect "the outside to port 8081" "$(conn_try p8081 "$TB_SINK" $TB_D14 8081)" = refused
}

@test "two inside hosts, one source port, one destination: the first keeps its port, the second gets another" {
	local p1 p2 got u1 u2
	router "masquerade oif wan0"
	ip -n "$TB_SRC" addr add $INSIDE2/24 dev "$TB_S0"
	ip -n "$TB_DUT" neigh replace $INSIDE2 lladdr $TB_MAC_S0 dev lan0 nud permanent
	tcp_server "$TB_SINK" 80 outside
	udp_server "$TB_SINK" 7000 outside
	conn_open c1 "$TB_SRC" $TB_SINK4 80 "$TB_SRC4,5555"
	conn_open c2 "$TB_SRC" $TB_SINK4 80 "$INSIDE2,5555"
	p1=$(conn_hello c1 | awk '{ print $2, $3 }')
	p2=$(conn_hello c2 | awk '{ print $2, $3 }')
	tb_expect "the first: its port kept" "$p1" = "$TB_D14 5555"
	tb_expect "the second: the router's address" "${p2% *}" = $TB_D14
	# Linux's range for a port of 1024 and above (no range given).
	tb_expect "the second: another port" "${p2#* }" -ne 5555
	tb_expect "the second: a port of 1024-65535" "${p2#* }" -ge 1024
	conn_send c1 one
	conn_send c2 one
	got=$(ct_entry ".proto == \"tcp\" and .orig.sport == 5555" | jq -r .reply.dport | sort -n |
		tr '\n' ' ')
	tb_expect "the connections' reply ports" "$got" = "$(printf '%s\n' 5555 "${p2#* }" |
		sort -n | tr '\n' ' ')"
	# UDP the same, each flow keeping its port over its datagrams.
	got=$(udp_flow "$TB_SRC" $TB_SINK4 7000 "$TB_SRC4,5556" 2 a) || return 1
	u1=$(sort -u <<<"$got")
	got=$(udp_flow "$TB_SRC" $TB_SINK4 7000 "$INSIDE2,5556" 2 b) || return 1
	u2=$(sort -u <<<"$got")
	tb_expect "udp: the first flow" "$u1" = "$TB_D14 5556"
	tb_expect "udp: the second flow, one source" "$(wc -l <<<"$u2")" -eq 1
	tb_expect "udp: the second flow's address" "${u2% *}" = $TB_D14
	tb_expect "udp: the second flow's port" "${u2#* }" -ne 5556
	tb_expect "udp: the second flow's port" "${u2#* }" -ge 1024
}

@test "a port range exhausted: the connection one too many is dropped and counted, the others keep working" {
	local i got ports st0 st1 r0 r1 drop0 drops n=5 sent addr port
	# (A port range needs the protocol, as in nft.)
	router "snat oif wan0 proto udp to $TB_D14:40000-40002" \
		"snat oif wan0 proto tcp to $TB_D14:40000-40002"
	udp_server "$TB_SINK" 7000 outside
	udp_server "$TB_SINK" 7001 outside
	tcp_server "$TB_SINK" 80 outside

	# Three UDP flows to one destination take the three ports.
	ports=
	for i in 1 2 3; do
		got=$(udp_flow "$TB_SRC" $TB_SINK4 7000 500$i 2 u$i) || return 1
		tb_expect "flow u$i: one source" "$(sort -u <<<"$got" | wc -l)" -eq 1
		read -r addr port <<<"$got"
		tb_expect "flow u$i: the source address" "$addr" = $TB_D14
		tb_expect "flow u$i: a port of the range" "$port" -ge 40000
		tb_expect "flow u$i: a port of the range" "$port" -le 40002
		ports+="$port "
	done
	tb_expect "three flows, three ports" "$(tr ' ' '\n' <<<"$ports" | sort -u | grep -c .)" -eq 3

	# A fourth: each of its datagrams is a new connection that finds no
	# port, dropped and counted. Every one sent is counted once: by the
	# refusal, or by the veth that dropped it before xnf saw it.
	st0=$(ct_stat nat_no_port) r0=$(drop_reason lan0 nat_no_port)
	drop0=$(tb_link "$TB_SRC" s0 tx.dropped)
	sent=$(tb_src "${PEER[@]}" client udp $TB_SINK4 7000 5004 $n u4 nowait | awk '{ print $2 }')
	tb_expect "datagrams sent" "$sent" -eq $n
	refused() { (($(ct_stat nat_no_port) - st0 + $(tb_link "$TB_SRC" s0 tx.dropped) - drop0 >= n)); }
	tb_until "$n refusals" refused
	drops=$(($(tb_link "$TB_SRC" s0 tx.dropped) - drop0))
	st1=$(ct_stat nat_no_port) r1=$(drop_reason lan0 nat_no_port)
	tb_expect "ct stats nat_no_port" $((st1 - st0)) -eq $((n - drops))
	tb_expect "lan0's drops for reason nat_no_port" $((r1 - r0)) -eq $((n - drops))
	tb_expect "the fourth flow's datagrams the outside received" \
		"$(grep -c ' u4-' "$TB_TMP/udp-outside-7000.log")" -eq 0

	# The first three keep their ports and work on.
	for i in 1 2 3; do
		got=$(udp_flow "$TB_SRC" $TB_SINK4 7000 500$i 2 v$i) || return 1
		tb_expect "flow u$i, later: its port" "$(sort -u <<<"$got" | awk '{ print $2 }')" = \
			"$(awk -v i=$i '{ print $i }' <<<"$ports")"
	done
	# The range is per destination (the reply tuple): to another port
	# of the outside host, the fourth source finds one.
	got=$(udp_flow "$TB_SRC" $TB_SINK4 7001 5004 1 w4) || return 1
	tb_expect "flow u4 to another destination: the source address" "${got% *}" = $TB_D14

	# TCP the same: three connections, the fourth refused and counted.
	for i in 1 2 3; do
		conn_open t$i "$TB_SRC" $TB_SINK4 80
		port=$(conn_hello t$i | awk '{ print $3 }')
		tb_expect "connection t$i: a port of the range" "$port" -ge 40000
		tb_expect "connection t$i: a port of the range" "$port" -le 40002
	done
	st0=$(ct_stat nat_no_port)
	tb_expect "connection t4" "$(conn_try t4 "$TB_SRC" $TB_SINK4 80)" = refused
	tb_expect "connection t4's SYNs refused, counted" $(($(ct_stat nat_no_port) - st0)) -ge 1
	for i in 1 2 3; do
		conn_send t$i "after-t4-$i"
	done
}

@test "a rule change keeps the translation of established flows; new flows take the new rule" {
	local got
	router "snat oif wan0 to $TB_D14"
	tcp_server "$TB_SINK" 80 outside
	udp_server "$TB_SINK" 7000 outside
	conn_open a "$TB_SRC" $TB_SINK4 80
	tb_expect "connection a's source" "$(conn_hello a | awk '{ print $2 }')" = $TB_D14
	got=$(udp_flow "$TB_SRC" $TB_SINK4 7000 6001 1 ua) || return 1
	tb_expect "udp flow a's source" "${got% *}" = $TB_D14

	tb_xnf nat flush
	tb_xnf nat add snat oif wan0 to $WAN_B4
	# The sink has no route to the inside: an echo that comes back went
	# to the old address and was translated back.
	conn_send a after-change
	got=$(udp_flow "$TB_SRC" $TB_SINK4 7000 6001 1 ub) || return 1
	tb_expect "udp flow a after the change: its source" "${got% *}" = $TB_D14

	conn_open b "$TB_SRC" $TB_SINK4 80
	tb_expect "connection b's source" "$(conn_hello b | awk '{ print $2 }')" = $WAN_B4
	got=$(udp_flow "$TB_SRC" $TB_SINK4 7000 6002 1 uc) || return 1
	tb_expect "udp flow b's source" "${got% *}" = $WAN_B4
	conn_send a again
	conn_send b again
	got=$(ct_entry ".proto == \"tcp\" and .orig.dport == 80" | jq -r .reply.dst | sort | tr '\n' ' ')
	tb_expect "the connections' reply destinations" "$got" = "$WAN_B4 $TB_D14 "
}

@test "a chain swap (tail-called, fused, save and apply) keeps a translated connection flowing" {
	router "masquerade oif wan0"
	tcp_server "$TB_SINK" 80 outside
	conn_open keep "$TB_SRC" $TB_SINK4 80
	conn_send keep start
	tb_xnf chain set lan0 $CHAIN fused
	tb_xnf chain set wan0 $CHAIN fused
	conn_send keep after-fused
	conn_open fused "$TB_SRC" $TB_SINK4 80
	tb_expect "a new connection under the fused chain: its source" \
		"$(conn_hello fused | awk '{ print $2 }')" = $TB_D14
	tb_xnf chain set lan0 $CHAIN tailcall
	tb_xnf chain set wan0 $CHAIN tailcall
	conn_send keep after-tailcall
	conn_send fused after-tailcall
	tb_xnf save >"$TB_TMP/xnf.conf"
	grep -q '^nat add' "$TB_TMP/xnf.conf" ||
		{ echo "xnf save wrote no nat rule: $(cat "$TB_TMP/xnf.conf")" >&2; return 1; }
	tb_xnf apply "$TB_TMP/xnf.conf"
	conn_send keep after-apply
	conn_send fused after-apply
	tb_expect "the rules after save and apply" "$(tb_xnf -j nat show | jq '.rules | length')" -eq 1
}

# trace_hops B: traceroute's probes from the inside host to the far host
# (UDP from ports B+1.., ICMP echo with identifier B+4) and the errors
# that come back for them.
trace_hops()
{
	local b=$1 got hop
	# Hop 1, the router itself: its kernel answers the original source
	# (the source is translated only for what leaves forwarded).
	got=$(probe $FAR4 udp 1 $((b + 1)))
	tb_expect "hop 1" "$(jq -c '.error | [.src, .type, .inner.src, .inner.sport]' <<<"$got")" = \
		"[\"$TB_D04\",11,\"$TB_SRC4\",$((b + 1))]"
	# Hop 2, the outside router, about the probe it saw from the router's
	# address; hop 3, the far host's port unreachable. Both must reach
	# the inside host as about its own probe: outer destination and
	# quoted source translated back, every checksum right.
	for hop in 2 3; do
		got=$(probe $FAR4 udp $hop $((b + hop)))
		echo "hop $hop: $got"
		tb_expect "udp hop $hop: an error came" "$(jq -c .error <<<"$got")" != null
		tb_expect "udp hop $hop" "$(jq -c '.error | [.src, .dst, .type, .code]' <<<"$got")" = \
			"$([ $hop = 2 ] && echo "[\"$TB_SINK4\",\"$TB_SRC4\",11,0]" ||
				echo "[\"$FAR4\",\"$TB_SRC4\",3,3]")"
		tb_expect "udp hop $hop: the quoted header" \
			"$(jq -c '.error.inner | [.src, .dst, .sport, .dport]' <<<"$got")" = \
			"[\"$TB_SRC4\",\"$FAR4\",$((b + hop)),$((33434 + hop))]"
		tb_expect "udp hop $hop: checksums (IPv4, ICMP, quoted IPv4, quoted UDP)" \
			"$(jq -c '.error | [.ip_csum_ok, .icmp_csum_ok, .inner.ip_csum_ok,
				.inner.l4_csum_ok]' <<<"$got")" = "[true,true,true,true]"
	done
	# An ICMP echo probe: the quoted identifier translated back.
	got=$(probe $FAR4 icmp 2 $((b + 4)))
	echo "icmp hop 2: $got"
	tb_expect "icmp hop 2" "$(jq -c '.error | [.src, .dst, .type, .code]' <<<"$got")" = \
		"[\"$TB_SINK4\",\"$TB_SRC4\",11,0]"
	tb_expect "icmp hop 2: the quoted header" \
		"$(jq -c '.error.inner | [.src, .dst, .id]' <<<"$got")" = \
		"[\"$TB_SRC4\",\"$FAR4\",$((b + 4))]"
	tb_expect "icmp hop 2: checksums (IPv4, ICMP, quoted IPv4, quoted ICMP)" \
		"$(jq -c '.error | [.ip_csum_ok, .icmp_csum_ok, .inner.ip_csum_ok,
			.inner.l4_csum_ok]' <<<"$got")" = "[true,true,true,true]"
}

@test "traceroute through xnf: time exceeded and port unreachable reach the inside host translated back" {
	local r0
	router "masquerade oif wan0"
	r0=$(ct_stat related)
	trace_hops 34000
	tb_expect "errors related to translated flows" $(($(ct_stat related) - r0)) -ge 3
	# The same through the fused chain, whose functions have less stack.
	tb_xnf chain set lan0 $CHAIN fused
	tb_xnf chain set wan0 $CHAIN fused
	trace_hops 35000
}

@test "path MTU discovery through xnf: the outside router's frag-needed reaches the inside sender" {
	local line
	router "masquerade oif wan0"
	tcp_server "$FAR" 80 far
	conn_open p "$TB_SRC" $FAR4 80
	tb_expect "the far server's peer" "$(conn_hello p | awk '{ print $1, $2 }')" = "far $TB_D14"
	# Segments of 1500 bytes, DF set, meet the sink's 1280 byte link: the
	# sink's frag-needed goes to the router's address, and only if xnf
	# translates it back (its quoted TCP header too) does the inside
	# host's TCP find its socket and send smaller segments.
	line=$(head -c 6000 /dev/zero | tr '\0' p)
	conn_send p "$line"
	conn_send p "$line$line"
	tb_expect "the inside host's path MTU to the far host" \
		"$(tb_src ip -o route get $FAR4 | grep -o 'mtu [0-9]*')" = "mtu 1280"
	# ICMP echo (ping -M do): the frag-needed quotes the translated
	# identifier, which the ping socket is found by.
	tb_src ping -n -c 1 -w 10 -M do -s 1400 $FAR4B || true
	tb_expect "the inside host's path MTU to the far host's other address" \
		"$(tb_src ip -o route get $FAR4B | grep -o 'mtu [0-9]*')" = "mtu 1280"
}

@test "path MTU discovery through NAT66: the outside router's packet too big reaches the inside sender" {
	local line
	router "masquerade oif wan0"
	tcp_server "$FAR" 80 far
	conn_open p6 "$TB_SRC" $FAR6 80
	tb_expect "the far server's peer" "$(conn_hello p6 | awk '{ print $1, $2 }')" = "far $TB_D16"
	# As over IPv4, with ICMPv6's packet too big (whose checksum covers
	# the addresses of the outer header too).
	line=$(head -c 6000 /dev/zero | tr '\0' p)
	conn_send p6 "$line"
	conn_send p6 "$line$line"
	tb_expect "the inside host's path MTU to the far host" \
		"$(tb_src ip -o -6 route get $FAR6 | grep -o 'mtu [0-9]*')" = "mtu 1280"
}

# follow_start: `xnf -j neigh follow` in the DUT (the daemon that watches
# the kernel's addresses, neighbours and links for routes added by hand),
# its events in $TB_TMP/follow.out.
follow_start()
{
	: >"$TB_TMP/follow.out"
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" timeout 200 "$XNF" -j neigh follow \
		>"$TB_TMP/follow.out" 2>&1
	tb_until "neigh follow to start" follow_event started ||
		{ cat "$TB_TMP/follow.out" >&2; return 1; }
}

# follow_event NAME [JQ]: neigh follow printed the event NAME (JQ holds).
follow_event()
{
	jq -e --arg e "$1" "select(.event == \$e) | ${2:-true}" "$TB_TMP/follow.out" \
		2>/dev/null | grep -qx true
}

@test "masquerade follows the wan address: new flows take the new one, the old address's end" {
	local got f0
	router "masquerade oif wan0"
	tcp_server "$TB_SINK" 80 outside
	udp_server "$TB_SINK" 7000 outside
	conn_open old "$TB_SRC" $TB_SINK4 80
	tb_expect "before: the source" "$(conn_hello old | awk '{ print $2 }')" = $TB_D14
	follow_start
	f0=$(ct_stat flushed)
	# The wan address changes: the new one added, the old one removed (a
	# secondary promoted, as a DHCP renewal with a new lease does).
	tb_dut sysctl -q -w net.ipv4.conf.wan0.promote_secondaries=1
	ip -n "$TB_DUT" addr add $WAN_C4/24 dev wan0
	ip -n "$TB_DUT" addr del $TB_D14/24 dev wan0
	# As Linux's masquerade notifier: the connections masqueraded to the
	# removed address are flushed.
	tb_until "the ct_flush event" follow_event ct_flush '.dev == "wan0" and .flushed >= 1' ||
		{ cat "$TB_TMP/follow.out" >&2; return 1; }
	tb_expect "connections to the old address left" \
		"$(ct_entry ".reply.dst == \"$TB_D14\"" | grep -c .)" -eq 0
	tb_expect "flushed" $(($(ct_stat flushed) - f0)) -ge 1
	conn_open new "$TB_SRC" $TB_SINK4 80
	tb_expect "after: a new connection's source" "$(conn_hello new | awk '{ print $2 }')" = $WAN_C4
	conn_send new one
	got=$(udp_flow "$TB_SRC" $TB_SINK4 7000 6100 2 n) || return 1
	tb_expect "after: a new udp flow's source" "$(sort -u <<<"$got" | awk '{ print $1 }')" = $WAN_C4
	tb_expect "after: ping through the new address" "$(tb_ping "$TB_SRC" $TB_SINK4 2)" = "2 2"
	# The flush took only the old address's connections.
	conn_send new two
}

@test "packets to the router's own addresses that match no translation reach its kernel untouched" {
	local hello name addr port lport
	router "masquerade oif wan0" "dnat iif wan0 proto tcp dport 8080 to $TB_SRC4:80"
	tcp_server "$TB_DUT" 22 router
	conn_open in "$TB_SRC" $TB_D04 22
	hello=$(conn_hello in)
	read -r name addr port lport <<<"$hello"
	tb_expect "from the inside: the router's socket, the peer untouched" \
		"$name $addr $port" = "router $TB_SRC4 $lport"
	conn_send in one
	conn_open out "$TB_SINK" $TB_D14 22
	hello=$(conn_hello out)
	read -r name addr port lport <<<"$hello"
	tb_expect "from the outside: the router's socket, the peer untouched" \
		"$name $addr $port" = "router $TB_SINK4 $lport"
	conn_send out one
	tb_ping_ok "$TB_SRC" $TB_D04 2
	tb_ping_ok "$TB_SINK" $TB_D14 2
	tb_expect "translations made" "$(ct_stat nat_created)" -eq 0
}

@test "hairpin: with dnat iif wan0, the inside reaching the public address:8080 gets the router's socket, as Linux" {
	local hello
	router "masquerade oif wan0" "dnat iif wan0 proto tcp dport 8080 to $TB_SRC4:80"
	tcp_server "$TB_SRC" 80 inside
	tcp_server "$TB_DUT" 8080 router
	# From the outside the forward applies ...
	conn_open pf "$TB_SINK" $TB_D14 8080
	tb_expect "from the outside" "$(conn_hello pf | awk '{ print $1, $2 }')" = "inside $TB_SINK4"
	# ... from the inside the rule's iif does not match: the packet is
	# the router's (nft: `iifname wan0 dnat` in prerouting).
	conn_open hp "$TB_SRC" $TB_D14 8080
	hello=$(conn_hello hp)
	tb_expect "from the inside" "$(awk '{ print $1, $2 }' <<<"$hello")" = "router $TB_SRC4"
	conn_send hp one
	conn_send pf one
}
