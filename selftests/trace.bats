#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# trace.bats - `xnf trace` end to end (issue 37): real packets through the
# test bed of testbed/testbed.bash (source | DUT | sink), one at a time,
# each traced by `xnf -j trace MATCH count 1 timeout 20` in the DUT; what
# the trace document says is compared with what happened: what arrived at
# the sink (tcpdump on k0: addresses, ports, MACs), what the source got
# back from the DUT's kernel (ICMP errors, echo replies), and xnf's
# counters (the chain's, the rules' hits, the worker's).
#
# The bounds: a trace ends by itself (count, time), and the datapath
# disarms it itself, so a tracer killed with SIGKILL leaves nothing
# armed once its deadline passed: xnf_trace_cfg[0].id read with bpftool
# from the pin, and xnf_trace_stats (records sent, records lost) read the
# same way. A reader that does not read (SIGSTOP) loses records, counted,
# never packets.
#
# Assertions are on JSON fields, counters and captures; never on wording
# or timing (a trace's timeout is a bound that a busy machine may use up,
# never what a test measures: each test waits for the event that ends its
# trace).

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=180}"

load ../testbed/testbed

GEN=${GEN:-$(dirname "$XNF")/xnf-gen}

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	TRACER_PID= WPID=
	tb_setup
}

teardown()
{
	# A tracer stopped by a test would not see tb_teardown's SIGTERM.
	[ -z "$TRACER_PID" ] || kill -CONT "$TRACER_PID" 2>/dev/null || true
	tb_teardown
}

# ---- the trace -----------------------------------------------------------------

# trace_cfg FIELD: xnf_trace_cfg[0].FIELD, as bpftool reads the pin (the
# datapath's own view: armed is id != 0).
trace_cfg()
{
	timeout 10 bpftool -j map dump pinned "$XNF_PIN_ROOT/tables/xnf_trace_cfg" |
		jq -er ".[0].formatted.value.$1"
}

# trace_stat FIELD: xnf_trace_stats' FIELD (traced, lost) summed over CPUs.
trace_stat()
{
	timeout 10 bpftool -j map dump pinned "$XNF_PIN_ROOT/tables/xnf_trace_stats" |
		jq -e "[.[0].formatted.values[].value.$1] | add"
}

trace_armed_by()
{
	[ "$(trace_cfg id)" != 0 ] && [ "$(trace_cfg pid)" = "$1" ]
}

# trace_start NAME ARGS...: `xnf -j trace ARGS` in the DUT, in the
# background (bounded by its own count and timeout), its output in
# $TB_TMP/NAME.json; returns once its trace is armed. Sets TRACER_PID (the
# xnf process itself: `ip netns exec` and env exec it) and TRACE_OUT.
trace_start()
{
	local name=$1
	shift
	TRACE_OUT=$TB_TMP/$name.json
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" -j trace "$@" \
		>"$TRACE_OUT" 2>"$TB_TMP/$name.err"
	TRACER_PID=$TB_BG_PID
	tb_until "trace $name to be armed" trace_armed_by "$TRACER_PID" ||
		{ cat "$TB_TMP/$name.err" >&2; return 1; }
}

# trace_wait: waits for the tracer to end by itself; fails unless it
# exited 0. Prints what it wrote (for bats' output on a failure).
trace_wait()
{
	local rc=0
	wait "$TRACER_PID" || rc=$?
	TRACER_PID=
	cat "$TRACE_OUT"
	tb_expect "tracer's exit status" "$rc" -eq 0
}

# pkt N: the N-th packet document of the trace (compact).
pkt()
{
	jq -c 'select(.event == "packet")' "$TRACE_OUT" | sed -n "${1}p"
}

npkts()
{
	jq -c 'select(.event == "packet")' "$TRACE_OUT" | wc -l
}

# trace_end: the trace's end document.
trace_end()
{
	jq -c 'select(.event == "end")' "$TRACE_OUT"
}

# step DOC NF: the step of NF in the packet document DOC.
step()
{
	jq -c --arg nf "$2" '.steps[] | select(.nf == $nf)' <<<"$1"
}

# is WHAT DOC JQ: JQ holds for the JSON document DOC. Ports, prios and
# queues are compared as strings (tostring): the contract does not say
# whether a port is a number.
is()
{
	local what=$1 doc=$2 f=$3
	jq -e "$f" <<<"$doc" >/dev/null && return 0
	echo "FAIL: $what: $f does not hold for $doc" >&2
	return 1
}

# act DOC: the document's action in lower case without an XDP_ prefix.
act()
{
	jq -r '.action | ascii_downcase | ltrimstr("xdp_")' <<<"$1"
}

# ---- what happened at the far side ------------------------------------------------

# sink_watch: tcpdump of every IPv4 packet k0 receives, with link-level
# headers, until the test ends.
sink_watch()
{
	SINK_PCAP=$TB_TMP/k0.pcap
	tb_capture "$TB_SINK" k0 100000 "$SINK_PCAP" ip
	SINK_CAP=$TB_CAPTURE_PID
}

# sink_seen FILTER: what the sink received of FILTER so far, tcpdump -e.
sink_seen()
{
	timeout 10 tcpdump -r "$SINK_PCAP" -n -e -v "$@" 2>/dev/null
}

sink_count()
{
	timeout 10 tcpdump -r "$SINK_PCAP" -n "$@" 2>/dev/null | wc -l
}

sink_has()
{
	[ "$(sink_count "$@")" -ge 1 ]
}

# sink_has_n N FILTER...: the sink received at least N packets of FILTER.
sink_has_n()
{
	local n=$1
	shift
	[ "$(sink_count "$@")" -ge "$n" ]
}

# d0_grew BEFORE JQ N: d0's counter JQ grew by at least N since BEFORE.
d0_grew()
{
	[ "$(tb_delta "$1" "$(tb_stats_json d0)" d0 "$2")" -ge "$3" ]
}

# all_read: the tracer wrote a document for every record the datapath
# sent.
all_read()
{
	[ "$(npkts)" -eq "$(trace_stat traced)" ]
}

# sink_flush PORT: one datagram to the sink's PORT, sent after what the
# test sent, on the same path; once the sink has it, anything sent before
# that was going to arrive did (what did not was dropped).
sink_flush()
{
	tb_udp_send "$TB_SRC" $TB_SINK4 "$1" 1 &&
		tb_until "the datagram to $1 at the sink" sink_has udp dst port "$1"
}

# udp_same NS DST PORT N [CPU]: N datagrams of one flow (one socket, one
# source port), from a process pinned to CPU (default 0): its packets meet
# xnf on that CPU, whose flow cache they share.
udp_same()
{
	tb_run "$1" taskset -c "${5:-0}" bash -c '
		exec 5<>"/dev/udp/$1/$2" || exit 1
		for ((i = 1; i <= $3; i++)); do
			echo "$i" >&5 || exit 1
		done' _ "$2" "$3" "$4"
}

# rx_frame4 SRC DST DPORT [bad]: as traffic.bats': a UDP frame from the
# source to d0, addresses as 8 hex digits; "bad" adds one to the header
# checksum; "short" makes its total length longer than the frame
# (malformed).
rx_frame4()
{
	local hdr csum tot=0024
	[ "${4:-}" = short ] && tot=0100
	hdr="4500 $tot 0001 0000 4011 0000 $1 $2"
	csum=$(tb_ipv4_csum "$hdr")
	[ "${4:-}" = bad ] && csum=$(printf '%04x' $(((16#$csum + 1) & 0xffff)))
	echo "$(tb_mac_hex $TB_MAC_D0) $(tb_mac_hex $TB_MAC_S0) 0800" \
		"4500 $tot 0001 0000 4011 $csum $1 $2" \
		"0400 $(printf '%04x' "$3") 0010 0000 786e 662d 7465 7374"
}

SRC4_HEX=c0000201 SINK4_HEX=c6336401

# ping_once ARGS...: one echo request from the source, whose answer (if
# any) is not what the caller checks.
ping_once()
{
	tb_src ping -q -n -c 1 -W 1 "$@" >/dev/null || true
}

# ---- the tests --------------------------------------------------------------------

# drop_rule_hits PRIO: the hits of the rule of PRIO.
rule_hits()
{
	tb_xnf -j fw show | jq -e --argjson p "$1" '.rules[] | select(.prio == $p) | .packets'
}

@test "forwarded, tail-called and fused: route, next hop, egress and MAC as the sink received it; the flow cache misses, then hits" {
	local mode doc d2 fw l3 port before after seen

	tb_routes
	sink_watch
	for mode in tailcall fused; do
		if [ $mode = fused ]; then
			tb_attach_both firewall,l3fwd fused
		else
			tb_attach_both firewall,l3fwd
		fi
		port=$((7000 + ${#mode}))
		tb_xnf fw add prio 10 allow proto udp dport $port

		# A socket listens: no port unreachable fails the second write.
		tb_udp_sink "$TB_SINK" 4 $port "$TB_TMP/u$port"
		trace_start fwd-$mode proto udp dport $port count 2 timeout 20
		before=$(tb_stats_json)
		udp_same "$TB_SRC" $TB_SINK4 $port 2
		trace_wait
		tb_wait_lines "$TB_TMP/u$port" 2
		after=$(tb_stats_json)
		tb_expect "$mode: packets traced" "$(npkts)" -eq 2
		tb_expect "$mode: d0 redirects" "$(tb_chain_delta "$before" "$after" d0 redirect)" -eq 2

		doc=$(pkt 1)
		is "$mode: packet 1" "$doc" ".packet == 1 and .in == \"d0\" and .proto == \"udp\" and
			.src == \"$TB_SRC4\" and .dst == \"$TB_SINK4\" and (.dport | tostring) == \"$port\" and
			.verdict == \"redirect\" and .out == \"d1\" and
			[.steps[].nf] == [\"firewall\", \"l3fwd\"]"
		tb_expect "$mode: action" "$(act "$doc")" = redirect
		fw=$(step "$doc" firewall)
		is "$mode: firewall step" "$fw" '(.rule | tostring) == "10" and .default_policy == false and .flow_cache == "miss"'
		l3=$(step "$doc" l3fwd)
		is "$mode: l3fwd step" "$l3" ".route == \"198.51.100.0/24\" and .via == \"$TB_SINK4\" and
			.dev == \"d1\" and .flow_cache == \"miss\" and (.mac == null or .mac == \"$TB_MAC_K0\")"

		# The second packet of the flow, on the same CPU: from the caches.
		d2=$(pkt 2)
		is "$mode: packet 2, same CPU" "$d2" ".packet == 2 and .cpu == $(jq .cpu <<<"$doc")"
		is "$mode: packet 2's firewall step" "$(step "$d2" firewall)" '.flow_cache == "hit" and (.rule | tostring) == "10"'
		is "$mode: packet 2's l3fwd step" "$(step "$d2" l3fwd)" ".flow_cache == \"hit\" and .dev == \"d1\" and .via == \"$TB_SINK4\""
		is "$mode: end" "$(trace_end)" '.traced == 2 and .lost == 0'

		# At the far side: both, from d1's MAC to the next hop's, one hop.
		tb_until "$mode: the 2 datagrams at the sink" \
			sink_has_n 2 udp dst port $port
		seen=$(sink_seen udp dst port $port)
		echo "$seen"
		tb_expect "$mode: MACs and TTL at the sink" \
			"$(grep -c "$TB_MAC_D1 > $TB_MAC_K0.*ttl 63," <<<"$seen")" -eq 2
		tb_xnf detach d0
		tb_xnf detach d1
		tb_xnf fw del prio 10
	done
}

# A route without a gateway names the next hop's MAC itself (l3fwd's step
# has room for a gateway's address or a MAC).
@test "a route to a device and MAC: the MAC the trace names is the one the frame arrives with" {
	local doc mac

	tb_attach_both l3fwd
	tb_routes
	tb_xnf route add 203.0.113.0/24 dev d1 lladdr $TB_MAC_K0
	sink_watch
	trace_start mac proto udp dport 7003 count 1 timeout 20
	tb_udp_send "$TB_SRC" 203.0.113.7 7003 1
	trace_wait
	doc=$(pkt 1)
	is "forwarded" "$doc" '.verdict == "redirect" and .out == "d1"'
	is "the l3fwd step" "$(step "$doc" l3fwd)" \
		'.route == "203.0.113.0/24" and .via == null and .dev == "d1" and .mac != null'
	tb_until "the datagram at the sink" sink_has udp dst port 7003
	mac=$(step "$doc" l3fwd | jq -r .mac)
	tb_expect "the destination MAC at the sink" \
		"$(sink_seen udp dst port 7003 | grep -c "$TB_MAC_D1 > $mac,")" -eq 1
	tb_expect "the route's MAC" "$mac" = $TB_MAC_K0
}

@test "IPv6: forwarded with its route and next hop; hop limit 1 passed to the kernel, whose time exceeded reaches the source" {
	local doc

	tb_attach_both firewall,l3fwd
	tb_routes
	trace_start v6 icmpv6 type echo-request count 1 timeout 20
	tb_ping_ok "$TB_SRC" $TB_SINK6 1
	trace_wait
	doc=$(pkt 1)
	is "v6: the packet" "$doc" ".family == \"ipv6\" and .src == \"$TB_SRC6\" and .dst == \"$TB_SINK6\" and
		.icmp_type == \"echo-request\" and .verdict == \"redirect\" and .out == \"d1\""
	is "v6: the l3fwd step" "$(step "$doc" l3fwd)" ".route == \"2001:db8:2::/64\" and .via == \"$TB_SINK6\" and .dev == \"d1\""

	tb_capture "$TB_SRC" s0 1 "$TB_TMP/te6.pcap" "icmp6 and ip6[40] == 3"
	trace_start hl icmpv6 type echo-request count 1 timeout 20
	tb_src ping -q -n -c 1 -t 1 -W 1 $TB_SINK6 >/dev/null || true
	trace_wait
	wait "$TB_CAPTURE_PID" || true
	is "hop limit 1: passed" "$(pkt 1)" '.verdict == "pass" and .reason == "ttl_expired"'
	tb_expect "time exceeded at the source" "$(pcap_count "$TB_TMP/te6.pcap")" -eq 1
}

# chain_both CHAIN MODE: CHAIN on d0 and d1, tail-called or fused: attached
# the first time, then set.
chain_both()
{
	local fused=
	[ "$2" = fused ] && fused=fused
	if [ "$(tb_xdp_prog_id "$TB_DUT" d0)" = none ]; then
		tb_attach_both "$1" $fused
	else
		tb_xnf chain set d0 "$1" ${fused:-tailcall} &&
			tb_xnf chain set d1 "$1" ${fused:-tailcall} || return 1
	fi
	tb_expect "d0 runs $1 $2" "$(tb_xnf -j status d0 | jq -r '"\(.chain) \(.fused)"')" = \
		"$1 $([ "$2" = fused ] && echo true || echo false)"
}

@test "dropped by a rule and by the default policy, tail-called and fused: the rule's prio or the default, nothing at the sink, the counters moved" {
	local doc hits0 def0 fw mode

	tb_routes
	tb_xnf fw add prio 20 drop proto udp dport 7020
	tb_xnf fw add prio 30 allow proto udp dport 9
	sink_watch
	for mode in tailcall fused; do
		chain_both firewall,l3fwd $mode
		tb_xnf fw default allow
		hits0=$(rule_hits 20)
		trace_start rule-$mode proto udp dport 7020 count 1 timeout 20
		tb_udp_send "$TB_SRC" $TB_SINK4 7020 1
		trace_wait
		doc=$(pkt 1)
		is "$mode: dropped by rule 20" "$doc" '.verdict == "drop" and .reason == "fw_deny" and .out == null'
		tb_expect "$mode: action" "$(act "$doc")" = drop
		fw=$(step "$doc" firewall)
		is "$mode: firewall step" "$fw" '(.rule | tostring) == "20" and .default_policy == false and .verdict == "drop"'
		is "$mode: no l3fwd step after the drop" "$doc" '[.steps[].nf] == ["firewall"]'
		tb_expect "$mode: rule 20's hits" "$(rule_hits 20)" -eq $((hits0 + 1))
		sink_flush 9
		tb_expect "$mode: datagrams to 7020 at the sink" "$(sink_count udp dst port 7020)" -eq 0

		# The default policy: drop what no rule allows.
		tb_xnf fw default drop
		def0=$(tb_xnf -j fw show | jq -e .default_packets)
		trace_start default-$mode proto udp dport 7021 count 1 timeout 20
		tb_udp_send "$TB_SRC" $TB_SINK4 7021 1
		trace_wait
		doc=$(pkt 1)
		is "$mode: dropped by the default" "$doc" '.verdict == "drop" and .reason == "fw_deny"'
		is "$mode: firewall step" "$(step "$doc" firewall)" '.default_policy == true and .rule == null'
		tb_expect "$mode: default policy's count" "$(tb_xnf -j fw show | jq -e .default_packets)" -ge $((def0 + 1))
		sink_flush 9
		tb_expect "$mode: datagrams to 7021 at the sink" "$(sink_count udp dst port 7021)" -eq 0
	done
}

# drop_check NAME REASON FRAME_OR_CMD...: one packet dropped by l3fwd's
# receive checks, traced by `iif d0` (which a malformed frame matches
# too): the trace's one document for it says REASON, d0 counted one drop
# for it, the sink got nothing. The trace is ended with SIGINT (other
# frames, such as the source's IPv6 reports, may be traced too).
drop_check()
{
	local name=$1 reason=$2 before after doc
	shift 2
	before=$(tb_stats_json d0)
	trace_start "$name" iif d0 count 0 timeout 30
	"$@"
	tb_until "d0 to count a $reason drop" d0_grew "$before" ".drop_reasons.$reason" 1
	kill -INT "$TRACER_PID"
	trace_wait
	after=$(tb_stats_json d0)
	tb_expect "$name: $reason drops" "$(tb_delta "$before" "$after" d0 ".drop_reasons.$reason")" -eq 1
	doc=$(jq -c --arg r "$reason" 'select(.event == "packet" and .reason == $r)' "$TRACE_OUT")
	tb_expect "$name: documents with reason $reason" "$(grep -c . <<<"$doc")" -eq 1
	is "$name: verdict" "$doc" '.verdict == "drop" and .out == null'
	tb_expect "$name: action" "$(act "$doc")" = drop
	is "$name: the end" "$(trace_end)" "(.traced | tostring) == \"$(npkts)\" and .lost == 0"
	TRACE_DOC=$doc
}

@test "receive checks (bad_csum, martian, ttl_expired set to drop), malformed and a blackhole route: each traced with its reason, nothing at the sink" {
	tb_attach_both l3fwd
	tb_routes
	tb_xnf config set ttl_expired drop
	sink_watch

	drop_check bad_csum bad_csum tb_send_frame "$TB_SRC" s0 "$(rx_frame4 $SRC4_HEX $SINK4_HEX 7030 bad)"
	is "bad_csum: the l3fwd step" "$(step "$TRACE_DOC" l3fwd)" '.reason == "bad_csum" and .verdict == "drop"'
	drop_check martian martian tb_send_frame "$TB_SRC" s0 "$(rx_frame4 7f000001 $SINK4_HEX 7031)"
	is "martian: the source" "$TRACE_DOC" '.src == "127.0.0.1" and (.dport | tostring) == "7031"'
	is "martian: the l3fwd step" "$(step "$TRACE_DOC" l3fwd)" '.reason == "martian"'
	drop_check ttl ttl_expired ping_once -t 1 $TB_SINK4
	is "ttl: the l3fwd step" "$(step "$TRACE_DOC" l3fwd)" '.reason == "ttl_expired" and .verdict == "drop"'
	drop_check malformed malformed tb_send_frame "$TB_SRC" s0 "$(rx_frame4 $SRC4_HEX $SINK4_HEX 7032 short)"
	# Dropped by the entry, before any NF.
	is "malformed: no NF ran" "$TRACE_DOC" '.steps == []'
	tb_xnf route add 203.0.113.0/24 blackhole
	drop_check blackhole blackhole ping_once 203.0.113.5
	is "blackhole: the route" "$(step "$TRACE_DOC" l3fwd)" '.route == "203.0.113.0/24" and .reason == "blackhole"'

	sink_flush 9
	tb_expect "at the sink: none of them" \
		"$(sink_count udp dst portrange 7030-7032 or icmp and src $TB_SRC4)" -eq 0
}

# pass_check NAME REASON MATCH -- CMD...: one packet of MATCH that l3fwd
# passes to the kernel for REASON; the trace and d0's pass counter say so.
pass_check()
{
	local name=$1 reason=$2 before after doc m=()
	shift 2
	while [ "$1" != -- ]; do
		m+=("$1")
		shift
	done
	shift
	before=$(tb_stats_json d0)
	trace_start "$name" "${m[@]}" count 1 timeout 20
	"$@"
	trace_wait
	after=$(tb_stats_json d0)
	tb_expect "$name: $reason passes" "$(tb_delta "$before" "$after" d0 ".pass_reasons.$reason")" -ge 1
	doc=$(pkt 1)
	is "$name: verdict" "$doc" ".verdict == \"pass\" and .reason == \"$reason\" and .out == null"
	tb_expect "$name: action" "$(act "$doc")" = pass
	is "$name: the l3fwd step" "$(step "$doc" l3fwd)" ".verdict == \"pass\" and .reason == \"$reason\""
	TRACE_DOC=$doc
}

# src_got PCAP: packets in a capture at the source.
pcap_count()
{
	timeout 10 tcpdump -r "$1" -n 2>/dev/null | wc -l
}

@test "passed to the kernel: local, ttl_expired, frag_needed, fib_other (a kernel route), no_route; what the kernel then did reached the source or the sink" {
	local k0 k1

	tb_attach_both l3fwd
	tb_routes

	# local: the DUT's kernel answers the ping.
	pass_check local local icmp type echo-request dst $TB_D04 -- \
		tb_ping_ok "$TB_SRC" $TB_D04 1

	# ttl_expired: the kernel sends time exceeded to the source.
	tb_capture "$TB_SRC" s0 1 "$TB_TMP/te.pcap" "icmp[0] == 11 and src $TB_D04"
	pass_check ttl ttl_expired icmp type echo-request -- \
		ping_once -t 1 $TB_SINK4
	wait "$TB_CAPTURE_PID" || true
	tb_expect "ttl: time exceeded at the source" "$(pcap_count "$TB_TMP/te.pcap")" -eq 1

	# frag_needed: d1's MTU is smaller than a DF packet; the kernel sends
	# fragmentation needed to the source.
	ip -n "$TB_DUT" link set d1 mtu 1280
	tb_capture "$TB_SRC" s0 1 "$TB_TMP/fn.pcap" "icmp[0] == 3 and icmp[1] == 4"
	pass_check frag frag_needed icmp type echo-request -- \
		ping_once -M do -s 1400 $TB_SINK4
	wait "$TB_CAPTURE_PID" || true
	tb_expect "frag: fragmentation needed at the source" "$(pcap_count "$TB_TMP/fn.pcap")" -eq 1
	is "frag: the length" "$TRACE_DOC" '.len >= 1428'
	ip -n "$TB_DUT" link set d1 mtu 1500

	# fib_other: a `kernel` route; the kernel forwards it.
	tb_xnf route replace 198.51.100.0/24 kernel
	k0=$(tb_kfwd)
	pass_check kernel fib_other icmp type echo-request -- \
		tb_ping_ok "$TB_SRC" $TB_SINK4 1
	k1=$(tb_kfwd)
	tb_expect "fib_other: forwarded by the kernel" "$(( ${k1%% *} - ${k0%% *} ))" -ge 1
	is "fib_other: the route" "$(step "$TRACE_DOC" l3fwd)" '.route == "198.51.100.0/24" and .dev == null'

	# no_route: the kernel forwards it, the reply comes back.
	tb_xnf route del 198.51.100.0/24
	k0=$(tb_kfwd)
	pass_check no_route no_route icmp type echo-request -- \
		tb_ping_ok "$TB_SRC" $TB_SINK4 1
	k1=$(tb_kfwd)
	tb_expect "no_route: forwarded by the kernel" "$(( ${k1%% *} - ${k0%% *} ))" -ge 1
	is "no_route: no route in the step" "$(step "$TRACE_DOC" l3fwd)" '.route == null and .dev == null'
}

@test "fib mode: forwarded with the kernel's next hop and egress; a missing neighbour passes as no_neigh" {
	local doc

	tb_attach_both l3fwd fib
	sink_watch
	trace_start fib proto udp dport 7040 count 1 timeout 20
	tb_udp_send "$TB_SRC" $TB_SINK4 7040 1
	trace_wait
	doc=$(pkt 1)
	is "fib: forwarded" "$doc" '.verdict == "redirect" and .out == "d1"'
	is "fib: the l3fwd step" "$(step "$doc" l3fwd)" ".dev == \"d1\" and (.via == null or .via == \"$TB_SINK4\")"
	tb_until "the datagram at the sink" sink_has udp dst port 7040

	ip -n "$TB_DUT" neigh del $TB_SINK4 dev d1
	pass_check no_neigh no_neigh proto udp dport 7041 -- \
		tb_udp_send "$TB_SRC" $TB_SINK4 7041 1
	# The kernel resolved the neighbour and sent the datagram on.
	tb_until "the datagram at the sink" sink_has udp dst port 7041
}

@test "l2fwd: the FDB entry's port and MAC, as the sink received it; an unknown MAC flooded (l2_miss)" {
	local doc frame before

	tb_attach_both l2fwd
	tb_xnf fdb add $TB_MAC_K0 dev d1
	tb_xnf config set l2_miss flood
	sink_watch

	# A frame to the sink's MAC (from the source's addresses; l2fwd looks
	# at MACs only).
	frame=$(rx_frame4 $SRC4_HEX $SINK4_HEX 7050)
	frame="$(tb_mac_hex $TB_MAC_K0)${frame#* }"
	trace_start fdb proto udp dport 7050 count 1 timeout 20
	tb_send_frame "$TB_SRC" s0 "$frame"
	trace_wait
	doc=$(pkt 1)
	is "fdb: forwarded" "$doc" '.verdict == "redirect" and .out == "d1"'
	is "fdb: the l2fwd step" "$(step "$doc" l2fwd)" ".dev == \"d1\" and .mac == \"$TB_MAC_K0\""
	tb_until "the frame at the sink" sink_has udp dst port 7050
	tb_expect "its destination MAC at the sink" \
		"$(sink_seen udp dst port 7050 | grep -c "> $TB_MAC_K0,")" -eq 1

	frame=$(rx_frame4 $SRC4_HEX $SINK4_HEX 7051)
	frame="02786e000099${frame#* }"
	trace_start miss proto udp dport 7051 count 1 timeout 20
	tb_send_frame "$TB_SRC" s0 "$frame"
	trace_wait
	doc=$(pkt 1)
	# Flooding is no drop or pass: no reason (as `xnf stats` counts it).
	is "l2_miss: flooded" "$doc" '.verdict == "flood" and .out == null'
	tb_expect "l2_miss: action" "$(act "$doc")" = redirect
	is "l2_miss: the l2fwd step" "$(step "$doc" l2fwd)" '.verdict == "flood" and .dev == null'
	tb_until "the flooded frame at the sink" sink_has udp dst port 7051

	# Passed instead: the reason is l2_miss. The frame reaches the DUT's
	# kernel (its packet socket on d0 sees what XDP passed). The counter
	# is not compared exactly: the source's own IPv6 multicast (MLD, RS,
	# DAD of its link-local address, sent for seconds after link up) is
	# passed as l2_miss too.
	tb_xnf config set l2_miss pass
	frame=$(rx_frame4 $SRC4_HEX $SINK4_HEX 7052)
	frame="02786e000099${frame#* }"
	tb_capture "$TB_DUT" d0 1000 "$TB_TMP/d0.pcap" udp
	before=$(tb_stat "$(tb_stats_json d0)" d0 .pass_reasons.l2_miss)
	trace_start pass proto udp dport 7052 count 1 timeout 20
	tb_send_frame "$TB_SRC" s0 "$frame"
	trace_wait
	doc=$(pkt 1)
	is "l2_miss pass" "$doc" '.verdict == "pass" and .reason == "l2_miss" and .out == null'
	is "l2_miss pass: the l2fwd step" "$(step "$doc" l2fwd)" '.verdict == "pass" and .reason == "l2_miss"'
	tb_until "the passed frame in the DUT's kernel" dut_has udp dst port 7052
	tb_expect "l2_miss pass: counted" \
		"$(tb_stat "$(tb_stats_json d0)" d0 .pass_reasons.l2_miss)" -gt "$before"
}

# dut_has FILTER: the DUT's kernel received a frame of FILTER on d0.
dut_has()
{
	[ "$(timeout 10 tcpdump -r "$TB_TMP/d0.pcap" -n "$@" 2>/dev/null | wc -l)" -eq 1 ]
}

@test "conntrack, tail-called and fused: the first packet new in the original direction, the reply established" {
	local d1 d2 got mode port=7060

	tb_routes
	for mode in tailcall fused; do
		chain_both conntrack,firewall,l3fwd $mode
		if [ $mode = tailcall ]; then
			tb_xnf fw add prio 10 allow ct state established,related
			tb_xnf fw add prio 20 allow iif d0 proto udp
			tb_xnf fw default drop
		fi
		port=$((port + 1))
		trace_start ct-$mode proto udp count 2 timeout 20
		got=$(tb_udp_echo "$TB_SRC" 4 $TB_SINK4 $port 1)
		trace_wait
		tb_expect "$mode: the datagram echoed" "$got" -eq 1
		d1=$(pkt 1)
		d2=$(pkt 2)
		is "$mode: request" "$d1" ".in == \"d0\" and (.dport | tostring) == \"$port\" and .verdict == \"redirect\" and .out == \"d1\""
		is "$mode: request: conntrack" "$(step "$d1" conntrack)" '.ct_state == "new" and .ct_dir == "original"'
		is "$mode: request: rule 20" "$(step "$d1" firewall)" '(.rule | tostring) == "20"'
		is "$mode: reply" "$d2" ".in == \"d1\" and (.sport | tostring) == \"$port\" and .verdict == \"redirect\" and .out == \"d0\""
		is "$mode: reply: conntrack" "$(step "$d2" conntrack)" '.ct_state == "established" and .ct_dir == "reply"'
		is "$mode: reply: rule 10" "$(step "$d2" firewall)" '(.rule | tostring) == "10"'
	done
}

@test "nat, tail-called and fused: the tuple the trace says the packet left with is the one the sink received" {
	local doc nat seen want mode port=7070

	tb_routes
	sink_watch
	for mode in tailcall fused; do
		chain_both conntrack,nat,l3fwd $mode
		[ $mode = fused ] || tb_xnf nat add masquerade oif d1
		port=$((port + 1))
		trace_start nat-$mode proto udp dport $port count 1 timeout 20
		tb_udp_send "$TB_SRC" $TB_SINK4 $port 1
		trace_wait
		tb_until "$mode: the datagram at the sink" sink_has udp dst port $port
		seen=$(timeout 10 tcpdump -r "$SINK_PCAP" -n "udp dst port $port" 2>/dev/null)
		echo "$seen"
		doc=$(pkt 1)
		is "$mode: entered from the source" "$doc" ".src == \"$TB_SRC4\" and .verdict == \"redirect\" and .out == \"d1\""
		nat=$(step "$doc" nat | jq -c .nat)
		# tcpdump: "IP 198.51.100.254.1024 > 198.51.100.1.7071: UDP ..."
		want=$(awk '{ print $3, $5 }' <<<"$seen" | tr -d :)
		tb_expect "$mode: the tuple at the sink" \
			"$(jq -r '"\(.src).\(.sport) \(.dst).\(.dport)"' <<<"$nat")" = "$want"
		is "$mode: translated to the router's address" "$nat" ".src == \"$TB_D14\""
	done
}

worker_running()
{
	[ "$(tb_xnf -j status d0 | jq -r '.workers[0].state // "none"')" = running ]
}

@test "handed to a worker: verdict xsk with the queue; the worker read it and the sink got it" {
	local doc rx

	tb_xnf attach d0 chain xsk
	tb_xnf attach d1 chain l3fwd
	tb_routes
	sink_watch
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" worker d0 nf l3fwd egress d1 duration 120
	WPID=$TB_BG_PID
	tb_until "the worker to run" worker_running

	rx=$(tb_xnf -j stats d0 | jq -e '.devices[0].workers[0].rx_packets')
	trace_start xsk proto udp dport 7080 count 1 timeout 20
	tb_udp_send "$TB_SRC" $TB_SINK4 7080 1
	trace_wait
	doc=$(pkt 1)
	is "to the worker" "$doc" '.verdict == "xsk" and ((.out_queue // .queue) | tostring) == "0" and .in == "d0"'
	is "the xsk step" "$doc" '[.steps[].nf] == ["xsk"]'
	tb_until "the datagram at the sink" sink_has udp dst port 7080
	tb_expect "the worker read it" \
		"$(tb_xnf -j stats d0 | jq -e '.devices[0].workers[0].rx_packets')" -eq $((rx + 1))
}

# ---- bounds ------------------------------------------------------------------------

# untraced_ping N: N pings forwarded while no trace is armed: none of
# them is traced (xnf_trace_stats unchanged).
untraced_ping()
{
	local t0
	t0=$(trace_stat traced)
	tb_ping_ok "$TB_SRC" $TB_SINK4 "$1"
	tb_expect "records while nothing is armed" "$(trace_stat traced)" -eq "$t0"
}

@test "bounded by count, by time, killed with SIGKILL: each ends by itself and leaves nothing armed" {
	local t0 end pid

	tb_attach_both l3fwd
	tb_routes

	# Count: 3 of 5 echo requests.
	trace_start count icmp type echo-request count 3 timeout 60
	tb_ping_ok "$TB_SRC" $TB_SINK4 5
	trace_wait
	tb_expect "count: packets" "$(npkts)" -eq 3
	tb_expect "count: their numbers" "$(jq -c 'select(.event == "packet") | .packet' "$TRACE_OUT" | tr '\n' ' ')" = "1 2 3 "
	is "count: the end" "$(trace_end)" '.traced == 3 and .lost == 0 and (.why | test("count"))'
	tb_expect "count: disarmed" "$(trace_cfg id)" -eq 0
	untraced_ping 3

	# Time: nothing matches; it ends by itself.
	trace_start time icmp type echo-request count 0 timeout 2
	trace_wait
	is "time: the end" "$(trace_end)" '.traced == 0 and (.why | test("time"))'
	untraced_ping 3
	tb_expect "time: disarmed" "$(trace_cfg id)" -eq 0

	# SIGKILL: the tracer cannot disarm; the datapath does once the
	# deadline has passed (the first packet after it).
	trace_start killed icmp type echo-request count 0 timeout 5
	# The tracer armed it before trace_start returned: its deadline is
	# before end.
	end=$(($(date +%s) + 5))
	pid=$TRACER_PID
	is "status: the live trace" "$(tb_xnf -j status | jq -c .trace)" \
		".id == $(trace_cfg id) and .pid == $pid and .live == true"
	kill -KILL "$TRACER_PID"
	wait "$TRACER_PID" || true
	TRACER_PID=
	# Still armed, as long as the deadline is surely ahead (a packet of
	# the kernel's own after it would disarm it: not checked on a
	# machine so busy that 4 s went by).
	if (($(date +%s) < end - 1)); then
		tb_expect "killed: still armed before its deadline" "$(trace_cfg id)" -ne 0
		is "status: the dead tracer's trace" "$(tb_xnf -j status | jq -c .trace)" \
			".pid == $pid and .live == false"
	fi
	while (($(date +%s) <= end)); do
		sleep 0.2
	done
	sleep 1
	t0=$(trace_stat traced)
	tb_ping_ok "$TB_SRC" $TB_SINK4 3
	tb_expect "killed: records after the deadline" "$(trace_stat traced)" -eq "$t0"
	tb_expect "killed: disarmed by the datapath" "$(trace_cfg id)" -eq 0
	tb_expect "status: no trace" "$(tb_xnf -j status | jq -c .trace)" = null

	# A new trace is taken over from the dead owner and works.
	trace_start again icmp type echo-request count 1 timeout 20
	tb_ping_ok "$TB_SRC" $TB_SINK4 1
	trace_wait
	tb_expect "again: packets" "$(npkts)" -eq 1
}

@test "a trace that matches nothing costs no record" {
	local t0 before after

	tb_attach_both firewall,l3fwd
	tb_routes
	t0=$(trace_stat traced)
	before=$(tb_stats_json)
	trace_start nothing src 203.0.113.99 count 1 timeout 3
	tb_ping_ok "$TB_SRC" $TB_SINK4 10
	tb_udp_send "$TB_SRC" $TB_SINK4 7090 5
	trace_wait
	after=$(tb_stats_json)
	tb_expect "packets traced" "$(npkts)" -eq 0
	is "the end" "$(trace_end)" '.traced == 0 and .lost == 0'
	tb_expect "records" "$(trace_stat traced)" -eq "$t0"
	tb_expect "lost" "$(trace_stat lost)" -eq 0
	tb_expect "d0 redirects" "$(tb_chain_delta "$before" "$after" d0 redirect)" -ge 15
}

@test "a reader that does not read loses records, counted; every packet still forwarded" {
	local before after n=6000 sent txd redir end docs

	tb_attach_both l3fwd
	tb_routes
	trace_start lost proto udp dport 7100 count 0 timeout 120
	kill -STOP "$TRACER_PID"
	before=$(tb_stats_json)
	txd=$(tb_link "$TB_SRC" s0 tx.dropped)
	# More than the ring buffer holds (1 MiB: about 2,000 records).
	tb_src "$GEN" s0 count $n rate 20000 dst $TB_SINK4 dmac $TB_MAC_D0 dport 7100 >/dev/null
	after=$(tb_stats_json)
	sent=$((n - ($(tb_link "$TB_SRC" s0 tx.dropped) - txd)))
	redir=$(tb_chain_delta "$before" "$after" d0 redirect)
	tb_expect "every frame that reached d0 forwarded" "$redir" -eq "$sent"
	tb_expect "d0 drops" "$(tb_chain_delta "$before" "$after" d0 drop)" -eq 0
	tb_expect "lost records (datapath)" "$(trace_stat lost)" -gt 0
	kill -CONT "$TRACER_PID"
	tb_until "the tracer to read what the ring holds" all_read
	kill -INT "$TRACER_PID"
	trace_wait >/dev/null
	end=$(trace_end)
	echo "$end"
	docs=$(npkts)
	is "the end: lost" "$end" '.lost > 0'
	tb_expect "the end: traced + lost" "$(jq '.traced + .lost' <<<"$end")" -eq "$sent"
	tb_expect "documents" "$docs" -eq "$(jq .traced <<<"$end")"
	tb_expect "the datapath's counts" "$(($(trace_stat traced) + $(trace_stat lost)))" -eq "$sent"
	tb_expect "disarmed" "$(trace_cfg id)" -eq 0
}
