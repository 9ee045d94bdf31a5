#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# gen_sink.bats - build/xnf-gen and build/xnf-sink on real traffic: the
# generator in one network namespace, the sink in another, joined by a veth
# pair (namespaces and devices named with this shell's pid and a random
# number, addresses from 192.0.2.0/24). Every test makes its own pair and
# removes it, even when it fails; every command runs under timeout.
#
# The frames themselves (bytes, sizes, flows, checksums, timestamps,
# sequence numbers) and the sink's loss/reorder/duplicate logic on crafted
# sequences are checked by the unit tests (selftests/unit/gen.c); here the
# tools as a harness calls them: exact counts, rate mode, bounds, signals,
# refusals, and that nothing stays attached.
#
# Exact counts on a busy machine: the veth drops what its ring toward the
# sink cannot take (the sink's softirq runs late when the CPUs are busy),
# and counts it. Every frame sent is accounted: received by the sink, or
# in the generator device's tx_dropped (gs_account); no test expects a
# transfer without loss, or a rate, or a time (xnf-gen's achieved rates
# and pacing are measured by the benchmarks: docs/benchmarks.md). IPv6 is
# off on the pair, so that the kernel's own frames never share the ring.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=180}"

load ../testbed/testbed

BUILD=$(dirname "$XNF")
GEN=$BUILD/xnf-gen
SINK=$BUILD/xnf-sink

setup_file()
{
	local why
	why=$(tb_missing)
	if [ -z "$why" ] && { [ ! -x "$GEN" ] || [ ! -x "$SINK" ]; }; then
		why="needs $GEN and $SINK (run make)"
	fi
	export GS_SKIP=$why
}

setup()
{
	[ -z "$GS_SKIP" ] || skip "$GS_SKIP"
	GS_ID="$$-$RANDOM"
	GS_A="xnf-gs-$GS_ID-gen"
	GS_B="xnf-gs-$GS_ID-sink"
	GS_DA="xg$RANDOM"
	GS_DB="xk$RANDOM"
	GS_TMP=$(mktemp -d "/tmp/xnf-gs.$GS_ID.XXXXXX")
	GS_PIDS=()
	ip netns add "$GS_A"
	ip netns add "$GS_B"
	# before the devices exist: they are born without IPv6
	ip netns exec "$GS_A" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
	ip netns exec "$GS_B" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
	ip -n "$GS_A" link add "$GS_DA" type veth peer name "$GS_DB" netns "$GS_B"
	ip -n "$GS_A" addr add 192.0.2.1/24 dev "$GS_DA"
	ip -n "$GS_B" addr add 192.0.2.2/24 dev "$GS_DB"
	ip -n "$GS_A" link set lo up
	ip -n "$GS_B" link set lo up
	ip -n "$GS_A" link set "$GS_DA" up
	ip -n "$GS_B" link set "$GS_DB" up
}

teardown()
{
	local pid
	for pid in "${GS_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${GS_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	[ -z "${GS_A:-}" ] || ip netns del "$GS_A" 2>/dev/null || true
	[ -z "${GS_B:-}" ] || ip netns del "$GS_B" 2>/dev/null || true
	[ -z "${GS_TMP:-}" ] || rm -rf -- "$GS_TMP"
}

# gen ARGS...: xnf-gen on the generator's device, bounded by 60 s.
gen()
{
	timeout 60 ip netns exec "$GS_A" "$GEN" "$GS_DA" "$@"
}

# sink_started FILE: FILE exists, or the sink is gone.
sink_started()
{
	[ -e "$1" ] || ! kill -0 "$SINK_PID" 2>/dev/null
}

# sink_bg OUT ARGS...: xnf-sink on the sink's device in the background,
# stdout to OUT; returns once it is attached, having noted the counters
# that gs_account starts from. Sets SINK_PID (the sink itself: ip netns
# exec execs it) and SINK_OUT. Bounded by its own duration, 120 s unless
# ARGS say otherwise.
sink_bg()
{
	local out=$1 ready="$GS_TMP/ready.$RANDOM"
	shift
	ip netns exec "$GS_B" "$SINK" "$GS_DB" duration 120 ready "$ready" "$@" \
		>"$out" 2>"$out.err" 3>&- &
	SINK_PID=$!
	SINK_OUT=$out
	GS_PIDS+=("$SINK_PID")
	tb_until "xnf-sink to attach" sink_started "$ready"
	[ -e "$ready" ] || { echo "xnf-sink did not attach: $(cat "$out.err")" >&2; return 1; }
	GS_DROP0=$(gs_dropped)
	GS_RX0=$(gs_rx packets)
	GS_RXB0=$(gs_rx bytes)
}

# gs_dropped: frames the veth dropped on their way from the generator's
# device to the sink's, for a full ring (the sink's NAPI ran late): the
# generator device's tx_dropped (the sink device's rx_dropped counts the
# same frames again; testbed.bash, tb_link).
gs_dropped()
{
	tb_link "$GS_A" "$GS_DA" tx.dropped
}

# gs_rx FIELD: packets or bytes that reached the sink's device: the sink's
# program ran on each (without the FCS, which the tools count).
gs_rx()
{
	tb_link "$GS_B" "$GS_DB" "rx.$1"
}

# gs_settled SENT: SENT frames since sink_bg reached the sink's device or
# were dropped by the veth.
gs_settled()
{
	(($(gs_rx packets) - GS_RX0 + $(gs_dropped) - GS_DROP0 >= $1))
}

# sink_wait: waits for the sink to end by itself (at most TB_WAIT s).
sink_ended()
{
	! kill -0 "$SINK_PID" 2>/dev/null
}

sink_wait()
{
	tb_until "xnf-sink to end" sink_ended && wait "$SINK_PID"
}

# sink_finish GEN_JSON: once every frame the generator says it sent is
# accounted at the sink's device, stops the sink (SIGINT: it may have
# ended by its count already) and sets S (its result), DROPPED (by the
# veth) and ARRIVED (at the sink's device) since sink_bg.
sink_finish()
{
	local sent
	sent=$(jq -e .sent <<<"$1") || return 1
	tb_until "the $sent frames sent to reach $GS_DB or be counted dropped" \
		gs_settled "$sent" || return 1
	kill -INT "$SINK_PID" 2>/dev/null || true
	sink_wait || return 1
	S=$(tail -n 1 "$SINK_OUT")
	DROPPED=$(($(gs_dropped) - GS_DROP0))
	ARRIVED=$(($(gs_rx packets) - GS_RX0))
	ARRIVED_BYTES=$(($(gs_rx bytes) - GS_RXB0))
}

# gs_account WHAT GEN_JSON: after sink_finish, what must hold exactly
# whatever the veth dropped: sent = received + dropped; the sink counted
# every frame that reached its device, with its bytes (+ 4 for the FCS);
# every sequence number missing at the sink is a drop (none reordered or
# seen twice on one veth queue); the bytes are the generator's when
# nothing was dropped.
gs_account()
{
	local what=$1 g=$2 sent rcv
	sent=$(jq .sent <<<"$g")
	rcv=$(jq .packets <<<"$S")
	echo "$what: sent $sent, received $rcv, dropped by the veth $DROPPED" >&2
	tb_expect "$what: sent = received + dropped" "$sent" -eq $((rcv + DROPPED))
	tb_expect "$what: received = arrived at $GS_DB" "$rcv" -eq "$ARRIVED"
	tb_expect "$what: bytes = bytes arrived + FCS" "$(jq .bytes <<<"$S")" -eq \
		$((ARRIVED_BYTES + 4 * ARRIVED))
	((DROPPED > 0)) ||
		tb_expect "$what: bytes = the generator's" "$(jq .bytes <<<"$S")" -eq "$(jq .bytes <<<"$g")"
	tb_expect "$what: duplicates" "$(jq .duplicates <<<"$S")" -eq 0
	tb_expect "$what: reordered" "$(jq .reordered <<<"$S")" -eq 0
	((rcv > 0)) || return 0
	tb_expect "$what: missing sequence numbers = dropped" \
		"$(jq --argjson n "$sent" '.first_seq + .lost + ($n - 1 - .last_seq)' <<<"$S")" -eq "$DROPPED"
}

# xdp_id NS DEV: id of DEV's XDP program, or "none".
xdp_id()
{
	ip -n "$1" -j link show dev "$2" | jq -r '.[0].xdp.prog.id // "none"'
}

@test "100,000 frames as fast as they go: every one received or counted dropped, in order, none twice" {
	local g
	sink_bg "$GS_TMP/sink.json" count 100000 csum -j
	g=$(gen count 100000 -j)
	sink_finish "$g"
	echo "gen: $g" >&2
	echo "sink: $S" >&2
	tb_expect "generator sent" "$(jq .sent <<<"$g")" -eq 100000
	tb_expect "the flushes carry every frame" \
		"$(jq '[.flushes | to_entries[] | .key * .value] | add' <<<"$g")" -eq 100000
	gs_account "100,000 frames" "$g"
	tb_expect "bytes of 64-byte frames" "$(jq .bytes <<<"$S")" -eq $((64 * $(jq .packets <<<"$S")))
	tb_expect "bad IPv4 checksums" "$(jq .bad_ip_csum <<<"$S")" -eq 0
	tb_expect "bad UDP checksums" "$(jq .bad_l4_csum <<<"$S")" -eq 0
	tb_expect "histogram holds every frame" \
		"$(jq '[.latency_hist[][1]] | add' <<<"$S")" -eq "$(jq .packets <<<"$S")"
	tb_expect "p50 <= p99 <= max" \
		"$(jq '.latency_ns | (.min <= .p50 and .p50 <= .p99 and .p99 <= .p999 and .p999 <= .max)' <<<"$S")" = true
	tb_expect "method" "$(jq -r .method <<<"$g")" = live
	tb_expect "the generator's program is gone" "$(xdp_id "$GS_A" "$GS_DA")" = none
	tb_expect "the sink's program is gone" "$(xdp_id "$GS_B" "$GS_DB")" = none
}

@test "IPv4 and IPv6, UDP and TCP, fixed sizes, imix and dc: exact counts, right checksums" {
	local fam proto size g min n=24000 what
	for fam in ipv4 ipv6; do
		for proto in udp tcp; do
			case $fam/$proto in
			ipv4/udp) min=64 ;; ipv4/tcp) min=74 ;;
			ipv6/udp) min=82 ;; ipv6/tcp) min=94 ;;
			esac
			for size in $min 1518 imix dc; do
				what="$fam/$proto $size"
				sink_bg "$GS_TMP/sink.json" count $n csum -j
				g=$(gen count $n size $size flows 100 $fam $proto -j)
				sink_finish "$g"
				tb_expect "$what: sent" "$(jq .sent <<<"$g")" -eq $n
				gs_account "$what" "$g"
				case $size in
				imix | dc) ;;
				*) tb_expect "$what: bytes of $size-byte frames" "$(jq .bytes <<<"$S")" \
					-eq $((size * $(jq .packets <<<"$S"))) ;;
				esac
				tb_expect "$what: IPv4 checksums" "$(jq .bad_ip_csum <<<"$S")" -eq 0
				tb_expect "$what: L4 checksums" "$(jq .bad_l4_csum <<<"$S")" -eq 0
				tb_expect "$what: family" "$(jq -r .family <<<"$g")" = $fam
				tb_expect "$what: proto" "$(jq -r .proto <<<"$g")" = $proto
				tb_expect "$what: size" "$(jq -r .size <<<"$g")" = $size
			done
		done
	done
	# imix and dc over whole tables: their mean frame sizes (the sink has
	# them too when the veth dropped nothing; gs_account)
	sink_bg "$GS_TMP/sink.json" count 12000 -j
	g=$(gen count 12000 size imix -j)
	sink_finish "$g"
	tb_expect "imix bytes: 1000 x (7 x 64 + 4 x 594 + 1518)" "$(jq .bytes <<<"$g")" -eq 4342000
	gs_account "imix" "$g"
	sink_bg "$GS_TMP/sink.json" count 10000 -j
	g=$(gen count 10000 size dc -j)
	sink_finish "$g"
	tb_expect "dc bytes: 10 tables of 1000 frames, mean 123.736" "$(jq .bytes <<<"$g")" -eq 1237360
	gs_account "dc" "$g"
}

# What a rate guarantees whatever the machine does: the generator reports
# the rate it was asked for, never sends a frame before its time (so never
# faster than the rate, nor more than the duration holds), flushes as the
# rate needs and never bursts beyond a millisecond's worth of frames or a
# flush. How close it gets to the rate is measured by the benchmarks.
@test "rate mode: the rate asked for, never faster, bursts no larger than the rate needs" {
	local rate g flush cap
	for rate in 100 1000 10000 100000 1000000; do
		sink_bg "$GS_TMP/sink.json" -j
		g=$(gen duration 1 rate $rate -j)
		sink_finish "$g"
		echo "rate $rate: sent $(jq .sent <<<"$g") at $(jq .pps <<<"$g") pps, bursts max $(jq .burst <<<"$g") mean $(jq .burst_mean <<<"$g"), flush $(jq .flush <<<"$g"), slips $(jq .slips <<<"$g"), dropped by the veth $DROPPED" >&2
		tb_expect "rate $rate: rate_target" "$(jq .rate_target <<<"$g")" -eq $rate
		tb_expect "rate $rate: sent some" "$(jq .sent <<<"$g")" -gt 0
		tb_expect "rate $rate: no more than 1 s holds" "$(jq .sent <<<"$g")" -le $rate
		tb_expect "rate $rate: never faster than the rate" \
			"$(jq --argjson r $rate '.pps <= $r * 1.000001' <<<"$g")" = true
		gs_account "rate $rate" "$g"
		# one frame per flush up to 125 kpps, then the fewest the rate
		# needs; up to 1 kpps one frame per call
		flush=1
		((rate <= 125000)) || flush=8
		tb_expect "rate $rate: frames per flush" "$(jq .flush <<<"$g")" -eq $flush
		((rate > 1000)) ||
			tb_expect "rate $rate: one frame at a time" "$(jq .burst <<<"$g")" -eq 1
		cap=$(((rate + 999) / 1000))
		((cap >= flush)) || cap=$flush
		tb_expect "rate $rate: no burst above 1 ms worth of frames or a flush" \
			"$(jq .burst <<<"$g")" -le $cap
		# the flushes by size: every frame in one, none above the flush
		tb_expect "rate $rate: the flushes carry every frame" \
			"$(jq '[.flushes | to_entries[] | .key * .value] | add' <<<"$g")" -eq "$(jq .sent <<<"$g")"
		tb_expect "rate $rate: no flush above $flush frames" \
			"$(jq --argjson f $flush '[.flushes | to_entries[] | select(.key > $f) | .value] | add' <<<"$g")" -eq 0
	done
}

@test "as fast as they go: a sender held up 200 ms is one pause that long, in its bucket" {
	local gpid g
	sink_bg "$GS_TMP/sink.json" -j
	ip netns exec "$GS_A" "$GEN" "$GS_DA" duration 2 -j >"$GS_TMP/gen.json" 2>/dev/null 3>&- &
	gpid=$!
	GS_PIDS+=("$gpid")
	tb_until "xnf-gen to attach and send" gen_sending
	# SIGSTOP ends the test-run call under way (-EINTR); the sender goes on
	# after SIGCONT: no frame for at least 200 ms
	kill -STOP "$gpid"
	sleep 0.2
	kill -CONT "$gpid"
	wait "$gpid"
	g=$(cat "$GS_TMP/gen.json")
	sink_finish "$g"
	gs_account "held up" "$g"
	echo "pauses: $(jq -c .pauses <<<"$g")" >&2
	tb_expect "16 buckets of [count, ns]" "$(jq '.pauses | map(length) | select(all(. == 2)) | length' <<<"$g")" -eq 16
	# bucket b: pauses of 2^(16+b) ns up to 2^(17+b), the last unbounded
	tb_expect "every bucket's sum within its bounds" "$(jq '[.pauses | to_entries[] |
		.key as $b | .value as [$n, $ns] |
		($n == 0 and $ns == 0) or
		(($ns >= $n * pow(2; 16 + $b)) and ($b == 15 or $ns < $n * pow(2; 17 + $b)))] |
		all' <<<"$g")" = true
	# 200 ms is 2^27.6 ns: bucket 11 or later (later on a busy machine)
	tb_expect "a pause of 200 ms or more" \
		"$(jq '[.pauses[11:][] | .[1]] | add >= 200000000' <<<"$g")" = true
	tb_expect "pauses within the run" "$(jq '. as $g | ([$g.pauses[][1]] | add) / 1e9 <= $g.duration_s' <<<"$g")" = true
	# paced, frames due in a pause leave late instead: not counted
	sink_bg "$GS_TMP/sink2.json" -j
	g=$(gen count 1000 rate 100000 -j)
	sink_finish "$g"
	tb_expect "paced: no pauses" "$(jq .pauses <<<"$g")" = null
}

# gen_timed ARGS...: gen, with the wall time it took in T_MS.
gen_timed()
{
	local t0 t1
	t0=$(date +%s%N)
	gen "$@"
	t1=$(date +%s%N)
	T_MS=$(((t1 - t0) / 1000000))
}

# Times here are lower bounds only, which a busy machine cannot break: a
# run of 1 s cannot end sooner; how much later it ends is not asserted
# (gen's timeout is the guard against a run that never ends).
@test "count and duration always end a run" {
	local g
	# neither: refused, nothing sent
	run -2 gen rate 1000
	sink_bg "$GS_TMP/sink.json" -j
	gen_timed duration 1 -j >"$GS_TMP/gen.json"
	g=$(cat "$GS_TMP/gen.json")
	sink_finish "$g"
	tb_expect "duration 1, as fast as possible: not before its second" "$T_MS" -ge 1000
	tb_expect "duration 1: sent frames" "$(jq .sent <<<"$g")" -gt 0
	gs_account "duration 1" "$g"

	# a rate the box cannot reach still ends at the duration
	gen_timed duration 1 rate 50000000 -j >"$GS_TMP/gen.json"
	g=$(cat "$GS_TMP/gen.json")
	tb_expect "duration 1 at an impossible rate: ended" "$(jq .rate_target <<<"$g")" -eq 50000000
	tb_expect "duration 1 at an impossible rate: not before its second" "$T_MS" -ge 1000

	# duration before count, count before duration
	g=$(gen duration 0.5 count 1000000 rate 100 -j)
	tb_expect "duration 0.5 at 100 pps: at most 50 frames" "$(jq .sent <<<"$g")" -le 50
	g=$(gen duration 100 count 10 rate 100 -j)
	tb_expect "count 10 at 100 pps: 10 frames" "$(jq .sent <<<"$g")" -eq 10
	tb_expect "count 10 at 100 pps: 10 periods at least" \
		"$(jq '.duration_s >= 0.1' <<<"$g")" = true

	# a sink without traffic ends after its duration with empty results
	sink_bg "$GS_TMP/sink.json" duration 0.5 -j
	sink_wait
	S=$(tail -n 1 "$GS_TMP/sink.json")
	tb_expect "idle sink: packets" "$(jq .packets <<<"$S")" -eq 0
	tb_expect "idle sink: no latency" "$(jq .latency_ns.p50 <<<"$S")" = null
	tb_expect "idle sink: detached" "$(xdp_id "$GS_B" "$GS_DB")" = none
}

# gen_sending: the generator's program is attached and frames arrive.
gen_sending()
{
	[ "$(xdp_id "$GS_A" "$GS_DA")" != none ] && (($(gs_rx packets) > GS_RX0))
}

sink_detached()
{
	[ "$(xdp_id "$GS_B" "$GS_DB")" = none ]
}

@test "signals end gen and sink; nothing stays attached, even after SIGKILL" {
	local gpid g
	sink_bg "$GS_TMP/sink.json" -j
	# no timeout(1) in between: the signal goes to xnf-gen itself, which
	# its duration bounds
	ip netns exec "$GS_A" "$GEN" "$GS_DA" duration 30 rate 10000 -j \
		>"$GS_TMP/gen.json" 2>/dev/null 3>&- &
	gpid=$!
	GS_PIDS+=("$gpid")
	tb_until "xnf-gen to attach and send" gen_sending
	kill -INT "$gpid"
	wait "$gpid"
	g=$(cat "$GS_TMP/gen.json")
	tb_expect "gen after SIGINT: sent some" "$(jq .sent <<<"$g")" -gt 0
	# 30 s at 10 kpps is 300,000 frames, and none leaves early
	tb_expect "gen after SIGINT: stopped before its duration" "$(jq .sent <<<"$g")" -lt 300000
	tb_expect "gen after SIGINT: detached" "$(xdp_id "$GS_A" "$GS_DA")" = none
	tb_until "the frames sent to reach $GS_DB or be counted dropped" \
		gs_settled "$(jq .sent <<<"$g")"
	kill -TERM "$SINK_PID"
	sink_wait
	S=$(tail -n 1 "$GS_TMP/sink.json")
	DROPPED=$(($(gs_dropped) - GS_DROP0))
	ARRIVED=$(($(gs_rx packets) - GS_RX0))
	ARRIVED_BYTES=$(($(gs_rx bytes) - GS_RXB0))
	gs_account "sink after SIGTERM" "$g"
	tb_expect "sink after SIGTERM: detached" "$(xdp_id "$GS_B" "$GS_DB")" = none

	sink_bg "$GS_TMP/sink2.json" -j
	tb_expect "sink attached" "$(xdp_id "$GS_B" "$GS_DB")" != none
	kill -KILL "$SINK_PID"
	wait "$SINK_PID" 2>/dev/null || true
	tb_until "the sink's program to go (its bpf_link died with it)" sink_detached
}

@test "the sink refuses a device with an XDP program, and passes what is not a probe" {
	local id g
	ip -n "$GS_B" link set dev "$GS_DB" xdp obj "$BUILD/bpf/xmit.bpf.o" sec xdp
	id=$(xdp_id "$GS_B" "$GS_DB")
	run -1 ip netns exec "$GS_B" timeout 10 "$SINK" "$GS_DB" duration 1
	tb_expect "the other program is still there" "$(xdp_id "$GS_B" "$GS_DB")" -eq "$id"
	ip -n "$GS_B" link set dev "$GS_DB" xdp off

	# ARP and ICMP pass to the kernel while the sink counts
	sink_bg "$GS_TMP/sink.json" -j
	run timeout "$TB_TIMEOUT" ip netns exec "$GS_A" ping -c 5 -i 0.05 -w "$TB_WAIT" 192.0.2.2
	tb_expect "ping through the sink's device" "$status" -eq 0
	GS_DROP0=$(gs_dropped)
	GS_RX0=$(gs_rx packets)
	GS_RXB0=$(gs_rx bytes)
	g=$(gen count 1000 dst 192.0.2.2 -j 2>/dev/null)
	sink_finish "$g"
	tb_expect "frames without a probe counted" "$(jq .no_probe <<<"$S")" -ge 5
	tb_expect "probe frames sent" "$(jq .sent <<<"$g")" -eq 1000
	gs_account "probe frames" "$g"
}

# intervals_cover N: the sink printed at least 3 interval lines, whose
# packets add up to N.
intervals_cover()
{
	[ "$(jq -s '[.[] | select(.t_s != null)] | [length >= 3, (map(.packets) | add) == $n] | all' \
		--argjson n "$1" "$SINK_OUT")" = true ]
}

@test "defaults: the device's MAC, the destination's neighbour entry; interval lines" {
	local mac g pid
	# the generator's default dmac comes from its neighbour table
	ip -n "$GS_A" neigh replace 192.0.2.99 lladdr 02:78:6e:00:aa:bb dev "$GS_DA" nud permanent
	mac=$(ip -n "$GS_A" -j link show dev "$GS_DA" | jq -r '.[0].address')
	ip netns exec "$GS_B" ethtool -K "$GS_DB" gro on >/dev/null
	ip netns exec "$GS_B" timeout "$TB_TIMEOUT" tcpdump -i "$GS_DB" -Q in -n -U \
		-c 5 -w "$GS_TMP/dump.pcap" udp port 9 2>/dev/null 3>&- &
	pid=$!
	GS_PIDS+=("$pid")
	# tcpdump opens the file once the filter is in place
	tb_until "tcpdump to start" test -s "$GS_TMP/dump.pcap"
	gen count 5 rate 100 dst 192.0.2.99 >/dev/null 2>&1
	wait "$pid" || true
	tcpdump -r "$GS_TMP/dump.pcap" -n -e 2>/dev/null >"$GS_TMP/dump"
	cat "$GS_TMP/dump" >&2
	tb_expect "frames to the neighbour's MAC from the device's" \
		"$(grep -c "$mac > 02:78:6e:00:aa:bb" "$GS_TMP/dump")" -eq 5
	tb_expect "from the device's address" "$(grep -c '192.0.2.1.1024 > 192.0.2.99.9' "$GS_TMP/dump")" -eq 5

	# interval lines, then the result as the last line; the lines count
	# every frame the sink received before it stopped
	sink_bg "$GS_TMP/sink.json" interval 0.2 -j
	g=$(gen duration 1 rate 20000 -j 2>/dev/null)
	tb_until "the frames sent to reach $GS_DB or be counted dropped" \
		gs_settled "$(jq .sent <<<"$g")"
	tb_until "interval lines that count every frame received" \
		intervals_cover $(($(gs_rx packets) - GS_RX0))
	sink_finish "$g"
	tb_expect "interval lines: time and rate" \
		"$(jq -s '[.[] | select(.t_s != null)] | map(.pps != null and .t_s > 0) | all' "$GS_TMP/sink.json")" = true
	tb_expect "interval lines: in time order" \
		"$(jq -s '[.[] | select(.t_s != null) | .t_s] | . == sort' "$GS_TMP/sink.json")" = true
	tb_expect "last line: the result, as many as the intervals counted" \
		"$(jq .packets <<<"$S")" -eq "$(jq -s '[.[] | select(.t_s != null) | .packets] | add' "$GS_TMP/sink.json")"
	gs_account "interval run" "$g"
}

# A Zipf mix over 1,000,000 flows (s = 1.0): flow i (from 0) comes with
# probability (i+1)^-1 / H, H = 14.39 for 10^6 flows: flow 0 carries 6.9% of
# the frames and flow 1 3.5%. The sink counts every frame (exact
# accounting); a tcpdump sample of the frames says which flows they carry
# (source address and port: flow 0 is 192.0.2.1.1024, flow 1 .1025), with
# tolerances far wider than a 10,000-frame sample's spread.
@test "zipf 1.0 over 1,000,000 flows: every frame accounted, the top flows carry the law's shares" {
	local g pid n top first second
	# an exponent that is not a positive number: refused
	run -2 gen count 10 flows 100 zipf 0
	run -2 gen count 10 flows 100 zipf x
	sink_bg "$GS_TMP/sink.json" count 50000 csum -j
	g=$(gen count 50000 flows 1000000 zipf 1.0 -j)
	sink_finish "$g"
	echo "gen: $g" >&2
	tb_expect "mix" "$(jq -r .mix <<<"$g")" = zipf
	tb_expect "zipf_s" "$(jq .zipf_s <<<"$g")" = 1
	tb_expect "flows" "$(jq .flows <<<"$g")" -eq 1000000
	tb_expect "sent" "$(jq .sent <<<"$g")" -eq 50000
	gs_account "zipf" "$g"
	tb_expect "bad UDP checksums" "$(jq .bad_l4_csum <<<"$S")" -eq 0

	# round robin says so too
	g=$(gen count 10 flows 4 -j)
	tb_expect "round robin: mix" "$(jq -r .mix <<<"$g")" = round-robin
	tb_expect "round robin: zipf_s" "$(jq .zipf_s <<<"$g")" = null

	ip netns exec "$GS_B" ethtool -K "$GS_DB" gro on >/dev/null
	ip netns exec "$GS_B" timeout "$TB_TIMEOUT" tcpdump -i "$GS_DB" -Q in -n -U \
		-c 10000 -w "$GS_TMP/zipf.pcap" udp port 9 2>/dev/null 3>&- &
	pid=$!
	GS_PIDS+=("$pid")
	tb_until "tcpdump to start" test -s "$GS_TMP/zipf.pcap"
	gen count 20000 rate 20000 flows 1000000 zipf 1.0 dst 192.0.2.99 \
		dmac 02:78:6e:00:aa:bb >/dev/null 2>&1
	kill -INT "$pid" 2>/dev/null || true
	wait "$pid" || true
	tcpdump -r "$GS_TMP/zipf.pcap" -n 2>/dev/null | awk '{print $3}' >"$GS_TMP/zipf.src"
	n=$(wc -l <"$GS_TMP/zipf.src")
	top=$(sort "$GS_TMP/zipf.src" | uniq -c | sort -rn | head -n 1 | awk '{print $2}')
	first=$(grep -cx '192.0.2.1.1024' "$GS_TMP/zipf.src" || true)
	second=$(grep -cx '192.0.2.1.1025' "$GS_TMP/zipf.src" || true)
	echo "sample: $n frames, flow 0: $first, flow 1: $second, the most frequent: $top" >&2
	tb_expect "a sample of at least 5,000 frames" "$n" -ge 5000
	tb_expect "the most frequent flow is flow 0" "$top" = 192.0.2.1.1024
	tb_expect "flow 0: 6.9% (at least 5%)" $((first * 1000 / n)) -ge 50
	tb_expect "flow 0: 6.9% (at most 9%)" $((first * 1000 / n)) -le 90
	tb_expect "flow 1: 3.5% (2.5% to 4.5%)" $((second * 1000 / n)) -ge 25
	tb_expect "flow 1: 3.5% (2.5% to 4.5%)" $((second * 1000 / n)) -le 45
}
