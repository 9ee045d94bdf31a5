#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# netns.bats - xnf run inside a network namespace, both ways in:
#
#   ip netns exec NS xnf ...         a private mount namespace with a fresh
#                                    /sys: the host's /sys/fs/bpf is hidden,
#                                    /sys/class/net shows NS
#   nsenter --net=/run/netns/NS xnf  the host's mounts: its bpffs, and a
#                                    /sys/class/net that shows the host
#
# Under the first, xnf pins on the host's bpffs (through /proc/1/root) or
# refuses; under the second it reads devices, queues and threaded NAPI of
# NS, never of the /sys it sees. Same test bed as traffic.bats
# (testbed/testbed.bash), but the pins go to the host's bpffs, as
# an operator's would: a root of this test's own below /sys/fs/bpf
# (NS_ROOT), which teardown detaches, destroys and removes, even after a
# failure.
#
# PID 1. Under `ip netns exec` xnf reaches the host's bpffs as PID 1's
# root. The PID 1 of the machine that runs the tests may be out of every
# process's reach (a sandbox's init), so the tests that need it give xnf a
# PID namespace of their own (ns_exec): its PID 1 is a shell in a copy of
# the caller's mounts, which holds the host's bpffs, exactly as the host's
# init would. One test runs `ip netns exec` without it and accepts either
# outcome but the one this file exists for: exit 0 and nothing attached.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=180}"

load ../testbed/testbed

setup_file()
{
	local t
	TB_SKIP=$(tb_missing)
	for t in nsenter unshare mountpoint; do
		command -v "$t" >/dev/null 2>&1 || TB_SKIP=${TB_SKIP:-needs $t}
	done
	# Without an init that mounts it (no systemd here), the host's bpffs
	# is mounted for these tests and unmounted after them.
	NS_MOUNTED=
	if [ -z "$TB_SKIP" ] && [ -d /sys/fs/bpf ] &&
		[ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" != bpf_fs ] &&
		mount -t bpf bpf /sys/fs/bpf; then
		NS_MOUNTED=1
	fi
	[ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" = bpf_fs ] ||
		TB_SKIP=${TB_SKIP:-needs a bpffs mounted on /sys/fs/bpf}
	export TB_SKIP NS_MOUNTED
}

teardown_file()
{
	[ -z "${NS_MOUNTED:-}" ] || umount /sys/fs/bpf ||
		echo "teardown: cannot unmount /sys/fs/bpf" >&2
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	tb_setup
	NS_ROOT=/sys/fs/bpf/xnf-test-$BASHPID-$RANDOM
	[ ! -e "$NS_ROOT" ]
}

teardown()
{
	local dev
	if [ -n "${NS_ROOT:-}" ] && [ -d "$NS_ROOT" ]; then
		for dev in "$NS_ROOT"/dev/*; do
			[ -e "$dev" ] || continue
			ns_enter "$TB_DUT" detach "${dev##*/}" ||
				echo "teardown: detach ${dev##*/} failed" >&2
		done
		ns_enter "$TB_DUT" destroy || echo "teardown: destroy failed" >&2
		# What a failed destroy left: pins are files to bpffs.
		rm -rf -- "$NS_ROOT"
	fi
	tb_teardown
}

# ns_enter NS ARGS...: xnf ARGS in NS by nsenter, on the host's bpffs.
ns_enter()
{
	local ns=$1
	shift
	timeout "$TB_TIMEOUT" nsenter --net="/run/netns/$ns" \
		env XNF_PIN_ROOT="$NS_ROOT" "$XNF" "$@"
}

# ns_exec NS ARGS...: xnf ARGS by `ip netns exec NS`, below a PID 1 of
# this test's own (see the top). The shell stays PID 1: it runs a command
# after ip's, so it does not exec it.
ns_exec()
{
	local ns=$1
	shift
	timeout "$TB_TIMEOUT" unshare --pid --fork --kill-child --mount-proc \
		bash -c 'ip netns exec "$@"; exit $?' _ \
		"$ns" env XNF_PIN_ROOT="$NS_ROOT" "$XNF" "$@"
}

# ns_routes WAY: the test bed's routes (tb_routes), as one batch.
ns_routes()
{
	"$1" "$TB_DUT" -b - <<-EOB
		route add 198.51.100.0/24 via $TB_SINK4
		route add 192.0.2.0/24 via $TB_SRC4
		route add $TB_D04/32 local
		route add $TB_D14/32 local
	EOB
}

ns_devs()
{
	ns_enter "$TB_DUT" -j status | jq -c '[.devices[].dev] | sort'
}

# pair NS NAME QUEUES: a veth pair NAME0/NAME1 in NS, QUEUES queues each way.
pair()
{
	ip -n "$1" link add "${2}0" numrxqueues "$3" numtxqueues "$3" type veth \
		peer name "${2}1" numrxqueues "$3" numtxqueues "$3" &&
	ip -n "$1" link set "${2}0" up &&
	ip -n "$1" link set "${2}1" up
}

threaded() { tb_run "$1" cat "/sys/class/net/$2/threaded"; }

@test "ip netns exec: the attachment outlives the command, on the host's bpffs, and forwards" {
	local st k0 k1 before after

	run -0 ns_exec "$TB_DUT" attach d0 chain l3fwd
	run -0 ns_exec "$TB_DUT" attach d1 chain l3fwd
	run -0 ns_routes ns_exec

	# Later, from other processes: still attached, pinned on the host.
	tb_expect "XDP on d0" "$(tb_xdp_prog_id "$TB_DUT" d0)" != none
	tb_expect "XDP on d1" "$(tb_xdp_prog_id "$TB_DUT" d1)" != none
	tb_expect "d0's link pinned on the host's bpffs" \
		"$(test -e "$NS_ROOT/dev/d0/link" && echo yes)" = yes
	tb_expect "status by nsenter" "$(ns_devs)" = '["d0","d1"]'
	st=$(ns_exec "$TB_DUT" -j status | jq -c '[.devices[].dev] | sort')
	tb_expect "status by ip netns exec" "$st" = '["d0","d1"]'
	tb_expect "the program status names is on d0" \
		"$(ns_enter "$TB_DUT" -j status d0 | jq -r .prog_id)" = \
		"$(tb_xdp_prog_id "$TB_DUT" d0)"

	# Echo requests one way, replies the other: all by xnf.
	k0=$(tb_kfwd)
	before=$(ns_enter "$TB_DUT" -j stats)
	tb_ping_ok "$TB_SRC" $TB_SINK4 20
	after=$(ns_enter "$TB_DUT" -j stats)
	k1=$(tb_kfwd)
	tb_expect "d0 redirects" "$(tb_chain_delta "$before" "$after" d0 redirect)" -eq 20
	tb_expect "d1 redirects" "$(tb_chain_delta "$before" "$after" d1 redirect)" -eq 20
	tb_expect "kernel forwarded (v4 v6)" "$k1" = "$k0"

	# Detach both ways.
	run -0 ns_enter "$TB_DUT" detach d0
	tb_expect "no XDP on d0 after detach by nsenter" "$(tb_xdp_prog_id "$TB_DUT" d0)" = none
	run -0 ns_exec "$TB_DUT" detach d1
	tb_expect "no XDP on d1 after detach by ip netns exec" "$(tb_xdp_prog_id "$TB_DUT" d1)" = none
	run -0 ns_exec "$TB_DUT" destroy
	tb_expect "nothing left on the host's bpffs" \
		"$(test -e "$NS_ROOT" && echo present || echo none)" = none
}

# This machine's own PID 1: its bpffs is reached (attached, and it stays)
# or it cannot be (refused). Exit 0 with the attachment gone is the bug.
@test "ip netns exec without a PID namespace: attached for good, or refused" {
	run --separate-stderr timeout "$TB_TIMEOUT" ip netns exec "$TB_DUT" \
		env XNF_PIN_ROOT="$NS_ROOT" "$XNF" attach d0 chain l3fwd
	if [ "$status" -eq 0 ]; then
		tb_expect "XDP on d0 after the command" "$(tb_xdp_prog_id "$TB_DUT" d0)" != none
		tb_expect "status" "$(ns_devs)" = '["d0"]'
	else
		tb_expect "exit" "$status" -eq 1
		tb_expect "an error" "${stderr:0:7}" = "Error: "
		tb_expect "no XDP on d0" "$(tb_xdp_prog_id "$TB_DUT" d0)" = none
		tb_expect "no instance on the host" \
			"$(test -e "$NS_ROOT" && echo present || echo none)" = none
	fi
}

# No bpffs in the host's mount namespace (the PID 1 of this test's PID
# namespace unmounts its copy, which propagates nowhere): nothing would
# stay, so attach and status are refused, naming the fix.
@test "ip netns exec with no bpffs on the host: refused, naming nsenter" {
	local cmd='umount /sys/fs/bpf || exit 9; ip netns exec "$@"; exit $?'

	run --separate-stderr timeout "$TB_TIMEOUT" unshare --pid --fork --kill-child \
		--mount-proc bash -c "$cmd" _ "$TB_DUT" env XNF_PIN_ROOT="$NS_ROOT" \
		"$XNF" -j attach d0 chain l3fwd
	tb_expect "attach: exit" "$status" -eq 1
	tb_expect "attach: one JSON error" "$(jq -c '[keys, .schema]' <<<"$output")" = '[["error","schema"],"xnf/error/1"]'
	tb_expect "attach: the fix is named" \
		"$(jq '.error | contains("nsenter --net=")' <<<"$output")" = true
	tb_expect "no XDP on d0" "$(tb_xdp_prog_id "$TB_DUT" d0)" = none
	tb_expect "no instance on the host" \
		"$(test -e "$NS_ROOT" && echo present || echo none)" = none

	run --separate-stderr timeout "$TB_TIMEOUT" unshare --pid --fork --kill-child \
		--mount-proc bash -c "$cmd" _ "$TB_DUT" env XNF_PIN_ROOT="$NS_ROOT" \
		"$XNF" status
	tb_expect "status: exit" "$status" -eq 1
	tb_expect "status: an error" "${stderr:0:7}" = "Error: "
	run -0 mountpoint -q /sys/fs/bpf
}

# ns_sandbox SCRIPT ARGS...: bash SCRIPT below a PID 1 out of this
# process's reach, as a sandbox's or a container's init is to a shell in
# it: PID 1 is not dumpable and the script runs without CAP_SYS_PTRACE, so
# /proc/1/ns/mnt cannot be read. Its mount namespace (a copy of this one)
# ends with it, and every mount and pin in it.
ns_sandbox()
{
	local script=$1
	shift
	timeout "$TB_TIMEOUT" unshare --pid --fork --kill-child --mount-proc \
		python3 -c 'import ctypes, subprocess, sys
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
sys.exit(subprocess.call(sys.argv[1:]))' \
		setpriv --bounding-set=-sys_ptrace -- bash -c "$script" _ "$@"
}

# The same without a bpffs, where PID 1's mount namespace cannot be
# compared with this one: each way in says what works from it, never the
# way already taken. `ip netns exec` names the `nsenter --net` of this
# namespace; that one (the shell's mount namespace) mounts the bpffs and
# attaches; a mount namespace the shell does not share (`unshare -m`) is
# refused, since what it mounts would vanish with the command.
@test "no bpffs, PID 1 out of reach: ip netns exec names nsenter --net, which attaches" {
	local out=$BATS_TEST_TMPDIR
	# shellcheck disable=SC2016 # expanded by the sandbox's bash
	local script='
		ns=$1 out=$2
		xnf=(env XNF_PIN_ROOT="$3" "$4")
		enter=(nsenter --net="/run/netns/$ns")
		umount /sys/fs/bpf || exit 9
		stat -L /proc/1/ns/mnt >/dev/null 2>&1 && exit 8
		ip netns exec "$ns" "${xnf[@]}" -j attach d0 chain l3fwd >"$out/exec.json"
		echo "exec $?"
		"${enter[@]}" unshare -m --propagation private "${xnf[@]}" attach d0 chain l3fwd
		echo "unshare $?"
		"${enter[@]}" "${xnf[@]}" attach d0 chain l3fwd
		echo "nsenter $?"
		ip -n "$ns" -j link show d0 | jq -r "\"xdp \" + (.[0].xdp.prog.id // \"none\" | tostring)"
		"${enter[@]}" "${xnf[@]}" -j status | jq -r "\"status \" + ([.devices[].dev] | join(\",\"))"
		"${enter[@]}" "${xnf[@]}" detach d0 && "${enter[@]}" "${xnf[@]}" destroy
		echo "detach $?"'

	run --separate-stderr ns_sandbox "$script" "$TB_DUT" "$out" "$NS_ROOT" "$XNF"
	echo "$output"
	echo "$stderr"
	tb_expect "the sandbox ran" "$status" -eq 0
	tb_expect "ip netns exec: refused" "$(grep '^exec ' <<<"$output")" = "exec 1"
	tb_expect "ip netns exec: one JSON error" \
		"$(jq -c '[keys, .schema]' "$out/exec.json")" = '[["error","schema"],"xnf/error/1"]'
	tb_expect "ip netns exec: the command that works, for this namespace" \
		"$(jq --arg c "nsenter --net=/run/netns/$TB_DUT " '.error | contains($c)' "$out/exec.json")" = true
	tb_expect "unshare -m: refused" "$(grep '^unshare ' <<<"$output")" = "unshare 1"
	tb_expect "nsenter --net: attached" "$(grep '^nsenter ' <<<"$output")" = "nsenter 0"
	tb_expect "XDP on d0 meanwhile" "$(grep '^xdp ' <<<"$output")" != "xdp none"
	tb_expect "status by nsenter --net" "$(grep '^status ' <<<"$output")" = "status d0"
	tb_expect "detach and destroy" "$(grep '^detach ' <<<"$output")" = "detach 0"
	tb_expect "nothing left on d0" "$(tb_xdp_prog_id "$TB_DUT" d0)" = none
	run -0 mountpoint -q /sys/fs/bpf
}

# nsenter keeps the host's /sys: it shows the host's devices, or (inside
# `ip netns exec SRC`) the source namespace's nq0, which has 2 queues to
# the DUT's 3. Every count and setting must be the DUT's.
@test "nsenter --net: plan, a placed attach and a worker see this namespace's device" {
	local js other="ip netns exec $TB_SRC nsenter --net=/run/netns/$TB_DUT"

	pair "$TB_DUT" nq 3
	pair "$TB_SRC" nq 2

	js=$(ns_enter "$TB_DUT" -j plan nq0)
	tb_expect "plan: queues of the DUT's nq0" "$(jq .queues_now <<<"$js")" -eq 3
	tb_expect "plan: threaded NAPI off" "$(jq .threaded_napi <<<"$js")" = false
	js=$($other env XNF_PIN_ROOT="$NS_ROOT" "$XNF" -j plan nq0)
	tb_expect "plan under another namespace's /sys" "$(jq .queues_now <<<"$js")" -eq 3

	# No IRQs on a veth: the placement turns threaded NAPI on and pins
	# the napi threads, on the DUT's nq0 only.
	run -0 ns_enter "$TB_DUT" attach nq0 chain l3fwd cores auto
	tb_expect "threaded on the DUT's nq0" "$(threaded "$TB_DUT" nq0)" = 1
	tb_expect "threaded on the source's nq0" "$(threaded "$TB_SRC" nq0)" = 0
	js=$(ns_enter "$TB_DUT" -j plan nq0)
	tb_expect "no drift" "$(jq -c .applied.drift <<<"$js")" = "[]"
	tb_expect "3 napi threads placed" "$(jq '[.applied.queues[] | select(.napi_id > 0)] | length' <<<"$js")" -eq 3
	js=$($other env XNF_PIN_ROOT="$NS_ROOT" "$XNF" -j plan nq0)
	tb_expect "threaded read under another namespace's /sys" \
		"$(jq .threaded_napi <<<"$js")" = true
	run -0 ns_enter "$TB_DUT" detach nq0
	tb_expect "threaded off again" "$(threaded "$TB_DUT" nq0)" = 0

	# A worker counts the DUT's queues: one per queue.
	run -0 ns_enter "$TB_DUT" attach nq0 chain xsk
	run -0 --separate-stderr ns_enter "$TB_DUT" -j worker nq0 nf macswap duration 2
	tb_expect "workers" "$(jq '.workers | length' <<<"$output")" -eq 3
	run -0 ns_enter "$TB_DUT" detach nq0
	tb_expect "no XDP on nq0" "$(tb_xdp_prog_id "$TB_DUT" nq0)" = none
}
