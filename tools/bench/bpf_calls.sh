#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# bpf_calls.sh [XNF]: the bpf() calls each of a set of commands makes, as
# docs/library.md counts them: a network namespace with two veth pairs
# (m0/p0, m1/p1), a private bpffs, m1 attached with firewall,l3fwd,l2fwd,
# then each command under `strace -f -c -e trace=bpf`, in order. Prints
# "CALLS  COMMAND" lines. Needs root and strace; leaves nothing behind.
set -u
XNF=${1:-$(dirname "$0")/../../build/xnf}
XNF=$(realpath "$XNF")
NS=xnf-calls-$$
BPFFS=$(mktemp -d /tmp/xnf-calls-$$-XXXXXX)
TMP=$(mktemp -d /tmp/xnf-calls-$$-files-XXXXXX)
ROOT=$BPFFS/xnf

x() { ip netns exec "$NS" env XNF_PIN_ROOT="$ROOT" "$XNF" "$@"; }
cleanup()
{
	x detach all >/dev/null 2>&1
	x destroy >/dev/null 2>&1
	ip netns del "$NS" 2>/dev/null
	umount "$BPFFS" 2>/dev/null
	rmdir "$BPFFS"
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mount -t bpf -o mode=0700 bpf "$BPFFS" || exit 1
ip netns add "$NS" || exit 1
ip -n "$NS" link add m0 type veth peer name p0
ip -n "$NS" link add m1 type veth peer name p1
for d in m0 m1 p0 p1; do ip -n "$NS" link set "$d" up; done

count()
{
	local n
	n=$(ip netns exec "$NS" env XNF_PIN_ROOT="$ROOT" \
		strace -f -c -e trace=bpf "$XNF" "$@" 2>&1 >/dev/null |
		awk '$NF == "total" { print $4 }')
	printf '%6s  %s\n' "$n" "$*"
}

MAC=$(ip -n "$NS" -j link show p1 | jq -r '.[0].address')
x attach m1 chain firewall,l3fwd,l2fwd >/dev/null 2>&1
count attach m0 chain firewall,l3fwd,l2fwd
count status
count chain set m0 l3fwd,l2fwd
count route add 203.0.113.0/24 dev m1 lladdr "$MAC"
count route show
count route del 203.0.113.0/24
count fdb add 02:00:00:00:00:01 dev m1
count fdb del 02:00:00:00:00:01
count xconnect m0 m1
count xconnect del m0
count fw add prio 10 drop proto udp dport 5001
count fw show
count fw del prio 10
count config set no_route drop
count stats m0
count save
printf '%s\n' "route add 198.51.100.0/24 blackhole" \
	"route add 192.0.2.0/24 blackhole" "fw add prio 20 drop proto tcp" >"$TMP/b"
count -b "$TMP/b"
x save >"$TMP/conf"
count apply check "$TMP/conf"
count apply "$TMP/conf"
count route flush
count detach m0
