#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# scale-out.sh - the longer scale-out scenario (`make scale-out`): SO_N xnf
# routers behind a BGP/ECMP edge with BFD (testbed/scaleout.bash).
# Every router in turn is drained and undrained, fails silently (only BFD
# can tell) and comes back, and has its links go down and come back, each
# under SO_RATE frames/s of SO_FLOWS flows, with IPv4 and with IPv6
# traffic; ROUNDS times over. Each router's xnf forwards by its own LPM,
# filled by `xnf route sync` from the routes BIRD writes into its kernel
# (SO_MODE=sync, the default), or by the kernel's FIB (SO_MODE=fib).
# Writes a markdown report of the frames lost in each event, with the
# mode, to OUT (default scale-out.md in the current directory). Needs
# root, bird2, nftables.
#
#   scripts/scale-out.sh [-o OUT] [-r ROUNDS]
#   env: XNF (the xnf binary; xnf-gen beside it), SO_MODE, SO_N, SO_RATE,
#        SO_FLOWS, SO_BG_PER_FLOW, SO_BFD_MS, SO_BFD_MULT
set -uo pipefail

out=scale-out.md rounds=2
while getopts o:r: opt; do
	case $opt in
	o) out=$OPTARG ;;
	r) rounds=$OPTARG ;;
	*) echo "Usage: $0 [-o OUT] [-r ROUNDS]" >&2; exit 2 ;;
	esac
done

# The daemons' own bound (a guard against a hang): a few minutes per event.
SO_DAEMON_TIMEOUT=${SO_DAEMON_TIMEOUT:-$((rounds * 2 * ${SO_N:-2} * 3 * 120 + 300))}
# shellcheck source-path=SCRIPTDIR/.. source=testbed/scaleout.bash
. "$(dirname "$0")/../testbed/scaleout.bash"

missing=$(so_missing)
[ -z "$missing" ] || { echo "Error: cannot build the scale-out test bed: $missing" >&2; exit 1; }

trap so_teardown EXIT
trap 'exit 130' INT TERM
so_setup && so_up || { echo "Error: the scale-out test bed did not come up" >&2; exit 1; }

rows=() fail=0
for ((r = 1; r <= rounds; r++)); do
	for SO_FAMILY in 4 6; do
		for ((k = 1; k <= SO_N; k++)); do
			for kind in drain stall linkdown; do
				ev="round $r, IPv$SO_FAMILY, router $k, $kind"
				if ! so_phase "$kind" "$k"; then
					echo "Error: $ev did not complete" >&2
					fail=1
					break 4
				fi
				rows+=("| $r | IPv$SO_FAMILY | $k | $kind | $SO_SENT | $SO_RECV | $SO_RING | $SO_LOST | $SO_K_FLOWS | $(so_outage_ms "$k") | $SO_LOST_OTHER | $SO_MOVED | $SO_KEPT_MOVED |")
				echo "$ev: sent $SO_SENT received $SO_RECV lost $SO_LOST ($(so_outage_ms "$k") ms) ring $SO_RING" >&2
				so_return "$kind" "$k" || {
					echo "Error: $ev: the router did not come back" >&2
					fail=1
					break 4
				}
			done
		done
	done
done

{
	echo "# Scale-out: drain and failover losses"
	echo
	echo "Written by \`make scale-out\` (scripts/scale-out.sh); how to read it:"
	echo "[testing.md](testing.md) on scaleout.bats."
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs, BIRD $(bird --version 2>&1 | awk '{ print $NF }')."
	if [ "$SO_MODE" = sync ]; then
		echo "$SO_N xnf routers (mode sync: l3fwd by xnf's own LPM, which \`xnf route sync\`"
		echo "fills from the routes BIRD writes into the router's kernel)"
	else
		echo "$SO_N xnf routers (mode fib: l3fwd asks the kernel's FIB per packet)"
	fi
	echo "behind an edge with BGP, ECMP (L4 hash) and"
	echo "BFD ${SO_BFD_MS} ms x $SO_BFD_MULT; $SO_FLOWS UDP flows, $SO_RATE frames/s in all,"
	echo "$((SO_FLOWS * SO_BG_PER_FLOW)) frames per event (testbed/scaleout.bash, so_phase)."
	echo
	echo "- drain: the router announces with the graceful shutdown community"
	echo "  (65535:0), the edge gives it local preference 0; its flows move."
	echo "- stall: the router drops everything, links up: only BFD tells the"
	echo "  edge; lost = frames its xnf dropped until then (counted there)."
	echo "- linkdown: the router's links go down; lost = frames that did not"
	echo "  arrive (the kernel discards them on the dead link uncounted)."
	echo
	echo "Outage is lost frames over the rate of that router's flows. Ring:"
	echo "frames the veth rings dropped on the paths that stayed (a busy"
	echo "machine). Lost other: frames of the other routers' flows that did not"
	echo "arrive beyond the ring drops. Kept moved: other routers' flows that"
	echo "changed router (0: only the leaving router's flows move)."
	echo
	echo "| round | family | router | event | sent | received | ring | lost | its flows | outage ms | lost other | moved | kept moved |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	if [ "$fail" -ne 0 ]; then
		echo
		echo "**Incomplete: the scenario stopped on an error (see its output).**"
	fi
} >"$out"
echo "report: $out" >&2
exit "$fail"
