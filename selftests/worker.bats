#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# worker.bats - the AF_XDP handoff: d0's XDP chain ends in xsk, an `xnf
# worker` in the DUT runs userspace NFs on what it receives and transmits
# on d1 through a socket sharing its UMEM. Replies come back through d1's
# XDP l3fwd chain. Same test bed as traffic.bats (selftests/lib/testbed.bash).
#
# What proves the worker forwarded: its rx/tx counters (xnf -j stats) grow
# by what was sent, the DUT kernel's forwarding counters do not move, and
# what arrives at the sink carries the TTL the worker's l3fwd wrote.
# Workers are started without `timeout` (which would fork, so a kill would
# miss the worker): they bound themselves with `duration`.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=180}"

load lib/testbed

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
	tb_teardown
}

# worker_start ARGS...: `xnf worker d0 ARGS` in the DUT, in the background,
# for at most 120 s; returns once its queue 0 runs. Sets WPID.
worker_start()
{
	local i state
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" worker d0 \
		"$@" duration 120
	WPID=$TB_BG_PID
	for ((i = 0; i < 100; i++)); do
		state=$(tb_xnf -j status d0 | jq -r '.workers[0].state // "none"')
		[ "$state" = running ] && return 0
		kill -0 "$WPID" 2>/dev/null || break
		sleep 0.05
	done
	echo "worker did not start (state $state)" >&2
	return 1
}

# w [-r] JQ: a field of d0's worker of queue 0 in `xnf -j stats`.
w()
{
	local raw=
	[ "$1" = -r ] && { raw=-r; shift; }
	tb_xnf -j stats d0 | jq -e $raw ".devices[0].workers[0] | $1"
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

@test "worker firewall,l3fwd drops what the rules say and forwards the rest" {
	local got

	tb_xnf fw add prio 10 drop proto udp dport 7201
	worker_start nf firewall,l3fwd egress d1
	got=$(tb_udp_echo "$TB_SRC" 4 $TB_SINK4 7201 5)
	tb_expect "denied port: nothing echoed" "$got" -eq 0
	got=$(tb_udp_echo "$TB_SRC" 4 $TB_SINK4 7202 5)
	tb_expect "other port: all echoed" "$got" -eq 5
	tb_expect "fw_deny drops" "$(w '.nf_drop.fw_deny')" -eq 5
	tb_expect "counted as NF drops" "$(w '.drop.nf')" -eq 5
	# A rule added while the worker runs is picked up (tables_gen).
	tb_xnf fw add prio 20 drop proto udp dport 7202
	sleep 0.5
	got=$(tb_udp_echo "$TB_SRC" 4 $TB_SINK4 7202 5)
	tb_expect "new rule: nothing echoed" "$got" -eq 0
	tb_expect "fw_deny drops" "$(w '.nf_drop.fw_deny')" -eq 10
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
	tb_expect "ping with fallback drop" "$(tb_ping "$TB_SRC" $TB_SINK4 3)" = "3 0"
	after=$(tb_stats_json d0)
	tb_expect "dropped for lack of a socket" \
		"$(tb_delta "$before" "$after" d0 .drop_reasons.xsk_no_socket)" -ge 3

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

@test "stats reset zeroes a live worker's counters; bpftool shows them by name" {
	worker_start nf l3fwd egress d1
	tb_ping_ok "$TB_SRC" $TB_SINK4 5
	tb_expect "counted" "$(w .rx_packets)" -ge 5
	tb_xnf stats reset
	tb_expect "rx after reset" "$(w .rx_packets)" -eq 0
	tb_expect "tx after reset" "$(w .tx_packets)" -eq 0
	tb_expect "frames still accounted" \
		"$(w '.frames_in | .free + .fill + .nf + .tx')" -eq "$(w .frames)"
	tb_expect "bpftool: named fields" "$(bpftool -j map dump pinned \
		"$XNF_PIN_ROOT/dev/d0/xnf_workers" | jq '.[0].formatted.value.state')" -eq 2
}

@test "1,000,000 packets through a worker: every frame accounted during and after the run" {
	[ -x "$GEN" ] && [ -x "$SINK" ] || skip "xnf-gen / xnf-sink not built"
	local n=1000000 out got i sum frames rx tx drops

	worker_start nf l3fwd egress d1
	tb_bg "$TB_SINK" "$SINK" k0 duration 60 ready "$TB_TMP/sink.ready" -j
	local spid=$TB_BG_PID
	for ((i = 0; i < 100; i++)); do
		[ -e "$TB_TMP/sink.ready" ] && break
		sleep 0.05
	done
	tb_bg "$TB_SRC" "$GEN" s0 count $n duration 60 size 64 flows 16 \
		src $TB_SRC4 dst $TB_SINK4 smac $TB_MAC_S0 dmac $TB_MAC_D0 -j
	local gpid=$TB_BG_PID
	# While it runs: the frames sum to the UMEM, at every look.
	frames=$(w .frames)
	for ((i = 0; i < 10; i++)); do
		sum=$(w '.frames_in | .free + .fill + .nf + .tx')
		tb_expect "frames during the run ($i)" "$sum" -eq "$frames"
		sleep 0.2
	done
	wait "$gpid"
	sleep 1
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
	# Every packet the chain handed to the socket has a fate: read by the
	# worker, or dropped by the kernel for a full RX ring or an empty fill
	# ring (a copy-mode worker sharing two vCPUs with the generator loses
	# some; they are counted, not lost).
	# (The veth between the generator and d0 drops what d0's NAPI cannot
	# take in time; what reached the chain is its `in`, and all of it but
	# the hosts' ARP / ND, which stays in the kernel, went to the socket.)
	local st
	st=$(tb_stats_json d0)
	got=$(tb_chain "$st" d0 redirect)
	tb_expect "chain handed over all it saw" "$got" -eq \
		$(($(tb_chain "$st" d0 in) - $(tb_chain "$st" d0 pass)))
	tb_expect "most of the million reached the chain" "$got" -ge $((n / 2))
	tb_expect "handed = read + kernel drops" "$got" -eq \
		"$(jq '.rx_packets + .kernel.rx_dropped + .kernel.rx_ring_full' <<<"$out")"
	tb_expect "the worker forwarded" "$tx" -gt 0
	kill "$spid"
	wait "$spid" || true
	# A veth whose peer runs XDP (the sink) queues frames for it in a
	# 256-entry ring and drops when it is full, counting the drop as
	# the sender's (d1's) tx_dropped.
	got=$(ip netns exec "$TB_SINK" cat /sys/class/net/k0/statistics/rx_packets)
	drops=$(ip netns exec "$TB_DUT" cat /sys/class/net/d1/statistics/tx_dropped)
	tb_expect "what the worker sent arrived at k0 or was counted by d1" \
		$((got + drops)) -ge "$tx"
}

@test "a worker stopped under traffic reads every frame it was handed; the fallback forwards the rest" {
	[ -x "$GEN" ] && [ -x "$SINK" ] || skip "xnf-gen / xnf-sink not built"
	local n=3000 out st handed got drops i

	worker_start nf l3fwd egress d1
	tb_bg "$TB_SINK" "$SINK" k0 duration 60 ready "$TB_TMP/sink.ready" -j \
		>"$TB_TMP/sink.json"
	local spid=$TB_BG_PID
	for ((i = 0; i < 100; i++)); do
		[ -e "$TB_TMP/sink.ready" ] && break
		sleep 0.05
	done
	# Paced (1,000 frames a second for 3 s): frames keep arriving while
	# the worker stops (it takes more than 10 ms), and none overflows a
	# ring.
	tb_bg "$TB_SRC" "$GEN" s0 count $n rate 1000 duration 30 size 64 flows 16 \
		src $TB_SRC4 dst $TB_SINK4 smac $TB_MAC_S0 dmac $TB_MAC_D0 -j
	local gpid=$TB_BG_PID
	sleep 1
	kill -TERM "$WPID"
	wait "$WPID" || true
	wait "$gpid"
	sleep 0.5
	out=$(tb_xnf -j stats d0 | jq -c '.devices[0].workers[0]')
	tb_expect "worker stopped cleanly" "$(jq -r .state <<<"$out")" = stopped
	st=$(tb_stats_json d0)
	# Every frame the chain redirected to the socket was read (or counted
	# by the kernel as dropped for a full ring): none was left in its RX
	# ring when the socket closed.
	handed=$(tb_chain "$st" d0 redirect)
	tb_expect "the worker was handed frames" "$handed" -gt 0
	tb_expect "handed = read + kernel drops" "$handed" -eq \
		"$(jq '.rx_packets + .kernel.rx_dropped + .kernel.rx_ring_full' <<<"$out")"
	tb_expect "the fallback took over" \
		"$(jq '.devices[0].pass_reasons.xsk_no_socket' <<<"$st")" -gt 0
	kill -INT "$spid"
	wait "$spid" || true
	# And so every frame sent arrived, or a sending veth counted it as
	# dropped (its peer's ring was full).
	got=$(jq '.packets - .duplicates' "$TB_TMP/sink.json")
	drops=$(($(ip netns exec "$TB_SRC" cat /sys/class/net/s0/statistics/tx_dropped) +
		$(ip netns exec "$TB_DUT" cat /sys/class/net/d1/statistics/tx_dropped)))
	tb_expect "sent = arrived + counted drops" "$n" -eq $((got + drops))
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
