#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# units.bats - the systemd units of dist/systemd/, without a systemd to
# run them (this machine has none as PID 1):
# - `systemd-analyze verify` of xnf.service, an instance of
#   xnf-worker@.service and the generator's drop-in, as `make install`
#   installs them (the binary's path pointed at the installed one);
# - xnf-generator: the drop-in it writes for a configuration (Wants= and
#   After= on each device's unit, names escaped as systemd does), nothing
#   without one or for the commented example;
# - the commands the units run, run as systemd would: with the unit's
#   capability bounding set and no new privileges (setpriv), in the test
#   bed's DUT (testbed/testbed.bash): xnf.service's start, reload
#   and stop, and a worker ended by the unit's KillSignal.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=300}"

load ../testbed/testbed

UNITS=$TB_TOP/dist/systemd

setup()
{
	tb_probe_root || skip "needs root"
	T=$(mktemp -d /tmp/xnf-units.XXXXXX)
}

teardown()
{
	[ -z "${WPID:-}" ] || kill "$WPID" 2>/dev/null || true
	tb_teardown
	[ -z "${T:-}" ] || rm -rf -- "$T"
}

# unit_key UNIT KEY: the value of KEY= in dist/systemd/UNIT.
unit_key()
{
	sed -n "s/^$2=//p" "$UNITS/$1"
}

# unit_caps UNIT: its CapabilityBoundingSet= as setpriv's +cap,+cap...
unit_caps()
{
	unit_key "$1" CapabilityBoundingSet | tr 'A-Z' 'a-z' |
		sed -e 's/cap_/+/g' -e 's/ /,/g'
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

# unit_run UNIT KEY CONF: the command of KEY= (ExecStart, ...) of UNIT in
# the DUT, as systemd runs it: its capability bounding set, no new
# privileges; $XNF for /usr/sbin/xnf, CONF for /etc/xnf/xnf.conf.
unit_run()
{
	local caps cmd
	caps=$(unit_caps "$1")
	cmd=$(unit_key "$1" "$2" | sed -e "s|/usr/sbin/xnf|$XNF|" \
		-e "s|/etc/xnf/xnf.conf|$3|")
	# shellcheck disable=SC2086 # the command line, split as systemd does
	tb_dut env XNF_PIN_ROOT="$XNF_PIN_ROOT" setpriv --no-new-privs \
		--bounding-set="-all,$caps" -- $cmd
}

@test "systemd-analyze verify: xnf.service, a worker, the route sync, the generator's drop-in" {
	local d=$T/root u=$T/units
	command -v systemd-analyze

	run -0 env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL \
		make -C "$TB_TOP" --no-print-directory OUTPUT="$(dirname "$XNF")" \
		PREFIX=/usr DESTDIR="$d" install
	# verify checks that ExecStart's binary exists: the installed one.
	mkdir "$u"
	sed "s|/usr/sbin/xnf|$d/usr/sbin/xnf|" "$d/usr/lib/systemd/system/xnf.service" >"$u/xnf.service"
	sed "s|/usr/sbin/xnf|$d/usr/sbin/xnf|" "$d/usr/lib/systemd/system/xnf-worker@.service" \
		>"$u/xnf-worker@.service"
	ln -s xnf-worker@.service "$u/xnf-worker@eth0.service"
	sed "s|/usr/sbin/xnf|$d/usr/sbin/xnf|" "$d/usr/lib/systemd/system/xnf-route-sync.service" \
		>"$u/xnf-route-sync.service"
	sed "s|/usr/sbin/xnf|$d/usr/sbin/xnf|" "$d/usr/lib/systemd/system/xnf-neigh-follow.service" \
		>"$u/xnf-neigh-follow.service"
	printf 'attach eth0 chain firewall,xsk\nattach br-lan chain l2fwd\n' >"$T/xnf.conf"
	XNF_CONF=$T/xnf.conf "$d/usr/lib/systemd/system-generators/xnf-generator" \
		"$u" "$T/early" "$T/late"
	[ -f "$u/xnf.service.d/50-devices.conf" ]

	cd "$u"
	run -0 env SYSTEMD_UNIT_PATH="$u:" systemd-analyze verify --man=no \
		xnf.service xnf-worker@eth0.service xnf-route-sync.service \
		xnf-neigh-follow.service
	[ -z "$output" ]

	# It does read the drop-in: a wrong line in it is reported.
	echo "After=no-such@@unit" >>"$u/xnf.service.d/50-devices.conf"
	run env SYSTEMD_UNIT_PATH="$u:" systemd-analyze verify --man=no xnf.service
	[ -n "$output" ]
}

@test "xnf-generator: Wants= and After= on the devices the configuration names" {
	local gen=$UNITS/xnf-generator want
	cat >"$T/xnf.conf" <<'EOF'
# attach c0 chain l3fwd
attach eth0 chain firewall,l3fwd,l2fwd   # a comment
  att "br-lan" chain l2fwd
attach wan-1.100 chain firewall mode generic
route add 198.51.100.0/24 via 192.0.2.1 dev eth1
route add 203.0.113.0/24 dev eth1 lladdr 02:00:00:00:00:02
fdb add 02:00:00:00:00:01 dev ens1f0
xconnect p1 p2 lladdr 02:00:00:00:00:01 02:00:00:00:00:02
x add p3 p4
xconnect del p5
attach ../x chain l3fwd
attach help
fw add prio 10 drop proto tcp dport 23
EOF
	printf 'attach crlf0 chain l3fwd\r\n' >>"$T/xnf.conf"
	run -0 env XNF_CONF="$T/xnf.conf" "$gen" "$T/out" "$T/early" "$T/late"
	want=$(for d in eth0 'br\x2dlan' 'wan\x2d1.100' eth1 ens1f0 p1 p2 p3 p4 crlf0; do
		echo "After=sys-subsystem-net-devices-$d.device"
		echo "Wants=sys-subsystem-net-devices-$d.device"
	done | sort)
	[ "$(grep -E '^(Wants|After)=' "$T/out/xnf.service.d/50-devices.conf" | sort)" = "$want" ]
	grep -qx '\[Unit\]' "$T/out/xnf.service.d/50-devices.conf"
	# Only the normal directory is written.
	[ ! -e "$T/early" ] && [ ! -e "$T/late" ]

	# No configuration, or the example with every line commented out:
	# nothing to wait for.
	run -0 env XNF_CONF="$T/none" "$gen" "$T/out2"
	[ ! -e "$T/out2" ]
	run -0 env XNF_CONF="$TB_TOP/dist/xnf.conf" "$gen" "$T/out3"
	[ ! -e "$T/out3" ]
}

@test "xnf.service: start, reload and stop under the unit's capabilities" {
	local id0 id1
	TB_SKIP=$(tb_missing)
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	tb_setup
	cat >"$T/xnf.conf" <<EOF
attach d0 chain firewall,l3fwd,l2fwd
attach d1 chain firewall,l3fwd,l2fwd
route add 198.51.100.0/24 dev d1 lladdr $TB_MAC_K0
route add 192.0.2.0/24 dev d0 lladdr $TB_MAC_S0
fw add prio 10 drop proto tcp dport 23
EOF
	# Without CAP_BPF and CAP_SYS_ADMIN (so the bounding set does limit):
	# refused, nothing attached.
	run ! tb_dut env XNF_PIN_ROOT="$XNF_PIN_ROOT" setpriv --no-new-privs \
		--bounding-set=-all,+net_admin -- "$XNF" apply "$T/xnf.conf"
	[ "$(tb_xdp_prog_id "$TB_DUT" d0)" = none ]

	run -0 unit_run xnf.service ExecStart "$T/xnf.conf"
	id0=$(tb_xdp_prog_id "$TB_DUT" d0)
	id1=$(tb_xdp_prog_id "$TB_DUT" d1)
	[ "$id0" != none ] && [ "$id1" != none ]
	tb_ping_ok "$TB_SRC" "$TB_SINK4" 20

	# Reload: the same file, nothing reloaded.
	run -0 unit_run xnf.service ExecReload "$T/xnf.conf"
	[ "$(tb_xdp_prog_id "$TB_DUT" d0)" = "$id0" ]
	[ "$(tb_xdp_prog_id "$TB_DUT" d1)" = "$id1" ]

	# A change by hand while the service runs is in `xnf save`, so the
	# file can follow it; a reload of that file then changes nothing.
	tb_xnf route add 203.0.113.0/24 blackhole
	tb_xnf save >"$T/xnf.conf"
	grep -qx 'route add 203.0.113.0/24 blackhole' "$T/xnf.conf"
	run -0 unit_run xnf.service ExecReload "$T/xnf.conf"
	[ "$(tb_xdp_prog_id "$TB_DUT" d0)" = "$id0" ]
	tb_xnf -j route show | jq -e 'any(.routes[]; .dst == "203.0.113.0/24")'

	# Stop: no XDP program left on either.
	run -0 unit_run xnf.service ExecStop "$T/xnf.conf"
	[ "$(tb_xdp_prog_id "$TB_DUT" d0)" = none ]
	[ "$(tb_xdp_prog_id "$TB_DUT" d1)" = none ]
}

@test "xnf-worker@.service: runs under the unit's capabilities, SIGTERM ends it cleanly" {
	local rc=0
	TB_SKIP=$(tb_missing)
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	tb_setup
	tb_xnf attach d0 chain xsk
	tb_xnf attach d1 chain l3fwd
	tb_routes

	# The instance file, read as systemd reads an EnvironmentFile; the
	# command is the unit's ExecStart, $XNF_WORKER_ARGS split at blanks.
	# Not under unit_run's `timeout` (it would get the signal): bounded by
	# its duration.
	echo 'XNF_WORKER_ARGS="d0 nf l3fwd egress d1 duration 120"' >"$T/w.conf"
	# shellcheck disable=SC1091
	. "$T/w.conf"
	export XNF_WORKER_ARGS
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" setpriv --no-new-privs \
		--bounding-set="-all,$(unit_caps xnf-worker@.service)" -- \
		sh -c "exec $(unit_key xnf-worker@.service ExecStart |
			sed "s|/usr/sbin/xnf|$XNF|")"
	WPID=$TB_BG_PID
	tb_until "the worker to run" worker_settled
	[ "$(worker_state)" = running ]
	tb_ping_ok "$TB_SRC" "$TB_SINK4" 20

	[ "$(unit_key xnf-worker@.service KillSignal)" = SIGTERM ]
	kill -TERM "$WPID"
	wait "$WPID" || rc=$?
	WPID=
	[ "$rc" -eq 0 ]
	[ "$(worker_state)" != running ]
	# The queue is back with the fallback (pass): the kernel answers.
	tb_ping_ok "$TB_SRC" "$TB_D04" 5
}

# synced_route: 203.0.113.0/24 via the sink is in xnf's tables.
synced_route()
{
	tb_xnf -j route show | jq -e --arg gw "$TB_SINK4" \
		'.routes[] | select(.dst == "203.0.113.0/24" and .via == $gw)' >/dev/null
}

@test "xnf-route-sync.service: runs under the unit's capabilities, SIGTERM ends it cleanly, the routes stay" {
	local rc=0
	TB_SKIP=$(tb_missing)
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	tb_setup
	tb_attach_both l3fwd
	ip -n "$TB_DUT" route add 203.0.113.0/24 via $TB_SINK4

	# Its options from the EnvironmentFile, as systemd reads it.
	echo 'XNF_ROUTE_SYNC_ARGS="table main resync 60"' >"$T/rs.conf"
	# shellcheck disable=SC1091
	. "$T/rs.conf"
	export XNF_ROUTE_SYNC_ARGS
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" setpriv --no-new-privs \
		--bounding-set="-all,$(unit_caps xnf-route-sync.service)" -- \
		sh -c "exec $(unit_key xnf-route-sync.service ExecStart |
			sed "s|/usr/sbin/xnf|$XNF|")"
	WPID=$TB_BG_PID
	tb_until "the synced route" synced_route
	tb_ping_ok "$TB_SRC" "$TB_SINK4" 5

	[ "$(unit_key xnf-route-sync.service KillSignal)" = SIGTERM ]
	kill -TERM "$WPID"
	wait "$WPID" || rc=$?
	WPID=
	[ "$rc" -eq 0 ]
	# Graceful: the route stays and forwards.
	tb_xnf -j route show | jq -e '.routes[] | select(.dst == "203.0.113.0/24")'
}
