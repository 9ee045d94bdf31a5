#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# demo.sh - xnf in under a minute (`make demo`, as root).
#
# Builds the test bed of the traffic tests (testbed/testbed.bash):
#
#   [src ns] s0 --veth-- d0 [dut ns: xnf] d1 --veth-- k0 [sink ns]
#
# attaches firewall -> l3fwd -> l2fwd to both ports of the DUT, adds routes
# and two firewall rules, sends pings and short UDP bursts, prints what xnf
# counted, and removes everything again: on success, on failure, on Ctrl-C
# and when its output is cut short (make demo | head). Nothing outside its own three network namespaces is touched.
#
# Environment: XNF (default build/xnf), TB_VERBOSE=1 to see the test bed's
# own messages.
set -euo pipefail

cd "$(dirname "$0")/.."
export XNF=${XNF:-$PWD/build/xnf}
# shellcheck source-path=SCRIPTDIR/..
source testbed/testbed.bash

if [ -t 1 ]; then
	B=$'\e[1m' D=$'\e[2m' R=$'\e[0m'
else
	B='' D='' R=''
fi

say() { printf '\n%s==> %s%s\n' "$B" "$*" "$R"; }
note() { printf '%s    %s%s\n' "$D" "$*" "$R"; }

# run_xnf ARGS...: shows the command, then runs it in the DUT.
run_xnf()
{
	printf '  %s# xnf %s%s\n' "$D" "$*" "$R"
	tb_xnf "$@"
}

cleanup()
{
	local rc=$?
	trap - EXIT INT TERM HUP
	# A closed stdout (demo | head) must not stop the teardown: writes
	# fail from here on instead of killing the shell.
	trap '' PIPE
	set +e
	say "Tearing down: detach xnf, delete the namespaces, unmount the bpffs"
	tb_teardown
	if [ "$rc" -eq 0 ]; then
		say "Done."
	else
		printf '\n%sdemo failed (exit %d); everything it created is removed%s\n' \
			"$B" "$rc" "$R" >&2
	fi
	exit "$rc"
}

why=$(tb_missing)
if [ -n "$why" ]; then
	echo "demo: cannot run here: $why" >&2
	exit 1
fi

trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
trap 'exit 141' PIPE

START=$SECONDS

say "Building the test bed: three network namespaces joined by veth pairs"
tb_setup
note "src  $TB_SRC   s0 $TB_SRC4/24  $TB_SRC6/64"
note "dut  $TB_DUT   d0 $TB_D04/24  d1 $TB_D14/24 (+ IPv6)"
note "sink $TB_SINK  k0 $TB_SINK4/24  $TB_SINK6/64"
note "pins in a private bpffs: XNF_PIN_ROOT=$XNF_PIN_ROOT"

say "Attaching the chain firewall -> l3fwd -> l2fwd to both ports of the DUT"
note "each NF is its own XDP program, joined by tail calls"
run_xnf attach d0 chain firewall,l3fwd,l2fwd
run_xnf attach d1 chain firewall,l3fwd,l2fwd
run_xnf status

say "Routes: l3fwd forwards with its own LPM tables, next hop MACs from the neighbour table"
run_xnf route add 198.51.100.0/24 via $TB_SINK4
run_xnf route add 192.0.2.0/24 via $TB_SRC4
run_xnf route add 2001:db8:2::/64 via $TB_SINK6
run_xnf route add 2001:db8:1::/64 via $TB_SRC6
note "the DUT's own addresses are local routes: packets for them go to its kernel"
run_xnf route add $TB_D04/32 local
run_xnf route add $TB_D14/32 local
run_xnf route show

say "Firewall: drop UDP to port 5001, explicitly allow UDP to 5002 from the source's subnet"
run_xnf fw add prio 10 drop proto udp dport 5001
run_xnf fw add prio 20 allow proto udp src 192.0.2.0/24 dport 5002
run_xnf fw show

say "Traffic: pings and two UDP bursts of 50 datagrams, source -> sink"
tb_udp_sink "$TB_SINK" 4 5001 "$TB_TMP/5001"
tb_udp_sink "$TB_SINK" 4 5002 "$TB_TMP/5002"
printf '  ping   %-14s sent/received: %s\n' $TB_SINK4 "$(tb_ping "$TB_SRC" $TB_SINK4 20)"
printf '  ping   %-14s sent/received: %s\n' $TB_SINK6 "$(tb_ping "$TB_SRC" $TB_SINK6 20)"
tb_udp_send "$TB_SRC" $TB_SINK4 5001 50
tb_udp_send "$TB_SRC" $TB_SINK4 5002 50
tb_wait_lines "$TB_TMP/5002" 50 || true
printf '  udp    port 5001: the sink received %d of 50 (dropped by the firewall)\n' \
	"$(tb_lines "$TB_TMP/5001")"
printf '  udp    port 5002: the sink received %d of 50\n' "$(tb_lines "$TB_TMP/5002")"
read -r v4 v6 <<<"$(tb_kfwd)"
note "the DUT's kernel forwarded $v4 IPv4 and $v6 IPv6 packets: xnf did the rest"

say "What xnf counted (per interface, per NF, by reason; batch sizes per NAPI poll)"
run_xnf stats

say "Firewall rules with their hits"
run_xnf fw show

say "Status"
run_xnf status

note "took $((SECONDS - START)) s"
