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
# tools as a harness calls them: exact counts, rates, bounds, signals,
# refusals, and that nothing stays attached.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=180}"

load lib/testbed

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

# sink_bg OUT ARGS...: xnf-sink on the sink's device in the background,
# stdout to OUT; returns once it is attached. Sets SINK_PID (the sink
# itself: ip netns exec execs it). Bounded by its own duration, 60 s
# unless ARGS say otherwise.
sink_bg()
{
	local out=$1 ready="$GS_TMP/ready.$RANDOM" i
	shift
	ip netns exec "$GS_B" "$SINK" "$GS_DB" duration 60 ready "$ready" "$@" \
		>"$out" 2>"$out.err" 3>&- &
	SINK_PID=$!
	GS_PIDS+=("$SINK_PID")
	for ((i = 0; i < 200; i++)); do
		[ -e "$ready" ] && return 0
		kill -0 "$SINK_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "xnf-sink did not attach: $(cat "$out.err")" >&2
	return 1
}

# gs_dropped: frames the veth pair dropped between generator and sink (the
# sender's tx_dropped: a full ring toward an XDP peer; and the receiver's
# rx_dropped), so that sent = received + dropped holds at any speed.
gs_dropped()
{
	echo $(($(ip netns exec "$GS_A" cat "/sys/class/net/$GS_DA/statistics/tx_dropped") + \
		$(ip netns exec "$GS_B" cat "/sys/class/net/$GS_DB/statistics/rx_dropped")))
}

# sink_wait: waits (at most 30 s) for the sink to end by itself.
sink_wait()
{
	local i
	for ((i = 0; i < 600; i++)); do
		kill -0 "$SINK_PID" 2>/dev/null || { wait "$SINK_PID"; return; }
		sleep 0.05
	done
	echo "xnf-sink did not end" >&2
	return 1
}

# sink_stop: SIGINT, then waits for it.
sink_stop()
{
	sleep 0.2       # frames in flight
	kill -INT "$SINK_PID" 2>/dev/null || true
	sink_wait
}

# xdp_id NS DEV: id of DEV's XDP program, or "none".
xdp_id()
{
	ip -n "$1" -j link show dev "$2" | jq -r '.[0].xdp.prog.id // "none"'
}

@test "100,000 frames as fast as they go: all counted, none lost, reordered or duplicated" {
	local g s
	sink_bg "$GS_TMP/sink.json" count 100000 duration 30 csum -j
	g=$(gen count 100000 -j)
	sink_wait
	s=$(tail -n 1 "$GS_TMP/sink.json")
	echo "gen: $g" >&2
	echo "sink: $s" >&2
	tb_expect "generator sent" "$(jq .sent <<<"$g")" -eq 100000
	tb_expect "sink packets" "$(jq .packets <<<"$s")" -eq 100000
	tb_expect "bytes" "$(jq .bytes <<<"$s")" -eq "$(jq .bytes <<<"$g")"
	tb_expect "bytes of 64-byte frames" "$(jq .bytes <<<"$s")" -eq 6400000
	tb_expect "lost" "$(jq .lost <<<"$s")" -eq 0
	tb_expect "reordered" "$(jq .reordered <<<"$s")" -eq 0
	tb_expect "duplicates" "$(jq .duplicates <<<"$s")" -eq 0
	tb_expect "first sequence number" "$(jq .first_seq <<<"$s")" -eq 0
	tb_expect "last sequence number" "$(jq .last_seq <<<"$s")" -eq 99999
	tb_expect "bad IPv4 checksums" "$(jq .bad_ip_csum <<<"$s")" -eq 0
	tb_expect "bad UDP checksums" "$(jq .bad_l4_csum <<<"$s")" -eq 0
	tb_expect "histogram holds every frame" \
		"$(jq '[.latency_hist[][1]] | add' <<<"$s")" -eq 100000
	tb_expect "p50 <= p99 <= max" \
		"$(jq '.latency_ns | (.min <= .p50 and .p50 <= .p99 and .p99 <= .p999 and .p999 <= .max)' <<<"$s")" = true
	tb_expect "method" "$(jq -r .method <<<"$g")" = live
	tb_expect "the generator's program is gone" "$(xdp_id "$GS_A" "$GS_DA")" = none
	tb_expect "the sink's program is gone" "$(xdp_id "$GS_B" "$GS_DB")" = none
}

@test "IPv4 and IPv6, UDP and TCP, fixed sizes, imix and dc: exact counts, right checksums" {
	local fam proto size g s min n=24000
	for fam in ipv4 ipv6; do
		for proto in udp tcp; do
			case $fam/$proto in
			ipv4/udp) min=64 ;; ipv4/tcp) min=74 ;;
			ipv6/udp) min=82 ;; ipv6/tcp) min=94 ;;
			esac
			for size in $min 1518 imix dc; do
				sink_bg "$GS_TMP/sink.json" count $n duration 30 csum -j
				# paced: a sink that shares the CPU can be
				# deferred to ksoftirqd at full speed, and the
				# veth ring overflows; exactness at full speed
				# is the first test's
				g=$(gen count $n rate 500000 size $size flows 100 $fam $proto -j)
				sink_wait
				s=$(tail -n 1 "$GS_TMP/sink.json")
				echo "$fam/$proto $size: sent $(jq .sent <<<"$g") mean $(jq .mean_size <<<"$g") B, received $(jq .packets <<<"$s")" >&2
				tb_expect "$fam/$proto $size: sent" "$(jq .sent <<<"$g")" -eq $n
				tb_expect "$fam/$proto $size: received" "$(jq .packets <<<"$s")" -eq $n
				tb_expect "$fam/$proto $size: bytes" "$(jq .bytes <<<"$s")" -eq "$(jq .bytes <<<"$g")"
				tb_expect "$fam/$proto $size: lost" "$(jq .lost <<<"$s")" -eq 0
				tb_expect "$fam/$proto $size: IPv4 checksums" "$(jq .bad_ip_csum <<<"$s")" -eq 0
				tb_expect "$fam/$proto $size: L4 checksums" "$(jq .bad_l4_csum <<<"$s")" -eq 0
				tb_expect "$fam/$proto $size: family" "$(jq -r .family <<<"$g")" = $fam
				tb_expect "$fam/$proto $size: proto" "$(jq -r .proto <<<"$g")" = $proto
				tb_expect "$fam/$proto $size: size" "$(jq -r .size <<<"$g")" = $size
			done
		done
	done
	# imix and dc over whole tables: their mean frame sizes
	sink_bg "$GS_TMP/sink.json" count 12000 duration 30 -j
	g=$(gen count 12000 size imix -j)
	sink_wait
	tb_expect "imix bytes: 1000 x (7 x 64 + 4 x 594 + 1518)" "$(jq .bytes <<<"$g")" -eq 4342000
	tb_expect "imix bytes at the sink" "$(tail -n 1 "$GS_TMP/sink.json" | jq .bytes)" -eq 4342000
	sink_bg "$GS_TMP/sink.json" count 10000 duration 30 -j
	g=$(gen count 10000 size dc -j)
	sink_wait
	tb_expect "dc bytes: 10 tables of 1000 frames, mean 123.736" "$(jq .bytes <<<"$g")" -eq 1237360
}

@test "rate mode: the achieved rate, bursts no larger than the rate needs" {
	local rate g s pps lo hi cap
	for rate in 100 1000 10000 100000 1000000; do
		sink_bg "$GS_TMP/sink.json" duration 30 -j
		g=$(gen duration 1 rate $rate -j)
		sink_stop
		s=$(tail -n 1 "$GS_TMP/sink.json")
		pps=$(jq .pps <<<"$g")
		echo "rate $rate: sent $(jq .sent <<<"$g") at $pps pps, bursts max $(jq .burst <<<"$g") mean $(jq .burst_mean <<<"$g"), flush $(jq .flush <<<"$g"), slips $(jq .slips <<<"$g"), sink p50 $(jq .latency_ns.p50 <<<"$s") ns p99 $(jq .latency_ns.p99 <<<"$s") ns" >&2
		tb_expect "rate $rate: rate_target" "$(jq .rate_target <<<"$g")" -eq $rate
		tb_expect "rate $rate: all received" "$(jq .packets <<<"$s")" -eq "$(jq .sent <<<"$g")"
		# a noisy box, shared with other tests: only gross errors fail
		# (high rates need the CPU the box may be giving to others)
		lo=$((rate / 2)) hi=$((rate * 13 / 10))
		((rate < 100000)) || lo=$((rate / 4))
		tb_expect "rate $rate: achieved pps >= $lo" "$(jq '.pps | floor' <<<"$g")" -ge $lo
		tb_expect "rate $rate: achieved pps <= $hi" "$(jq '.pps | floor' <<<"$g")" -le $hi
		# up to 125 kpps every frame is flushed on its own: bursts only
		# where frames queued behind a late one, never longer than 1 ms
		# worth of frames or one flush
		if ((rate <= 1000)); then
			tb_expect "rate $rate: one frame at a time" "$(jq .burst <<<"$g")" -eq 1
		elif ((rate <= 125000)); then
			tb_expect "rate $rate: one frame per flush" "$(jq .flush <<<"$g")" -eq 1
			tb_expect "rate $rate: mostly single frames" \
				"$(jq '.burst_mean < 2' <<<"$g")" = true
		fi
		cap=$(((rate + 999) / 1000))
		((cap >= $(jq .flush <<<"$g"))) || cap=$(jq .flush <<<"$g")
		tb_expect "rate $rate: no burst above 1 ms worth of frames or a flush" \
			"$(jq .burst <<<"$g")" -le $cap
	done
}

@test "count and duration always end a run" {
	local g s t0 t1 d0 r
	# neither: refused, nothing sent
	run -2 gen rate 1000
	sink_bg "$GS_TMP/sink.json" duration 3 -j
	d0=$(gs_dropped)
	t0=$(date +%s%N)
	g=$(gen duration 1 -j)
	t1=$(date +%s%N)
	tb_expect "duration 1, as fast as possible: ends within 3 s" $(((t1 - t0) / 1000000)) -le 3000
	tb_expect "duration 1: runs about 1 s" "$(jq '.duration_s * 1000 | floor' <<<"$g")" -ge 900
	tb_expect "duration 1: sent frames" "$(jq .sent <<<"$g")" -gt 1000
	sink_wait
	# as fast as possible: the veth ring may overflow. Every frame sent
	# either arrived or is among the pair's drops (which may also hold
	# the kernel's own IPv6 ND/MLD frames), and nothing arrives twice.
	r=$(tail -n 1 "$GS_TMP/sink.json" | jq .packets)
	tb_expect "the sink's duration ended it: no more received than sent" \
		"$r" -le "$(jq .sent <<<"$g")"
	tb_expect "the sink's duration ended it: the rest dropped by the veth pair" \
		$(($(jq .sent <<<"$g") - r)) -le $(($(gs_dropped) - d0))

	# a rate the box cannot reach still ends at the duration
	t0=$(date +%s%N)
	g=$(gen duration 1 rate 50000000 -j)
	t1=$(date +%s%N)
	tb_expect "duration 1 at an impossible rate: ends within 3 s" $(((t1 - t0) / 1000000)) -le 3000
	tb_expect "duration 1 at an impossible rate: below the rate" "$(jq '.pps | floor' <<<"$g")" -lt 50000000

	# duration before count, count before duration
	g=$(gen duration 0.5 count 1000000 rate 100 -j)
	tb_expect "duration 0.5 at 100 pps: about 50 frames" "$(jq .sent <<<"$g")" -le 52
	tb_expect "duration 0.5 at 100 pps: about 50 frames" "$(jq .sent <<<"$g")" -ge 45
	g=$(gen duration 100 count 10 rate 100 -j)
	tb_expect "count 10 at 100 pps: 10 frames" "$(jq .sent <<<"$g")" -eq 10
	tb_expect "count 10 at 100 pps: about 0.1 s" "$(jq '.duration_s * 1000 | floor' <<<"$g")" -le 500

	# a sink without traffic ends after its duration with empty results
	sink_bg "$GS_TMP/sink.json" duration 0.5 -j
	sink_wait
	s=$(tail -n 1 "$GS_TMP/sink.json")
	tb_expect "idle sink: packets" "$(jq .packets <<<"$s")" -eq 0
	tb_expect "idle sink: no latency" "$(jq .latency_ns.p50 <<<"$s")" = null
	tb_expect "idle sink: detached" "$(xdp_id "$GS_B" "$GS_DB")" = none
}

@test "signals end gen and sink; nothing stays attached, even after SIGKILL" {
	local gpid s
	sink_bg "$GS_TMP/sink.json" -j
	# no timeout(1) in between: the signal goes to xnf-gen itself, which
	# its duration bounds
	ip netns exec "$GS_A" "$GEN" "$GS_DA" duration 30 rate 10000 -j \
		>"$GS_TMP/gen.json" 2>/dev/null 3>&- &
	gpid=$!
	GS_PIDS+=("$gpid")
	sleep 1
	tb_expect "the generator's program is attached while it runs" \
		"$(xdp_id "$GS_A" "$GS_DA")" != none
	kill -INT "$gpid"
	wait "$gpid"
	tb_expect "gen after SIGINT: sent some" "$(jq .sent "$GS_TMP/gen.json")" -gt 1000
	tb_expect "gen after SIGINT: stopped early" "$(jq '.duration_s | floor' "$GS_TMP/gen.json")" -lt 10
	tb_expect "gen after SIGINT: detached" "$(xdp_id "$GS_A" "$GS_DA")" = none
	sleep 0.2
	kill -TERM "$SINK_PID"
	sink_wait
	s=$(tail -n 1 "$GS_TMP/sink.json")
	tb_expect "sink after SIGTERM: counted what was sent" "$(jq .packets <<<"$s")" -eq "$(jq .sent "$GS_TMP/gen.json")"
	tb_expect "sink after SIGTERM: detached" "$(xdp_id "$GS_B" "$GS_DB")" = none

	sink_bg "$GS_TMP/sink2.json" -j
	tb_expect "sink attached" "$(xdp_id "$GS_B" "$GS_DB")" != none
	kill -KILL "$SINK_PID"
	wait "$SINK_PID" 2>/dev/null || true
	sleep 0.2
	tb_expect "sink after SIGKILL: detached (its bpf_link died with it)" \
		"$(xdp_id "$GS_B" "$GS_DB")" = none
}

@test "the sink refuses a device with an XDP program, and passes what is not a probe" {
	local id s
	ip -n "$GS_B" link set dev "$GS_DB" xdp obj "$BUILD/bpf/xmit.bpf.o" sec xdp
	id=$(xdp_id "$GS_B" "$GS_DB")
	run -1 ip netns exec "$GS_B" timeout 10 "$SINK" "$GS_DB" duration 1
	tb_expect "the other program is still there" "$(xdp_id "$GS_B" "$GS_DB")" -eq "$id"
	ip -n "$GS_B" link set dev "$GS_DB" xdp off

	# ARP and ICMP pass to the kernel while the sink counts
	sink_bg "$GS_TMP/sink.json" duration 30 -j
	run timeout 10 ip netns exec "$GS_A" ping -c 5 -i 0.05 -W 1 192.0.2.2
	tb_expect "ping through the sink's device" "$status" -eq 0
	gen count 1000 dst 192.0.2.2 >/dev/null 2>&1
	sink_stop
	s=$(tail -n 1 "$GS_TMP/sink.json")
	tb_expect "frames without a probe counted" "$(jq .no_probe <<<"$s")" -ge 5
	tb_expect "probe frames counted" "$(jq .packets <<<"$s")" -eq 1000
}

@test "defaults: the device's MAC, the destination's neighbour entry; interval lines" {
	local n mac g
	# the generator's default dmac comes from its neighbour table
	ip -n "$GS_A" neigh replace 192.0.2.99 lladdr 02:78:6e:00:aa:bb dev "$GS_DA" nud permanent
	mac=$(ip -n "$GS_A" -j link show dev "$GS_DA" | jq -r '.[0].address')
	ip netns exec "$GS_B" ethtool -K "$GS_DB" gro on >/dev/null
	ip netns exec "$GS_B" timeout 20 tcpdump -i "$GS_DB" -Q in -n -e -c 5 udp port 9 \
		>"$GS_TMP/dump" 2>/dev/null 3>&- &
	GS_PIDS+=("$!")
	sleep 1
	gen count 5 rate 100 dst 192.0.2.99 >/dev/null 2>&1
	wait "${GS_PIDS[-1]}" || true
	cat "$GS_TMP/dump" >&2
	tb_expect "frames to the neighbour's MAC from the device's" \
		"$(grep -c "$mac > 02:78:6e:00:aa:bb" "$GS_TMP/dump")" -eq 5
	tb_expect "from the device's address" "$(grep -c '192.0.2.1.1024 > 192.0.2.99.9' "$GS_TMP/dump")" -eq 5

	# interval lines, then the result as the last line
	sink_bg "$GS_TMP/sink.json" interval 0.2 -j
	g=$(gen duration 1 rate 20000 -j 2>/dev/null)
	sink_stop
	n=$(jq -s '[.[] | select(.t_s != null and .pps != null)] | length' "$GS_TMP/sink.json")
	tb_expect "interval lines" "$n" -ge 3
	tb_expect "some interval saw the traffic" \
		"$(jq -s '[.[] | select(.t_s != null) | .pps] | max' "$GS_TMP/sink.json" | cut -d. -f1)" -ge 5000
	tb_expect "last line: the result" "$(tail -n 1 "$GS_TMP/sink.json" | jq .packets)" -eq "$(jq .sent <<<"$g")"
}
