#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# worker.bats - the AF_XDP handoff: d0's XDP chain ends in xsk, an `xnf
# worker` in the DUT runs userspace NFs on what it receives and transmits
# on d1 through a socket sharing its UMEM. Replies come back through d1's
# XDP l3fwd chain. Same test bed as traffic.bats (testbed/testbed.bash).
#
# What proves the worker forwarded: its rx/tx counters (xnf -j stats) grow
# by what was sent, the DUT kernel's forwarding counters do not move, and
# what arrives at the sink carries the TTL the worker's l3fwd wrote.
# Workers are started without `timeout` (which would fork, so a kill would
# miss the worker): they bound themselves with `duration`.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=180}"

load ../testbed/testbed

GEN=${GEN:-$(dirname "$XNF")/xnf-gen}
SINK=${SINK:-$(dirname "$XNF")/xnf-sink}

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	tb_setup
	tb_xnf attach d0 chain xsk
	tb_xnf attach d1 chain l3fwd
	tb_routes
}

teardown()
{
	# A worker a test stopped with SIGSTOP would not see tb_teardown's
	# SIGTERM.
	[ -z "$WPID" ] || kill -CONT "$WPID" 2>/dev/null || true
	tb_teardown
}

worker_state()
{
	tb_xnf -j status d0 | jq -r '.workers[0].state // "none"'
}

# worker_settled: d0's worker of queue 0 runs, or its process is gone.
worker_settled()
{
	[ "$(worker_state)" = running ] || ! kill -0 "$WPID" 2>/dev/null
}

# worker_start ARGS...: `xnf worker d0 ARGS` in the DUT, in the background,
# for at most 120 s; returns once its queue 0 runs. Sets WPID.
worker_start()
{
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" worker d0 \
		"$@" duration 120
	WPID=$TB_BG_PID
	tb_until "the worker to start" worker_settled &&
		tb_expect "worker state" "$(worker_state)" = running
}

# w [-r|-c] JQ: a field of d0's worker of queue 0 in `xnf -j stats` (-r
# raw, -c compact).
w()
{
	local raw=
	case $1 in -r | -c) raw=$1 && shift ;; esac
	tb_xnf -j stats d0 | jq -e $raw ".devices[0].workers[0] | $1"
}

# d0_grew BEFORE JQ N: d0's counter JQ grew by at least N since BEFORE
# (an `xnf -j stats` output).
d0_grew()
{
	[ "$(tb_delta "$1" "$(tb_stats_json d0)" d0 "$2")" -ge "$3" ]
}

# w_reached JQ N: the worker's counter JQ is at least N.
w_reached()
{
	[ "$(w "$1")" -ge "$2" ]
}

# w_dropped_one PORT: one datagram to PORT, once the worker read it: did
# the firewall drop it?
w_dropped_one()
{
	local rx deny
	rx=$(w .rx_packets) && deny=$(w .nf_drop.fw_deny) || return 1
	tb_udp_send "$TB_SRC" $TB_SINK4 "$1" 1 &&
		tb_until "the worker to read a datagram to $1" w_reached .rx_packets $((rx + 1)) &&
		[ "$(w .nf_drop.fw_deny)" -gt "$deny" ]
}

@test "worker l3fwd forwards ping (v4, v6) and UDP to the sink, TTL decremented, kernel not involved" {
	local k0 k1 got port=7100

	worker_start nf l3fwd egress d1
	k0=$(tb_kfwd)
	tb_capture "$TB_SINK" k0 4 "$TB_TMP/k0.pcap" icmp and src $TB_SRC4
	tb_ping_ok "$TB_SRC" $TB_SINK4 10
	wait "$TB_CAPTURE_PID" || true
	# ping sends TTL 64: one router hop, the worker's.
	got=$(tcpdump -r "$TB_TMP/k0.pcap" -n -v 2>/dev/null | grep -c 'ttl 63,' || true)
	tb_expect "echo requests with TTL 63 at the sink" "$got" -eq 4
	tb_ping_ok "$TB_SRC" $TB_SINK6 10
	# The echo requests and nothing else (ARP and ND stay in the kernel).
	tb_expect "worker received the pings" "$(w .rx_packets)" -eq 20
	tb_expect "worker transmitted them" "$(w .tx_packets)" -eq 20
	# Pings come far apart: the worker slept before each and its first
	# read after a sleep found it (the batching model's timing counters).
	tb_expect "worker slept" "$(w .sleeps)" -ge 1
	tb_expect "reads after a sleep" "$(w .wake_reads)" -ge 1
	tb_expect "at most one per sleep" "$(w .wake_reads)" -le "$(w .sleeps)"
	tb_expect "packets in them" "$(w .wake_packets)" -ge "$(w .wake_reads)"
	tb_expect "sleeping is idle time" "$(w .sleep_ns)" -le "$(w .idle_ns)"
	tb_expect "sleeping took time" "$(w .sleep_ns)" -gt 0
	# The transmit part of each batch's time: some, never all of it.
	tb_expect "batches with transmit time within their time" \
		"$(w '[.batch_hist[] | select(.size > 0) |
			select(.tx_ns > 0 and .tx_ns <= .ns)] | length')" -eq \
		"$(w '[.batch_hist[] | select(.size > 0)] | length')"
	got=$(tb_udp_echo "$TB_SRC" 4 $TB_SINK4 $port 5)
	tb_expect "UDP lines echoed" "$got" -eq 5
	k1=$(tb_kfwd)
	tb_expect "kernel forwarded nothing" "$k1" = "$k0"
	tb_expect "worker received UDP" "$(w .rx_packets)" -gt 20
	tb_expect "rx = tx" "$(w .tx_packets)" -eq "$(w .rx_packets)"
	tb_expect "mode" "$(w -r .mode)" = copy
	tb_expect "status shows the mode" \
		"$(tb_xnf -j status d0 | jq -r '.workers[0].mode')" = copy
	# The chain handed over exactly what the worker read.
	tb_expect "chain redirects = worker rx" \
		"$(tb_chain "$(tb_stats_json d0)" d0 redirect)" -eq "$(w .rx_packets)"
}

# host_entry DST: xnf holds the route sync's host entry DST.
host_entry()
{
	tb_xnf -j route show | jq -e --arg d "$1" \
		'any(.routes[]; .dst == $d and .host and .path == "xdp")' >/dev/null
}

# Without host entries the sink's connected subnet is a kernel route, and
# a worker, which cannot hand a frame to the kernel, drops it (to_kernel).
@test "with route sync, hosts of the connected subnets go through the worker, not to the kernel" {
	local sync k0
	tb_xnf route flush
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" timeout 120 "$XNF" \
		route sync >"$TB_TMP/sync.out" 2>&1
	sync=$TB_BG_PID
	tb_until "the sink's host entry" host_entry $TB_SINK4/32
	tb_until "the source's host entry" host_entry $TB_SRC4/32
	worker_start nf l3fwd egress d1
	k0=$(tb_kfwd)
	tb_ping_ok "$TB_SRC" $TB_SINK4 10
	tb_ping_ok "$TB_SRC" $TB_SINK6 10
	tb_expect "worker transmitted them" "$(w .tx_packets)" -eq 20
	tb_expect "none for the kernel" "$(w .drop.to_kernel)" -eq 0
	tb_expect "kernel forwarded nothing" "$(tb_kfwd)" = "$k0"
	kill -TERM "$sync"
	wait "$sync" || true
	tb_xnf route sync flush >/dev/null
}

# On an attachment with fib the worker's l3fwd forwards by the kernel's
# FIB (the xsk NF asks it and hands the answer over with the frame): a
# prefix only the kernel has a route for goes through the worker, and a
# route only xnf has is not used.
# idle_gt FIELD N: the worker's idle_run.FIELD is above N.
idle_gt()
{
	[ "$(w ".idle_run.$1")" -gt "$2" ]
}

# The reads since the worker's last packet (idle_run): the batching model
# ends a measurement there, so they must be exactly the run after the last
# packet, and the next packet must end it.
@test "worker idle_run holds the empty reads since its last packet and a packet ends it" {
	local a b

	worker_start nf l3fwd egress d1
	tb_ping_ok "$TB_SRC" $TB_SINK4 3
	tb_until "the worker to sleep after its last packet" idle_gt sleeps 1
	a=$(w .)
	# 64 empty reads, then one per sleep (the one in its sleep counted
	# before the sleep is).
	tb_expect "reads before the first sleep" \
		"$(jq '.idle_run.reads - .idle_run.sleeps' <<<"$a")" -ge 64
	tb_expect "and not more" "$(jq '.idle_run.reads - .idle_run.sleeps' <<<"$a")" -le 65
	tb_expect "within the empty reads" "$(jq '.idle_run.reads <= .empty_polls and
		.idle_run.reads <= (.batch_hist[] | select(.size == 0) | .batches) and
		.idle_run.ns <= (.batch_hist[] | select(.size == 0) | .ns) and
		.idle_run.sleeps <= .sleeps and .idle_run.sleep_ns <= .sleep_ns and
		.idle_run.sleep_ns > 0' <<<"$a")" = true
	tb_udp_send "$TB_SRC" $TB_SINK4 7200 1
	tb_until "the worker to read the datagram" w_reached .rx_packets \
		$(($(jq .rx_packets <<<"$a") + 1))
	b=$(w .)
	# Begun at the datagram: none of its reads or sleeps is from before.
	tb_expect "reads since the datagram" "$(jq -n --argjson a "$a" --argjson b "$b" \
		'$b.idle_run.reads <= $b.empty_polls - $a.empty_polls and
		 $b.idle_run.sleeps <= $b.sleeps - $a.sleeps')" = true
}

@test "worker l3fwd on an attachment with fib forwards by the kernel's FIB" {
	local k0 got

	tb_xnf detach d0
	tb_xnf attach d0 chain xsk fib
	ip -n "$TB_SINK" addr add 203.0.113.9/32 dev lo
	ip -n "$TB_DUT" route add 203.0.113.0/24 via $TB_SINK4
	# xnf's own table sends 198.51.100.0/24 elsewhere; fib mode does
	# not read it.
	tb_xnf route replace 198.51.100.0/24 blackhole
	worker_start nf l3fwd egress d1
	k0=$(tb_kfwd)
	tb_capture "$TB_SINK" k0 4 "$TB_TMP/k0.pcap" icmp and src $TB_SRC4
	tb_ping_ok "$TB_SRC" $TB_SINK4 4
	wait "$TB_CAPTURE_PID" || true
	got=$(tcpdump -r "$TB_TMP/k0.pcap" -n -v 2>/dev/null | grep -c 'ttl 63,' || true)
	tb_expect "echo requests with TTL 63 at the sink" "$got" -eq 4
	tb_ping_ok "$TB_SRC" $TB_SINK6 4
	tb_capture "$TB_SINK" k0 5 "$TB_TMP/k1.pcap" udp and dst 203.0.113.9
	tb_udp_send "$TB_SRC" 203.0.113.9 7200 5
	wait "$TB_CAPTURE_PID" || true
	got=$(tcpdump -r "$TB_TMP/k1.pcap" -n 2>/dev/null | grep -c '203.0.113.9.7200' || true)
	tb_expect "datagrams along the kernel's route at the sink" "$got" -eq 5
	tb_expect "worker received them all" "$(w .rx_packets)" -eq 13
	tb_expect "and sent them all" "$(w .tx_packets)" -eq 13
	tb_expect "kernel forwarded nothing" "$(tb_kfwd)" = "$k0"
}

# Datagrams to a denied port are not waited for: the worker reads each one
# (rx_packets) and counts its drop (nf_drop.fw_deny); once it read them
# all, none can still come back.
@test "worker firewall,l3fwd drops what the rules say and forwards the rest" {
	local got deny rx

	tb_xnf fw add prio 10 drop proto udp dport 7201
	worker_start nf firewall,l3fwd egress d1
	tb_udp_echo_start "$TB_SRC" 4 $TB_SINK4 7201 5 "$TB_TMP/echo.7201"
	tb_until "the worker to read 5 datagrams" w_reached .rx_packets 5
	tb_expect "read: the 5 datagrams" "$(w .rx_packets)" -eq 5
	tb_expect "fw_deny drops" "$(w '.nf_drop.fw_deny')" -eq 5
	tb_expect "counted as NF drops" "$(w '.drop.nf')" -eq 5
	tb_expect "none forwarded" "$(w .tx_packets)" -eq 0
	tb_udp_echo_stop
	tb_expect "denied port: nothing echoed" "$(tb_lines "$TB_TMP/echo.7201")" -eq 0
	got=$(tb_udp_echo "$TB_SRC" 4 $TB_SINK4 7202 5)
	tb_expect "other port: all echoed" "$got" -eq 5
	tb_expect "fw_deny drops" "$(w '.nf_drop.fw_deny')" -eq 5
	tb_expect "rx = tx + fw_deny" "$(w .rx_packets)" -eq $(($(w .tx_packets) + 5))

	# A rule added while the worker runs is picked up at its next table
	# refresh (tables_gen): until then datagrams to 7202 still pass. Probe
	# with single datagrams until one is dropped.
	tb_xnf fw add prio 20 drop proto udp dport 7202
	tb_until "the worker to apply the new rule" w_dropped_one 7202
	deny=$(w .nf_drop.fw_deny)
	rx=$(w .rx_packets)
	tb_udp_echo_start "$TB_SRC" 4 $TB_SINK4 7202 5 "$TB_TMP/echo.7202"
	tb_until "the worker to read 5 more datagrams" w_reached .rx_packets $((rx + 5))
	tb_expect "new rule: every one dropped" "$(w .nf_drop.fw_deny)" -eq $((deny + 5))
	tb_udp_echo_stop
	tb_expect "new rule: nothing echoed" "$(tb_lines "$TB_TMP/echo.7202")" -eq 0
}

@test "killing the worker lets the fallback take over; a restart resumes forwarding" {
	local k0 k1 before after

	worker_start nf l3fwd egress d1
	tb_ping_ok "$TB_SRC" $TB_SINK4 5
	kill -9 "$WPID"
	wait "$WPID" 2>/dev/null || true
	tb_expect "status" "$(tb_xnf -j status d0 | jq -r '.workers[0].state')" = dead

	# Fallback pass: the DUT's kernel forwards.
	tb_xnf config set xsk_fallback pass
	k0=$(tb_kfwd)
	before=$(tb_stats_json d0)
	tb_ping_ok "$TB_SRC" $TB_SINK4 5
	after=$(tb_stats_json d0)
	k1=$(tb_kfwd)
	tb_expect "kernel forwarded" "$k1" != "$k0"
	tb_expect "passed for lack of a socket" \
		"$(tb_delta "$before" "$after" d0 .pass_reasons.xsk_no_socket)" -ge 5

	# Fallback drop: nothing gets through, every drop counted.
	tb_xnf config set xsk_fallback drop
	before=$after
	tb_expect "ping with fallback drop" "$(tb_ping_unanswered "$TB_SRC" $TB_SINK4 3)" = "3 0"
	tb_until "the 3 echo requests counted dropped" \
		d0_grew "$before" .drop_reasons.xsk_no_socket 3

	# Right after the old socket is gone the queue may still be busy for
	# a moment: the worker retries the bind.
	worker_start nf l3fwd egress d1
	k0=$(tb_kfwd)
	tb_ping_ok "$TB_SRC" $TB_SINK4 5
	tb_expect "kernel not involved again" "$(tb_kfwd)" = "$k0"
	tb_expect "new worker forwarded" "$(w .tx_packets)" -ge 5
}

@test "worker refusals: zero-copy on veth, a second worker on a queue, a chain without xsk" {
	run -1 tb_xnf worker d0 nf l3fwd zerocopy on duration 1
	worker_start nf macswap
	run -1 tb_xnf worker d0 nf macswap duration 1
	run -1 tb_xnf worker d1 nf l3fwd duration 1
	run -1 tb_xnf worker d0 nf nosuchnf duration 1
	# The running worker was not disturbed.
	tb_expect "still running" "$(w -r .state)" = running
}

# An NF that refuses its options does so in the worker threads, while the
# main thread waits: the refusal is still the command's one error, and
# under -j one xnf/error/1 document (beside the worker's report) with
# nothing on stderr.
@test "a worker whose NF refuses to start fails with one error, under -j one document" {
	run --separate-stderr tb_xnf -j worker d0 nf ratelimit args rate=0 duration 1
	tb_expect "-j: exit" "$status" -eq 1
	tb_expect "-j: one error document with a message" \
		"$(jq -sc 'map(select(.schema == "xnf/error/1") | .error | length > 0)' <<<"$output")" = \
		'[true]'
	tb_expect "-j: nothing on stderr" "${#stderr}" -eq 0
	run --separate-stderr tb_xnf worker d0 nf ratelimit args rate=0 duration 1
	tb_expect "exit" "$status" -eq 1
	tb_expect "stderr: one line" "${#stderr_lines[@]}" -eq 1
	tb_expect "stderr: an error" "$(grep -c '^Error: ' <<<"$stderr")" -eq 1
	tb_expect "no worker left" "$(worker_state)" != running
}

@test "stats reset zeroes a live worker's counters; bpftool shows them by name" {
	local v

	worker_start nf l3fwd egress d1
	tb_ping_ok "$TB_SRC" $TB_SINK4 5
	tb_expect "counted" "$(w .rx_packets)" -ge 5
	tb_xnf stats reset
	tb_expect "rx after reset" "$(w .rx_packets)" -eq 0
	tb_expect "tx after reset" "$(w .tx_packets)" -eq 0
	tb_expect "frames still accounted" \
		"$(w '.frames_in | .free + .fill + .nf + .tx')" -eq "$(w .frames)"
	# Named fields, and enumerators by name (enum types in BTF).
	v=$(bpftool -j map dump pinned "$XNF_PIN_ROOT/dev/d0/xnf_workers" |
		jq -c '.[0].formatted.value')
	tb_expect "bpftool: named fields" "$(jq 'has("rx_packets")' <<<"$v")" = true
	tb_expect "bpftool: state" "$(jq -r .state <<<"$v")" = XNF_W_RUNNING
	tb_expect "bpftool: mode, as xnf stats has it" "$(jq -r .mode <<<"$v")" = \
		"XNF_XSK_MODE_$(w -r .mode | tr '[:lower:]' '[:upper:]')"
}

@test "stats reset waits for a worker that runs late (stopped for 2 s) and then succeeds" {
	local rpid rc=0

	worker_start nf l3fwd egress d1
	tb_ping_ok "$TB_SRC" $TB_SINK4 5
	kill -STOP "$WPID"
	tb_xnf stats reset &
	rpid=$!
	sleep 2
	kill -CONT "$WPID"
	wait "$rpid" || rc=$?
	tb_expect "reset succeeded" "$rc" -eq 0
	tb_expect "rx after reset" "$(w .rx_packets)" -eq 0
}

# d0_accounted SENT: every frame the generator sent reached d0's chain or
# was dropped by the veth on its way (s0's tx_dropped).
d0_accounted()
{
	local st
	st=$(tb_stats_json d0) &&
		(($(tb_chain "$st" d0 in) - C0 + $(tb_link "$TB_SRC" s0 tx.dropped) - S0 >= $1))
}

# worker_idle: every frame the chain handed to the socket was read by the
# worker or counted dropped by the kernel (the socket's XDP_STATISTICS,
# which the worker copies every 0.1 s), and the worker holds none (none in
# its NFs, none sent but not yet completed).
worker_idle()
{
	local st out
	st=$(tb_stats_json d0) && out=$(jq -c '.devices[0].workers[0]' <<<"$st") &&
		(($(tb_chain "$st" d0 redirect) - R0 <= \
		  $(jq '.rx_packets + .kernel.rx_dropped + .kernel.rx_ring_full' <<<"$out"))) &&
		[ "$(jq '.frames_in.nf + .frames_in.tx' <<<"$out")" -eq 0 ]
}

# k0_accounted N: N frames reached k0 (rx_packets: its program ran on
# each) or were dropped by d1 on their way (d1's tx_dropped).
k0_accounted()
{
	(($(tb_link "$TB_SINK" k0 rx.packets) - K0 + $(tb_link "$TB_DUT" d1 tx.dropped) - D1 >= $1))
}

# accounted_start [ARGS...]: an l3fwd worker (with ARGS) from d0 to d1 and the sink on k0, and
# the counters the accounting starts from: C0 (d0's chain in), R0 (its
# redirects), P0 (its xsk_no_socket passes), S0 and D1 (s0's and d1's
# tx_dropped), K0 (k0's rx_packets); the sink's pid in SPID. IPv6 is off
# on s0 and d1, so that no frame of the hosts' own (MLD) shares those
# rings with the generator's.
accounted_start()
{
	local st

	tb_src sysctl -q -w net.ipv6.conf.s0.disable_ipv6=1
	tb_dut sysctl -q -w net.ipv6.conf.d1.disable_ipv6=1
	worker_start nf l3fwd egress d1 "$@"
	tb_bg "$TB_SINK" "$SINK" k0 duration 120 ready "$TB_TMP/sink.ready" -j \
		>"$TB_TMP/sink.json"
	SPID=$TB_BG_PID
	tb_until "xnf-sink to attach" test -e "$TB_TMP/sink.ready"
	st=$(tb_stats_json d0)
	C0=$(tb_chain "$st" d0 in)
	R0=$(tb_chain "$st" d0 redirect)
	P0=$(tb_stat "$st" d0 .pass_reasons.xsk_no_socket)
	S0=$(tb_link "$TB_SRC" s0 tx.dropped)
	D1=$(tb_link "$TB_DUT" d1 tx.dropped)
	K0=$(tb_link "$TB_SINK" k0 rx.packets)
}

# Exact counts at every drop point between the generator and the sink
# (docs/testing.md): the two veths count what their ring toward the peer
# could not take, the AF_XDP socket what its rings could not take, the
# worker its own drops. IPv6 is off on s0 and d1, so that no frame of
# the hosts' own (MLD) shares those rings with the generator's.
@test "1,000,000 packets through a worker: every frame accounted during and after the run" {
	[ -x "$GEN" ] && [ -x "$SINK" ] || skip "xnf-gen / xnf-sink not built"
	local n=1000000 i sum frames rx tx drops st out sent snk gpid
	local C0 R0 S0 D1 K0 P0 SPID

	accounted_start
	tb_bg "$TB_SRC" "$GEN" s0 count $n duration 60 size 64 flows 16 \
		src $TB_SRC4 dst $TB_SINK4 smac $TB_MAC_S0 dmac $TB_MAC_D0 -j \
		>"$TB_TMP/gen.json"
	gpid=$TB_BG_PID
	# While it runs: the frames sum to the UMEM, at every look.
	frames=$(w .frames)
	for ((i = 0; i < 10; i++)); do
		sum=$(w '.frames_in | .free + .fill + .nf + .tx')
		tb_expect "frames during the run ($i)" "$sum" -eq "$frames"
		sleep 0.2
	done
	wait "$gpid"
	sent=$(jq .sent "$TB_TMP/gen.json")
	tb_expect "generator sent" "$sent" -eq $n
	tb_until "the frames sent to reach d0's chain or be counted dropped" d0_accounted "$sent"
	tb_until "the worker to read or the kernel to drop all it was handed" worker_idle
	kill "$WPID"
	wait "$WPID" || true
	out=$(tb_xnf -j stats d0 | jq -c '.devices[0].workers[0]')
	tb_expect "worker stopped cleanly" "$(jq -r .state <<<"$out")" = stopped
	rx=$(jq .rx_packets <<<"$out")
	tx=$(jq .tx_packets <<<"$out")
	drops=$(jq '.drop | add' <<<"$out")
	tb_expect "rx = tx + drops" "$rx" -eq $((tx + drops))
	tb_expect "frames at the end" "$(jq '.frames_in | .free + .fill + .nf + .tx' <<<"$out")" -eq "$frames"
	tb_expect "nothing left in the NF" "$(jq '.frames_in.nf' <<<"$out")" -eq 0
	tb_expect "nothing left in TX" "$(jq '.frames_in.tx' <<<"$out")" -eq 0
	tb_expect "the worker forwarded" "$tx" -gt 0

	st=$(tb_stats_json d0)
	# s0 -> d0: a frame reached the chain, or s0's ring toward d0 was full.
	tb_expect "sent = reached d0's chain + dropped by s0" "$sent" -eq \
		$(($(tb_chain "$st" d0 in) - C0 + $(tb_link "$TB_SRC" s0 tx.dropped) - S0))
	# The chain handed every one to the socket (ARP and ND would stay in
	# the kernel; there are none).
	tb_expect "chain handed over all it saw" "$(($(tb_chain "$st" d0 redirect) - R0))" -eq \
		$(($(tb_chain "$st" d0 in) - C0))
	# Handed to the socket: read by the worker, or dropped by the kernel
	# for a full RX ring or an empty fill ring (a copy-mode worker sharing
	# two vCPUs with the generator loses some; they are counted).
	tb_expect "handed = read + kernel drops" "$(($(tb_chain "$st" d0 redirect) - R0))" -eq \
		"$(jq '.rx_packets + .kernel.rx_dropped + .kernel.rx_ring_full' <<<"$out")"
	# d1 -> k0: what the worker sent reached k0 (where the sink counts it)
	# or was dropped for a full ring toward k0 (d1's tx_dropped).
	tb_until "the frames the worker sent to reach k0 or be counted dropped" k0_accounted "$tx"
	kill -INT "$SPID"
	wait "$SPID" || true
	snk=$(tail -n 1 "$TB_TMP/sink.json")
	echo "sent $sent: dropped by s0 $(($(tb_link "$TB_SRC" s0 tx.dropped) - S0))," \
		"handed to the socket $(($(tb_chain "$st" d0 redirect) - R0)), read $rx" \
		"(kernel drops $(jq '.kernel.rx_dropped + .kernel.rx_ring_full' <<<"$out")," \
		"worker drops $drops), sent by the worker $tx: at the sink" \
		"$(jq .packets <<<"$snk"), dropped by d1 $(($(tb_link "$TB_DUT" d1 tx.dropped) - D1))" >&2
	tb_expect "the sink counted what reached k0" "$(jq .packets <<<"$snk")" -eq \
		$(($(tb_link "$TB_SINK" k0 rx.packets) - K0))
	tb_expect "worker tx = at the sink + dropped by d1" "$tx" -eq \
		$(($(jq .packets <<<"$snk") + $(tb_link "$TB_DUT" d1 tx.dropped) - D1))
	tb_expect "the sink saw no duplicate" "$(jq .duplicates <<<"$snk")" -eq 0
}

@test "a worker stopped under traffic reads every frame it was handed; the fallback forwards the rest" {
	[ -x "$GEN" ] && [ -x "$SINK" ] || skip "xnf-gen / xnf-sink not built"
	local n=5000 st out sent snk gpid in handed fallback wtx wdrops kdrops
	local C0 R0 S0 D1 K0 P0 SPID

	accounted_start
	# Paced, 1,000 frames a second: frames keep arriving while the worker
	# stops, and, on a quiet machine, none overflows a ring (on a busy one
	# the rings count what they drop).
	tb_bg "$TB_SRC" "$GEN" s0 count $n rate 1000 duration 60 size 64 flows 16 \
		src $TB_SRC4 dst $TB_SINK4 smac $TB_MAC_S0 dmac $TB_MAC_D0 -j \
		>"$TB_TMP/gen.json"
	gpid=$TB_BG_PID
	tb_until "the worker to read frames" w '.rx_packets >= 100'
	kill -TERM "$WPID"
	wait "$WPID" || true
	wait "$gpid"
	sent=$(jq .sent "$TB_TMP/gen.json")
	tb_expect "generator sent" "$sent" -eq $n
	tb_until "the frames sent to reach d0's chain or be counted dropped" d0_accounted "$sent"
	st=$(tb_stats_json d0)
	out=$(jq -c '.devices[0].workers[0]' <<<"$st")
	tb_expect "worker stopped cleanly" "$(jq -r .state <<<"$out")" = stopped
	in=$(($(tb_chain "$st" d0 in) - C0))
	handed=$(($(tb_chain "$st" d0 redirect) - R0))
	fallback=$(($(tb_stat "$st" d0 .pass_reasons.xsk_no_socket) - P0))
	tb_expect "sent = reached d0's chain + dropped by s0" "$sent" -eq \
		$((in + $(tb_link "$TB_SRC" s0 tx.dropped) - S0))
	# Before the stop the chain hands frames to the socket, after it to
	# the kernel (the fallback); nothing else happens to them.
	tb_expect "reached the chain = handed + fallback" "$in" -eq $((handed + fallback))
	tb_expect "the worker was handed frames" "$handed" -gt 0
	# Every frame handed was read (or counted dropped by the kernel for a
	# full ring): none was left in the RX ring when the socket closed.
	kdrops=$(jq '.kernel.rx_dropped + .kernel.rx_ring_full' <<<"$out")
	tb_expect "handed = read + kernel drops" "$handed" -eq \
		$(($(jq .rx_packets <<<"$out") + kdrops))
	wtx=$(jq .tx_packets <<<"$out")
	wdrops=$(jq '.drop | add' <<<"$out")
	tb_expect "read = sent on + the worker's drops" "$(jq .rx_packets <<<"$out")" -eq $((wtx + wdrops))
	# d1 -> k0: what the worker sent and what the kernel forwarded reached
	# k0 or was dropped by d1.
	tb_until "the forwarded frames to reach k0 or be counted dropped" \
		k0_accounted $((wtx + fallback))
	kill -INT "$SPID"
	wait "$SPID" || true
	snk=$(tail -n 1 "$TB_TMP/sink.json")
	tb_expect "the sink counted what reached k0" "$(jq .packets <<<"$snk")" -eq \
		$(($(tb_link "$TB_SINK" k0 rx.packets) - K0))
	tb_expect "sent = at the sink + every counted drop" "$sent" -eq \
		$(($(jq .packets <<<"$snk") + $(tb_link "$TB_SRC" s0 tx.dropped) - S0 + kdrops + wdrops + $(tb_link "$TB_DUT" d1 tx.dropped) - D1))
}

# napi: d0's napi_defer_hard_irqs and gro_flush_timeout, as "D F", read
# through the sysfs `ip netns exec` mounts for the DUT.
napi()
{
	echo "$(tb_dut cat /sys/class/net/d0/napi_defer_hard_irqs)" \
		"$(tb_dut cat /sys/class/net/d0/gro_flush_timeout)"
}

# napi_set D F: d0's settings before a test's workers, not the defaults, so
# that a restore is told apart from a reset.
napi_set()
{
	tb_dut sh -c "echo $1 >/sys/class/net/d0/napi_defer_hard_irqs &&
		echo $2 >/sys/class/net/d0/gro_flush_timeout"
}

@test "a busy-poll worker forwards 20,000 frames, all accounted; d0's NAPI settings are set while it runs and restored after" {
	[ -x "$GEN" ] && [ -x "$SINK" ] || skip "xnf-gen / xnf-sink not built"
	local n=20000 st out sent snk rx tx wdrops kdrops bp
	local C0 R0 S0 D1 K0 P0 SPID

	napi_set 1 7000
	accounted_start busy-poll usecs 30 budget 32 defer 3 flush-timeout 150000
	tb_expect "d0's NAPI settings while it runs" "$(napi)" = "3 150000"
	# The socket options as the kernel reads them back, the device's
	# settings and those it had, in xnf -j stats and xnf -j status.
	bp=$(w -c .busy_poll_settings)
	tb_expect "prefer" "$(jq .prefer <<<"$bp")" = true
	tb_expect "usecs" "$(jq .usecs <<<"$bp")" -eq 30
	tb_expect "budget" "$(jq .budget <<<"$bp")" -eq 32
	tb_expect "defer" "$(jq .napi_defer_hard_irqs <<<"$bp")" -eq 3
	tb_expect "flush" "$(jq .gro_flush_timeout <<<"$bp")" -eq 150000
	tb_expect "previous" "$(jq -c '.previous | [.napi_defer_hard_irqs, .gro_flush_timeout]' <<<"$bp")" = "[1,7000]"
	tb_expect "status shows the same" \
		"$(tb_xnf -j status d0 | jq -c '.workers[0].busy_poll_settings')" = "$bp"

	tb_bg "$TB_SRC" "$GEN" s0 count $n duration 60 size 64 flows 16 \
		src $TB_SRC4 dst $TB_SINK4 smac $TB_MAC_S0 dmac $TB_MAC_D0 -j \
		>"$TB_TMP/gen.json"
	wait "$TB_BG_PID"
	sent=$(jq .sent "$TB_TMP/gen.json")
	tb_expect "generator sent" "$sent" -eq $n
	tb_until "the frames sent to reach d0's chain or be counted dropped" d0_accounted "$sent"
	tb_until "the worker to read or the kernel to drop all it was handed" worker_idle
	kill "$WPID"
	wait "$WPID" || true
	tb_expect "d0's NAPI settings restored" "$(napi)" = "1 7000"
	st=$(tb_stats_json d0)
	out=$(jq -c '.devices[0].workers[0]' <<<"$st")
	tb_expect "worker stopped cleanly" "$(jq -r .state <<<"$out")" = stopped
	tb_expect "no record left" "$(jq '.busy_poll_settings.previous' <<<"$out")" = null
	rx=$(jq .rx_packets <<<"$out")
	tx=$(jq .tx_packets <<<"$out")
	wdrops=$(jq '.drop | add' <<<"$out")
	kdrops=$(jq '.kernel.rx_dropped + .kernel.rx_ring_full' <<<"$out")
	tb_expect "the worker forwarded" "$tx" -gt 0
	# It polls the NAPI when the ring is empty instead of sleeping.
	tb_expect "never slept in poll()" "$(jq .sleeps <<<"$out")" -eq 0
	tb_expect "sent = reached d0's chain + dropped by s0" "$sent" -eq \
		$(($(tb_chain "$st" d0 in) - C0 + $(tb_link "$TB_SRC" s0 tx.dropped) - S0))
	tb_expect "chain handed over all it saw" "$(($(tb_chain "$st" d0 redirect) - R0))" -eq \
		$(($(tb_chain "$st" d0 in) - C0))
	tb_expect "handed = read + kernel drops" "$(($(tb_chain "$st" d0 redirect) - R0))" -eq \
		$((rx + kdrops))
	tb_expect "read = sent on + the worker's drops" "$rx" -eq $((tx + wdrops))
	tb_until "the frames the worker sent to reach k0 or be counted dropped" k0_accounted "$tx"
	kill -INT "$SPID"
	wait "$SPID" || true
	snk=$(tail -n 1 "$TB_TMP/sink.json")
	tb_expect "the sink counted what reached k0" "$(jq .packets <<<"$snk")" -eq \
		$(($(tb_link "$TB_SINK" k0 rx.packets) - K0))
	tb_expect "sent = at the sink + every counted drop" "$sent" -eq \
		$(($(jq .packets <<<"$snk") + $(tb_link "$TB_SRC" s0 tx.dropped) - S0 + kdrops + wdrops + $(tb_link "$TB_DUT" d1 tx.dropped) - D1))
}

@test "a killed busy-poll worker's NAPI settings are restored by the next worker's start or by detach; a worker without busy-poll reports none" {
	napi_set 1 7000
	worker_start nf l3fwd egress d1 busy-poll
	tb_expect "the defaults while it runs" "$(napi)" = "2 200000"
	tb_ping_ok "$TB_SRC" $TB_SINK4 3
	kill -9 "$WPID"
	wait "$WPID" 2>/dev/null || true
	tb_expect "status" "$(worker_state)" = dead
	# Nothing ran to restore them; the record is in the pinned entry.
	tb_expect "left as the killed worker set them" "$(napi)" = "2 200000"
	tb_expect "the record" \
		"$(tb_xnf -j status d0 | jq -c '.workers[0].busy_poll_settings.previous')" = \
		'{"napi_defer_hard_irqs":1,"gro_flush_timeout":7000}'
	worker_start nf l3fwd egress d1
	tb_expect "restored by the next start" "$(napi)" = "1 7000"
	tb_expect "no busy-poll settings" "$(w -c .busy_poll_settings)" = null
	tb_ping_ok "$TB_SRC" $TB_SINK4 3
	tb_expect "it forwards" "$(w .tx_packets)" -ge 3
	kill "$WPID"
	wait "$WPID" || true
	tb_expect "still restored after its stop" "$(napi)" = "1 7000"
	# The options need busy-poll before them.
	run -1 tb_xnf worker d0 nf l3fwd defer 3 duration 1
	run -1 tb_xnf worker d0 nf l3fwd busy-poll defer 0 duration 1
	tb_expect "refusals changed nothing" "$(napi)" = "1 7000"
	# Detach removes the pinned record with the map: it restores first.
	worker_start nf l3fwd egress d1 busy-poll defer 4
	tb_expect "set again" "$(napi)" = "4 200000"
	kill -9 "$WPID"
	wait "$WPID" 2>/dev/null || true
	tb_xnf detach d0
	tb_expect "restored by detach" "$(napi)" = "1 7000"
}

@test "detach refuses while a worker serves the device, and works once it stopped" {
	worker_start nf macswap
	run -1 tb_xnf detach d0
	tb_expect "still attached" "$(tb_xnf -j status d0 | jq -r .attached)" = true
	tb_expect "worker undisturbed" "$(w -r .state)" = running
	kill "$WPID"
	wait "$WPID" || true
	tb_xnf detach d0
	tb_expect "xdp gone" "$(tb_xdp_prog_id "$TB_DUT" d0)" = none
}

@test "workers follow the placement attach recorded; one moved elsewhere is reported as drift" {
	tb_xnf detach d0
	tb_xnf attach d0 chain xsk cores 1
	worker_start nf l3fwd egress d1
	tb_expect "worker on the planned core" "$(w .cpu)" -eq \
		"$(tb_xnf -j plan d0 | jq '.applied.queues[0].worker_cpu')"
	tb_expect "no drift" "$(tb_xnf -j plan d0 | jq '.applied.drift | length')" -eq 0
	kill "$WPID"
	wait "$WPID" || true
	worker_start nf l3fwd egress d1 cores 0
	tb_expect "worker where it was told" "$(w .cpu)" -eq 0
	tb_expect "drift: the worker" \
		"$(tb_xnf -j plan d0 | jq -c '[.applied.drift[] | [.kind, .queue, .want]]')" = '[["worker",0,1]]'
}
