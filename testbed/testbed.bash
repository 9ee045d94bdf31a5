# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# testbed.bash - the source / DUT / sink test bed of the traffic tests, of
# `make demo` and of the benchmarks, in one place:
#
#   [src ns] s0 --veth-- d0 [dut ns] d1 --veth-- k0 [sink ns]
#
#   src   s0 192.0.2.1/24     2001:db8:1::1/64   default via the DUT
#   dut   d0 192.0.2.254/24   2001:db8:1::fe/64  forwarding on (so that the
#         d1 198.51.100.254/24 2001:db8:2::fe/64 kernel forwards once xnf
#                                                 is detached)
#   sink  k0 198.51.100.1/24  2001:db8:2::1/64   default via the DUT
#
# Isolation: every test bed has its own three network namespaces, named
# $TB_NAME-<owner>-<tag>-{src,dut,sink} (xnf-<pid>-<random>-... unless the
# caller names them, below); the veth pairs are created directly in them,
# so the root namespace's devices and routes are never touched and no
# frame leaves the three namespaces. Addresses come only from the
# documentation ranges. IPv6 addresses are nodad and every neighbour is
# static (nud permanent), so nothing waits for ARP, ND or DAD.
#
# Pins: `ip netns exec` remounts /sys, which hides /sys/fs/bpf, and a bpffs
# mounted in its private mount namespace would die with the command (and
# detach xnf with it). So a private bpffs is mounted on a temporary
# directory in the caller's mount namespace, which `ip netns exec` keeps
# visible, and xnf runs in the DUT with XNF_PIN_ROOT pointing into it.
#
# Every command that could hang runs under `timeout`; every background
# process is started by tb_bg and killed by its pid in tb_teardown.
# tb_teardown undoes exactly what tb_setup did, in reverse, and may be
# called more than once or after a partial setup.
#
# Busy machines: nothing here assumes how long anything takes. A helper
# that needs something to have happened (a socket listening, replies
# back, a counter reached) polls for it with tb_until, whose deadline
# (TB_WAIT) only guards against a hang and is never what a test measures;
# the helper returns as soon as the condition holds. What a test expects
# to be lost is counted where it is dropped (tb_link for a veth's own
# counters), never inferred from a wait that ran out
# (docs/testing.md#exact-counts-on-a-busy-machine).
#
# Callers: selftests/*.bats (setup/teardown), scripts/demo.sh and
# tools/bench/exporter_cost.sh (trap), testbed/scaleout.bash (the
# scale-out bed), testbed/bench.bash (the benchmarks' beds) and, through
# testbed/tb and testbed/testbed.py, the Python harness in tools/bench/.

TB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
XNF=${XNF:-$TB_TOP/build/xnf}
TB_BPF_DIR=${TB_BPF_DIR:-$(dirname "$XNF")/bpf}
# Seconds any single command may take before it counts as hung.
TB_TIMEOUT=${TB_TIMEOUT:-60}
# Seconds a condition may take to come true before a wait gives up
# (tb_until); below TB_TIMEOUT, so that a command that waits inside
# (ping -w) ends by itself first.
TB_WAIT=${TB_WAIT:-30}

# Addresses and MACs of the test bed (locally administered MACs, fixed so
# that static neighbours can be written before any frame is sent).
TB_SRC4=192.0.2.1        TB_SRC6=2001:db8:1::1
TB_D04=192.0.2.254       TB_D06=2001:db8:1::fe
TB_D14=198.51.100.254    TB_D16=2001:db8:2::fe
TB_SINK4=198.51.100.1    TB_SINK6=2001:db8:2::1
TB_MAC_S0=02:78:6e:00:00:01
TB_MAC_D0=02:78:6e:00:00:02
TB_MAC_D1=02:78:6e:00:00:03
TB_MAC_K0=02:78:6e:00:00:04

# Device names. A harness that runs several test beds at once names them
# apart (testbed/bench.bash): a napi kernel thread is named after its
# device (napi/<dev>-<id>), whatever its namespace.
TB_S0=${TB_S0:-s0} TB_D0=${TB_D0:-d0} TB_D1=${TB_D1:-d1} TB_K0=${TB_K0:-k0}

# Names: namespaces $TB_NAME-<id>-{src,dut,sink} and the temporary
# directory /tmp/$TB_TMP_NAME-<id>-XXXXXX, where <id> is
# $TB_OWNER-<5 random hex digits> (TB_TAG), TB_OWNER the pid the test bed
# belongs to (default: this shell's). No dots: libbpf turns them into '_'
# in a pin path it builds (bpftool's pinmaps).
TB_NAME=${TB_NAME:-xnf}
TB_TMP_NAME=${TB_TMP_NAME:-xnf-test}
TB_OWNER=${TB_OWNER:-$$}

# Exported by tb_setup, so that the tests of a bats file whose setup_file
# built the test bed see it (bats sources this file again for every test).
TB_SRC=${TB_SRC:-} TB_DUT=${TB_DUT:-} TB_SINK=${TB_SINK:-} TB_TMP=${TB_TMP:-}
# Only the process that ran tb_setup tears down what these list.
TB_BPFFS=
TB_NS=()        # namespaces this test bed created
TB_PIDS=()      # background processes it started
TB_ECHO_PIDS=() # tb_udp_echo_start's client and server

tb_log()
{
	[ -n "${TB_VERBOSE:-}" ] || return 0
	printf '%s\n' "$*" >&2
}

# tb_run NS CMD...: CMD in namespace NS, bounded by TB_TIMEOUT.
tb_run()
{
	local ns=$1
	shift
	timeout "$TB_TIMEOUT" ip netns exec "$ns" "$@"
}

tb_src() { tb_run "$TB_SRC" "$@"; }
tb_dut() { tb_run "$TB_DUT" "$@"; }
tb_sink() { tb_run "$TB_SINK" "$@"; }

# tb_xnf ARGS...: build/xnf in the DUT with the test bed's pin root.
tb_xnf()
{
	timeout "$TB_TIMEOUT" ip netns exec "$TB_DUT" \
		env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" "$@"
}

# tb_snapshot: everything an operator can read back from xnf, as JSON, and
# the exit status: one xnf process running the show commands as a batch.
# Equal before and after a refusal, since a refusal changes nothing. The
# firewall's hit counters are left out: they are no configuration, and
# its default policy counts what the kernel sends on its own meanwhile
# (IPv6 router solicitations, MLD reports).
tb_snapshot()
{
	local out st
	out=$(printf '%s\n' "route show" "fw show" "nat show" "fdb show" "xconnect show" \
		"status" "config show" | tb_xnf -j -b - 2>&1)
	st=$?
	jq -c 'if .schema == "xnf/fw/1" then
			del(.default_packets, .default_bytes) |
			.rules |= map(del(.packets, .bytes))
		else . end' <<<"$out" 2>/dev/null || printf '%s\n' "$out"
	echo "exit $st"
}

# tb_xnf_killed SIGNAL DURATION ARGS...: xnf killed by SIGNAL after
# DURATION (for the "killed at any point" test); returns timeout's status.
tb_xnf_killed()
{
	local sig=$1 dur=$2
	shift 2
	timeout -s "$sig" "$dur" ip netns exec "$TB_DUT" \
		env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" "$@"
}

# tb_bg NS CMD...: CMD in NS in the background, killed by tb_teardown.
# Sets TB_BG_PID. The command must bound itself (timeout, -c, -T).
tb_bg()
{
	local ns=$1
	shift
	# fd 3 is bats' output channel: a background child holding it
	# open would make bats wait for it.
	ip netns exec "$ns" "$@" 3>&- &
	TB_BG_PID=$!
	TB_PIDS+=("$TB_BG_PID")
}

# tb_until WHAT CMD...: runs CMD every 50 ms until it succeeds, for at most
# TB_WAIT seconds; then fails, saying it gave up waiting for WHAT. It
# returns as soon as CMD succeeds: the deadline is a guard against a hang,
# generous because a busy machine may delay anything by seconds.
tb_until()
{
	local what=$1 end=$((SECONDS + TB_WAIT))
	shift
	until "$@"; do
		if ((SECONDS >= end)); then
			echo "gave up after $TB_WAIT s waiting for $what" >&2
			return 1
		fi
		sleep 0.05
	done
}

# ---- probes: 0 when the feature is there ----------------------------------

tb_probe_root() { [ "$(id -u)" -eq 0 ]; }

tb_probe_tools()
{
	local t
	for t in ip ss jq timeout ethtool ping socat tcpdump bpftool mount mountpoint; do
		command -v "$t" >/dev/null 2>&1 || { echo "$t"; return 1; }
	done
}

tb_probe_netns()
{
	local ns="xnf-$$-$RANDOM-probe" ok=1
	ip netns add "$ns" 2>/dev/null || return 1
	ip -n "$ns" link add p0 type veth peer name p1 2>/dev/null && ok=0
	ip netns del "$ns"
	return $ok
}

tb_probe_bpffs()
{
	local d ok=1
	d=$(mktemp -d /tmp/xnf-probe.XXXXXX) || return 1
	mount -t bpf bpf "$d" 2>/dev/null && { ok=0; umount "$d"; }
	rmdir "$d"
	return $ok
}

# Native XDP on veth, with a program xnf did not write (build/bpf/xmit.bpf.o).
tb_probe_xdp()
{
	local ns="xnf-$$-$RANDOM-probe" ok=1
	ip netns add "$ns" 2>/dev/null || return 1
	if ip -n "$ns" link add p0 type veth peer name p1 2>/dev/null &&
	   ip -n "$ns" link set dev p0 xdp obj "$TB_BPF_DIR/xmit.bpf.o" sec xdp \
		2>/dev/null; then
		ok=0
	fi
	ip netns del "$ns"
	return $ok
}

# 802.1Q devices.
tb_probe_vlan()
{
	local ns="xnf-$$-$RANDOM-probe" ok=1
	ip netns add "$ns" 2>/dev/null || return 1
	ip -n "$ns" link add p0 type veth peer name p1 2>/dev/null &&
		ip -n "$ns" link add link p0 name p0.7 type vlan id 7 2>/dev/null &&
		ok=0
	ip netns del "$ns"
	return $ok
}

# Why the test bed cannot be built here, or nothing.
tb_missing()
{
	local t
	tb_probe_root || { echo "needs root"; return; }
	t=$(tb_probe_tools) || { echo "needs $t"; return; }
	[ -x "$XNF" ] || { echo "needs $XNF (run make)"; return; }
	tb_probe_netns || { echo "kernel without network namespaces or veth"; return; }
	tb_probe_bpffs || { echo "cannot mount bpffs"; return; }
	[ -e "$TB_BPF_DIR/xmit.bpf.o" ] || { echo "needs $TB_BPF_DIR/xmit.bpf.o (run make)"; return; }
	tb_probe_xdp || { echo "kernel without native XDP on veth"; return; }
}

# ---- setup / teardown ------------------------------------------------------

# Namespace-wide settings, before any device exists: no DAD and no router
# solicitations. (MLD reports still go out for a second or so after a link
# comes up: counters of passes to the kernel are compared with -ge.)
tb_ns_new()
{
	local ns=$1
	ip netns add "$ns" || return 1
	TB_NS+=("$ns")
	ip -n "$ns" link set lo up || return 1
	tb_run "$ns" sysctl -q -w net.ipv6.conf.default.accept_dad=0 \
		net.ipv6.conf.all.accept_dad=0 \
		net.ipv6.conf.default.router_solicitations=0 \
		net.ipv6.conf.all.router_solicitations=0 >/dev/null
}

# tb_base: what every test bed has, without devices: its names, exported
# (TB_SRC, TB_DUT, TB_SINK, the namespaces; TB_TAG), its temporary
# directory (TB_TMP) with a private bpffs (XNF_PIN_ROOT points into it),
# and the three namespaces.
tb_base()
{
	local id i
	for i in 1 2 3 4 5; do
		TB_TAG=$(printf '%05x' $((RANDOM << 5 | RANDOM % 32)))
		id="$TB_OWNER-$TB_TAG"
		[ -e "/run/netns/$TB_NAME-$id-src" ] ||
			[ -e "/run/netns/$TB_NAME-$id-dut" ] ||
			[ -e "/run/netns/$TB_NAME-$id-sink" ] || break
	done
	TB_SRC="$TB_NAME-$id-src" TB_DUT="$TB_NAME-$id-dut" TB_SINK="$TB_NAME-$id-sink"
	export TB_SRC TB_DUT TB_SINK TB_TAG

	TB_TMP=$(mktemp -d "/tmp/$TB_TMP_NAME-$id-XXXXXX") || return 1
	export TB_TMP
	TB_BPFFS="$TB_TMP/bpffs"
	mkdir -m 0700 "$TB_BPFFS" || return 1
	mount -t bpf -o mode=0700 bpf "$TB_BPFFS" || { TB_BPFFS=; return 1; }
	export XNF_PIN_ROOT="$TB_BPFFS/xnf"

	tb_ns_new "$TB_SRC" && tb_ns_new "$TB_DUT" && tb_ns_new "$TB_SINK"
}

# tb_setup: builds the test bed (tb_base, then tb_veths). Attaches
# nothing: see tb_attach_both / tb_routes.
tb_setup()
{
	tb_base && tb_veths
}

# tb_veths: the two veth pairs drawn above, named TB_S0, TB_D0, TB_D1,
# TB_K0, addressed, with routes and static neighbours; the DUT forwards.
tb_veths()
{
	# The pairs are born in their namespaces: nothing in the root one.
	ip -n "$TB_SRC" link add "$TB_S0" address $TB_MAC_S0 type veth \
		peer name "$TB_D0" address $TB_MAC_D0 netns "$TB_DUT" || return 1
	ip -n "$TB_SINK" link add "$TB_K0" address $TB_MAC_K0 type veth \
		peer name "$TB_D1" address $TB_MAC_D1 netns "$TB_DUT" || return 1

	ip -n "$TB_SRC" addr add $TB_SRC4/24 dev "$TB_S0" &&
	ip -n "$TB_SRC" addr add $TB_SRC6/64 dev "$TB_S0" nodad &&
	ip -n "$TB_DUT" addr add $TB_D04/24 dev "$TB_D0" &&
	ip -n "$TB_DUT" addr add $TB_D06/64 dev "$TB_D0" nodad &&
	ip -n "$TB_DUT" addr add $TB_D14/24 dev "$TB_D1" &&
	ip -n "$TB_DUT" addr add $TB_D16/64 dev "$TB_D1" nodad &&
	ip -n "$TB_SINK" addr add $TB_SINK4/24 dev "$TB_K0" &&
	ip -n "$TB_SINK" addr add $TB_SINK6/64 dev "$TB_K0" nodad || return 1

	ip -n "$TB_SRC" link set "$TB_S0" up &&
	ip -n "$TB_DUT" link set "$TB_D0" up &&
	ip -n "$TB_DUT" link set "$TB_D1" up &&
	ip -n "$TB_SINK" link set "$TB_K0" up || return 1

	ip -n "$TB_SRC" route add default via $TB_D04 &&
	ip -n "$TB_SRC" -6 route add default via $TB_D06 &&
	ip -n "$TB_SINK" route add default via $TB_D14 &&
	ip -n "$TB_SINK" -6 route add default via $TB_D16 || return 1

	ip -n "$TB_SRC" neigh replace $TB_D04 lladdr $TB_MAC_D0 dev "$TB_S0" nud permanent &&
	ip -n "$TB_SRC" neigh replace $TB_D06 lladdr $TB_MAC_D0 dev "$TB_S0" nud permanent &&
	ip -n "$TB_DUT" neigh replace $TB_SRC4 lladdr $TB_MAC_S0 dev "$TB_D0" nud permanent &&
	ip -n "$TB_DUT" neigh replace $TB_SRC6 lladdr $TB_MAC_S0 dev "$TB_D0" nud permanent &&
	ip -n "$TB_DUT" neigh replace $TB_SINK4 lladdr $TB_MAC_K0 dev "$TB_D1" nud permanent &&
	ip -n "$TB_DUT" neigh replace $TB_SINK6 lladdr $TB_MAC_K0 dev "$TB_D1" nud permanent &&
	ip -n "$TB_SINK" neigh replace $TB_D14 lladdr $TB_MAC_D1 dev "$TB_K0" nud permanent &&
	ip -n "$TB_SINK" neigh replace $TB_D16 lladdr $TB_MAC_D1 dev "$TB_K0" nud permanent ||
		return 1

	tb_dut sysctl -q -w net.ipv4.ip_forward=1 \
		net.ipv6.conf.all.forwarding=1 >/dev/null || return 1

	# A frame redirected into a veth is received by its peer in NAPI,
	# which a veth runs only with an XDP program or GRO on. And a veth
	# hands its peer's XDP program frames whose L4 checksum is still
	# to be filled in (CHECKSUM_PARTIAL, tx offload): the kernel path
	# completes it on the way out, an XDP redirect cannot know it must.
	# Real NICs deliver complete checksums, so the hosts compute theirs.
	tb_src ethtool -K "$TB_S0" gro on tx off >/dev/null &&
	tb_sink ethtool -K "$TB_K0" gro on tx off >/dev/null || return 1
	tb_log "test bed: $TB_SRC | $TB_DUT | $TB_SINK, pins $XNF_PIN_ROOT"
}

# tb_adopt: makes this process the one that tears down the test bed
# another built, named by TB_SRC, TB_DUT, TB_SINK and TB_TMP (testbed/tb
# down). Its background processes are the builder's to end.
tb_adopt()
{
	local ns
	TB_NS=()
	for ns in "$TB_SRC" "$TB_DUT" "$TB_SINK"; do
		[ -n "$ns" ] && [ -e "/run/netns/$ns" ] && TB_NS+=("$ns")
	done
	TB_BPFFS=
	if [ -n "$TB_TMP" ] && mountpoint -q "$TB_TMP/bpffs"; then
		TB_BPFFS="$TB_TMP/bpffs"
		export XNF_PIN_ROOT="$TB_BPFFS/xnf"
	fi
}

# tb_teardown: kills the background processes, detaches xnf, removes the
# namespaces (and with them the veth pairs), unmounts the bpffs and removes
# the temporary directory. Safe after a partial setup and when called twice.
tb_teardown()
{
	local pid dev ns

	# Some have ended by themselves already: their kill fails.
	for pid in "${TB_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${TB_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	TB_PIDS=()

	if [ -n "$TB_BPFFS" ] && [ -d "$XNF_PIN_ROOT/dev" ] && [ -n "$TB_DUT" ] &&
	   [ -e "/run/netns/$TB_DUT" ]; then
		for dev in "$XNF_PIN_ROOT"/dev/*; do
			[ -e "$dev" ] || continue
			tb_xnf detach "${dev##*/}" ||
				echo "teardown: xnf detach ${dev##*/} failed" >&2
		done
		tb_xnf destroy || echo "teardown: xnf destroy failed" >&2
	fi
	for ns in "${TB_NS[@]}"; do
		ip netns del "$ns" || echo "teardown: cannot delete netns $ns" >&2
	done
	TB_NS=()
	if [ -n "$TB_BPFFS" ]; then
		umount "$TB_BPFFS" || echo "teardown: cannot unmount $TB_BPFFS" >&2
		TB_BPFFS=
	fi
	if [ -n "$TB_TMP" ] && [ -d "$TB_TMP" ]; then
		if mountpoint -q "$TB_TMP/bpffs"; then
			echo "teardown: $TB_TMP/bpffs still mounted, kept" >&2
		else
			rm -rf -- "$TB_TMP"
		fi
	fi
	TB_TMP=
}

# tb_json_base BED: the names every test bed has, as one JSON object (for
# testbed/tb up).
tb_json_base()
{
	jq -n --arg bed "$1" --arg src "$TB_SRC" --arg dut "$TB_DUT" \
		--arg sink "$TB_SINK" --arg tmp "$TB_TMP" --arg bpffs "$TB_BPFFS" \
		--arg pin_root "$XNF_PIN_ROOT" --arg tag "$TB_TAG" \
		'{bed: $bed, src: $src, dut: $dut, sink: $sink, tmp: $tmp,
		  bpffs: $bpffs, pin_root: $pin_root, tag: $tag}'
}

# tb_json BED: the test bed of tb_setup as one JSON object: tb_json_base,
# its devices, addresses and MACs by the names of the drawing above.
tb_json()
{
	tb_json_base "$1" | jq \
		--arg s0 "$TB_S0" --arg d0 "$TB_D0" --arg d1 "$TB_D1" --arg k0 "$TB_K0" \
		--arg src4 $TB_SRC4 --arg src6 $TB_SRC6 --arg d04 $TB_D04 \
		--arg d06 $TB_D06 --arg d14 $TB_D14 --arg d16 $TB_D16 \
		--arg sink4 $TB_SINK4 --arg sink6 $TB_SINK6 \
		--arg mac_s0 $TB_MAC_S0 --arg mac_d0 $TB_MAC_D0 \
		--arg mac_d1 $TB_MAC_D1 --arg mac_k0 $TB_MAC_K0 \
		'. + {dev: {s0: $s0, d0: $d0, d1: $d1, k0: $k0},
		      addr: {src4: $src4, src6: $src6, d04: $d04, d06: $d06,
			     d14: $d14, d16: $d16, sink4: $sink4, sink6: $sink6},
		      mac: {s0: $mac_s0, d0: $mac_d0, d1: $mac_d1, k0: $mac_k0}}'
}

# ---- xnf in the DUT --------------------------------------------------------

# tb_attach_both CHAIN [ARGS...]: xnf on d0 and d1 (TB_D0, TB_D1) with CHAIN.
tb_attach_both()
{
	tb_xnf attach "$TB_D0" chain "$@" && tb_xnf attach "$TB_D1" chain "$@"
}

# tb_routes: xnf routes to both sides, v4 and v6, via the static neighbours,
# and the DUT's own addresses as local routes (to its kernel).
tb_routes()
{
	tb_xnf route add 198.51.100.0/24 via $TB_SINK4 &&
	tb_xnf route add 192.0.2.0/24 via $TB_SRC4 &&
	tb_xnf route add 2001:db8:2::/64 via $TB_SINK6 &&
	tb_xnf route add 2001:db8:1::/64 via $TB_SRC6 &&
	tb_xnf route add $TB_D04/32 local &&
	tb_xnf route add $TB_D14/32 local &&
	tb_xnf route add $TB_D06/128 local &&
	tb_xnf route add $TB_D16/128 local
}

# tb_foreign_pair: a veth pair f0/f1 in the DUT that xnf does not own,
# with a program of someone else's on f0 (build/bpf/xmit.bpf.o, generic
# mode); exports its id as FOREIGN_ID. An attach to f0 passes every check
# of xnf and is refused by the kernel.
tb_foreign_pair()
{
	ip -n "$TB_DUT" link add f0 type veth peer name f1 &&
	ip -n "$TB_DUT" link set f0 up &&
	ip -n "$TB_DUT" link set f1 up &&
	ip -n "$TB_DUT" link set dev f0 xdpgeneric obj "$TB_BPF_DIR/xmit.bpf.o" sec xdp ||
		return 1
	FOREIGN_ID=$(tb_xdp_prog_id "$TB_DUT" f0)
	export FOREIGN_ID
}

# tb_testbed_up CHAIN [ARGS...]: setup, attach both ports, add routes.
tb_testbed_up()
{
	tb_setup && tb_attach_both "$@" && tb_routes
}

# ---- counters ----------------------------------------------------------------

tb_stats_json() { tb_xnf -j stats "$@"; }

# tb_stat JSON DEV JQ: JQ applied to the object of DEV in the output of
# `xnf -j stats`, e.g. '.pass_reasons.no_route'.
tb_stat()
{
	local json=$1 dev=$2 expr=$3
	jq -e --arg d "$dev" ".devices[] | select(.dev == \$d) | $expr" \
		<<<"$json"
}

# tb_chain JSON DEV FIELD: in / pass / drop / redirect (or *_bytes) of the
# whole chain of DEV.
tb_chain()
{
	tb_stat "$1" "$2" ".nfs[] | select(.nf == \"chain\") | .$3"
}

# tb_delta BEFORE AFTER DEV JQ: how much a counter grew between two
# `xnf -j stats` outputs.
tb_delta()
{
	local a b
	a=$(tb_stat "$1" "$3" "$4") && b=$(tb_stat "$2" "$3" "$4") || return 1
	echo $((b - a))
}

tb_chain_delta()
{
	tb_delta "$1" "$2" "$3" ".nfs[] | select(.nf == \"chain\") | .$4"
}

# tb_link NS DEV FIELD: a counter of DEV from `ip -s -j link`, FIELD one
# of rx.packets, rx.bytes, rx.dropped, tx.packets, tx.dropped, ...
#
# Where a veth loses frames: the ring toward its peer (256 frames, emptied
# by the peer's NAPI, which runs its XDP program) is full, because the
# peer's softirq is behind (a busy machine defers it to ksoftirqd). The
# sending device counts each such frame once in tx_dropped, whether an XDP
# redirect (ethtool -S: tx_queue_N_xdp_xmit_errors) or the kernel's stack
# sent it; a redirected one also shows in the peer's rx_dropped (the same
# frames: add one side only). A frame that got into the ring is counted in
# the peer's rx_packets once its XDP program has run on it. So for traffic
# from A to its peer B: sent = B's rx_packets + A's tx_dropped, exactly.
tb_link()
{
	ip -n "$1" -s -j link show dev "$2" | jq -e ".[0].stats64.$3"
}

# ---- traffic (all bounded) ---------------------------------------------------

# tb_ping FROM_NS DST COUNT [ping args]: ping -q, prints "sent received";
# waits for every reply, at most TB_WAIT seconds. (Without -w, ping counts
# a reply that comes more than twice the slowest round trip after the last
# request as lost: on a busy machine the last one often is.)
tb_ping()
{
	local ns=$1 dst=$2 n=$3 out
	shift 3
	# ping exits 1 when a reply is missing: the numbers tell.
	out=$(tb_run "$ns" ping -q -n -c "$n" -i 0.01 -w "$TB_WAIT" "$@" "$dst") || true
	awk '/packets transmitted/ { print $1, $4 }' <<<"$out"
}

# tb_ping_unanswered FROM_NS DST COUNT: COUNT echo requests that must get
# no reply (dropped on the way, which the caller checks by the counter
# that counts the drop); prints "sent received". Waits a second after
# the last one: a reply that comes later goes unseen, so this can only
# miss a wrong reply, never report one that was not there.
tb_ping_unanswered()
{
	local ns=$1 dst=$2 n=$3 out
	out=$(tb_run "$ns" ping -q -n -c "$n" -i 0.01 -W 1 "$dst") || true
	awk '/packets transmitted/ { print $1, $4 }' <<<"$out"
}

# tb_ping_ok FROM_NS DST COUNT [ping args]: all COUNT answered.
tb_ping_ok()
{
	local r n=$3
	r=$(tb_ping "$@")
	[ "$r" = "$n $n" ] || { echo "ping $2: sent/received $r, expected $n $n" >&2; return 1; }
}

# tb_udp_send NS DST PORT COUNT: COUNT datagrams, one per write, each
# "<i>\n" (bash /dev/udp: no process per datagram).
tb_udp_send()
{
	local ns=$1 dst=$2 port=$3 n=$4
	tb_run "$ns" bash -c '
		for ((i = 1; i <= $3; i++)); do
			echo "$i" >"/dev/udp/$1/$2" || exit 1
		done' _ "$dst" "$port" "$n"
}

# tb_udp_sink NS FAMILY PORT FILE: receives datagrams on PORT into FILE in
# the background for at most TB_TIMEOUT seconds (killed by tb_teardown).
tb_udp_sink()
{
	local ns=$1 fam=$2 port=$3 file=$4
	tb_bg "$ns" timeout "$TB_TIMEOUT" socat -u "UDP$fam-RECV:$port,reuseaddr" \
		"OPEN:$file,creat,append"
	tb_wait_udp_listen "$ns" "$port"
}

tb_udp_listens()
{
	tb_run "$1" ss -Hlnu "sport = :$2" | grep -q .
}

tb_wait_udp_listen()
{
	tb_until "a socket on udp port $2 in $1" tb_udp_listens "$1" "$2"
}

# tb_lines FILE: number of lines in FILE (0 when missing).
tb_lines()
{
	if [ -e "$1" ]; then wc -l <"$1"; else echo 0; fi
}

# tb_bg_stop PID: ends one background process of tb_bg and reaps it.
tb_bg_stop()
{
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

tb_has_lines()
{
	[ "$(tb_lines "$1")" -ge "$2" ]
}

# tb_wait_lines FILE N: until FILE has N lines (at most TB_WAIT seconds).
tb_wait_lines()
{
	tb_until "$2 lines in $1" tb_has_lines "$1" "$2"
}

# tb_udp_echo_start NS FAMILY DST PORT COUNT FILE: a UDP echo server
# (socat) on PORT in the sink, and from NS COUNT datagrams to it, the i-th
# holding the line "i", all over one socket; the lines echoed back are
# appended to FILE. Returns once they are sent (or on the way);
# tb_udp_echo_stop ends client and server. Each datagram is one write
# of bash's to a UDP socket: a socat client reading the lines from a pipe
# sends whatever piled up in the pipe as one datagram, and on a busy
# machine two lines would arrive, and be counted, as one packet.
tb_udp_echo_start()
{
	local ns=$1 fam=$2 dst=$3 port=$4 n=$5 file=$6
	: >"$file"
	tb_bg "$TB_SINK" timeout "$TB_TIMEOUT" socat -T "$TB_TIMEOUT" \
		"UDP$fam-LISTEN:$port,reuseaddr" PIPE
	TB_ECHO_PIDS=("$TB_BG_PID")
	tb_wait_udp_listen "$TB_SINK" "$port" || return 1
	# cat writes each datagram that comes back as soon as it is read.
	tb_bg "$ns" timeout "$TB_TIMEOUT" bash -c '
		exec 5<>"/dev/udp/$1/$2" || exit 1
		for ((i = 1; i <= $3; i++)); do
			echo "$i" >&5 || exit 1
		done
		exec cat <&5 >>"$4"' _ "$dst" "$port" "$n" "$file"
	TB_ECHO_PIDS+=("$TB_BG_PID")
}

tb_udp_echo_stop()
{
	local pid
	for pid in "${TB_ECHO_PIDS[@]}"; do
		tb_bg_stop "$pid"
	done
	TB_ECHO_PIDS=()
}

# tb_udp_echo NS FAMILY DST PORT COUNT: tb_udp_echo_start, then prints how
# many lines came back once all COUNT did (or TB_WAIT seconds passed). For
# datagrams that must not come back, use tb_udp_echo_start and wait for
# the counter that counts them dropped instead.
tb_udp_echo()
{
	local file="$TB_TMP/echo.$4.$RANDOM"
	tb_udp_echo_start "$@" "$file" && tb_wait_lines "$file" "$5"
	tb_udp_echo_stop
	tb_lines "$file"
}

# ---- the DUT's kernel --------------------------------------------------------

# tb_kfwd: datagrams the DUT's kernel forwarded so far, "IPv4 IPv6"; a
# path that xnf takes leaves both unchanged.
tb_kfwd()
{
	local v4 v6
	v4=$(tb_dut awk '$1 == "Ip:" && $2 != "Forwarding" { print $7 }' /proc/net/snmp)
	v6=$(tb_dut awk '$1 == "Ip6OutForwDatagrams" { print $2 }' /proc/net/snmp6)
	echo "${v4:-?} ${v6:-?}"
}

# tb_xdp_prog_id NS DEV: id of the XDP program on DEV, or "none".
tb_xdp_prog_id()
{
	ip -n "$1" -j link show dev "$2" | jq -r '.[0].xdp.prog.id // "none"'
}

# ---- captures ------------------------------------------------------------------

# tb_capture NS DEV COUNT FILE FILTER...: tcpdump of what DEV receives, in
# the background, until COUNT packets or TB_TIMEOUT; returns once it
# listens. Sets TB_CAPTURE_PID: `wait` for it before reading FILE.
tb_capture()
{
	local ns=$1 dev=$2 n=$3 file=$4
	shift 4
	tb_bg "$ns" timeout "$TB_TIMEOUT" tcpdump -i "$dev" -Q in -n -U \
		--immediate-mode -c "$n" -w "$file" "$@" 2>/dev/null
	# shellcheck disable=SC2034 # for the caller
	TB_CAPTURE_PID=$TB_BG_PID
	# tcpdump opens the file once the filter is in place.
	tb_until "tcpdump on $dev in $ns to start" test -s "$file"
}

# ---- assertions (for bats: a failing one fails the test) ---------------------

# tb_expect WHAT GOT OP WANT: OP is a test(1) integer operator (-eq, -ge,
# ...) or a string comparison (= or !=).
tb_expect()
{
	local what=$1 got=$2 op=$3 want=$4
	if [ "$op" = "=" ]; then
		[ "$got" = "$want" ] && return 0
	elif [ "$op" = "!=" ]; then
		[ "$got" != "$want" ] && return 0
	elif [[ "$got" =~ ^-?[0-9]+$ ]]; then
		case $op in
		-eq) ((got == want)) && return 0 ;;
		-ne) ((got != want)) && return 0 ;;
		-ge) ((got >= want)) && return 0 ;;
		-gt) ((got > want)) && return 0 ;;
		-le) ((got <= want)) && return 0 ;;
		-lt) ((got < want)) && return 0 ;;
		esac
	fi
	echo "FAIL: $what: got '$got', expected $op '$want'" >&2
	return 1
}

# ---- raw frames --------------------------------------------------------------

# tb_send_frame NS DEV HEX: one Ethernet frame, given as hex digits (spaces
# allowed), sent as it is from DEV through a packet socket.
tb_send_frame()
{
	local ns=$1 dev=$2 hex esc
	hex=$(tr -d ' \n' <<<"$3")
	esc=$(sed 's/../\\x&/g' <<<"$hex")
	# shellcheck disable=SC2059
	printf "$esc" | tb_run "$ns" socat -u STDIN "INTERFACE:$dev"
}

# tb_ipv4_csum HEX: the header checksum of an IPv4 header given as hex
# digits with its checksum field zero, as 4 hex digits.
tb_ipv4_csum()
{
	local hex sum=0 i
	hex=$(tr -d ' \n' <<<"$1")
	for ((i = 0; i < ${#hex}; i += 4)); do
		sum=$((sum + 16#${hex:i:4}))
	done
	while ((sum >> 16)); do
		sum=$(((sum & 0xffff) + (sum >> 16)))
	done
	printf '%04x' $((~sum & 0xffff))
}

# tb_mac_hex MAC: 02:78:6e:00:00:01 -> 02786e000001
tb_mac_hex() { tr -d : <<<"$1"; }
