#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# refusals.bats - what xnf must refuse, and that a refusal changes nothing.
#
# One test bed for the whole file (testbed/testbed.bash): xnf attached
# to d0 and d1 with routes, a firewall rule, a NAT rule and an FDB entry,
# plus a veth pair f0/f1 in the DUT that xnf does not own, with a foreign
# XDP program (build/bpf/xmit.bpf.o) on f0. Each test runs refused
# commands and checks
# - the exit status is not 0 (and not timeout's 124 or a signal's),
# - stdout is empty and stderr is one line, starting with "Error:" (the
#   only wording checked),
# - every `xnf -j ... show`, `status` and `config show` output is
#   byte-identical before and after,
# plus what else the refusal promises (a foreign program left in place, no
# pins for a device xnf did not attach).

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=120}"

load ../testbed/testbed

MAC_FDB=02:78:6e:00:01:01

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
	[ -z "$TB_SKIP" ] || return 0
	tb_testbed_up firewall,l3fwd,l2fwd
	tb_xnf fw add prio 100 drop proto udp dport 5001
	tb_xnf fdb add $MAC_FDB dev d1
	tb_xnf nat add prio 100 masquerade oif d1
	tb_foreign_pair
}

teardown_file()
{
	tb_teardown
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
}

# A refusal that did not happen must not spill into the next tests: undo
# an attachment to f1 (the one device a wrongly accepted attach can get,
# also by its alias name f1:0), remove instance b of the two-instance
# test and its device e0, and unmount the other users' bpffs (PUB), which
# takes whatever was pinned in it along.
teardown()
{
	local dev
	[ -z "$TB_SKIP" ] || return 0
	for dev in f1 f1:0; do
		if [ -e "$XNF_PIN_ROOT/dev/$dev" ]; then
			echo "teardown: xnf was attached to $dev, detaching" >&2
			tb_xnf detach "$dev"
		fi
	done
	if [ -n "$B_ROOT" ] && [ -e "$B_ROOT" ]; then
		XNF_PIN_ROOT=$B_ROOT tb_xnf detach e0
		XNF_PIN_ROOT=$B_ROOT tb_xnf destroy
	fi
	ip -n "$TB_DUT" link del e0 2>/dev/null || true
	# The public bpffs, and every pin in it.
	if [ -n "$PUB" ]; then
		! mountpoint -q "$PUB" || umount "$PUB"
		rmdir "$PUB"
		PUB=
	fi
	[ -z "$NOBODY_MODES" ] || nobody_modes_restore
}

# refused ARGS...: `xnf ARGS` fails (not by timeout or a signal) with one
# line on stderr, starting with "Error:", and nothing on stdout.
# shellcheck disable=SC2154 # status, output and stderr are set by bats' run
refused()
{
	run --separate-stderr tb_xnf "$@"
	echo "xnf $*: exit $status; stderr: $stderr"
	if [ "$status" -eq 0 ] || [ "$status" -ge 124 ]; then
		echo "FAIL: xnf $*: exit status $status, expected a refusal" >&2
		return 1
	fi
	if [ "${#stderr_lines[@]}" -ne 1 ] || [[ "$stderr" != Error:* ]]; then
		echo "FAIL: xnf $*: stderr is not one line starting with 'Error:'" >&2
		return 1
	fi
	if [ -n "$output" ]; then
		echo "FAIL: xnf $*: output on stdout: $output" >&2
		return 1
	fi
}

# refused_json ARGS...: `xnf -j ARGS` fails with one JSON object holding an
# "error" string (schema xnf/error/1) on stdout, and nothing on stderr.
refused_json()
{
	run --separate-stderr tb_xnf -j "$@"
	echo "xnf -j $*: exit $status; stdout: $output; stderr: $stderr"
	tb_expect "xnf -j $*: exit" "$status" -eq 1 &&
	tb_expect "xnf -j $*: one error object" \
		"$(jq -sc 'map([.schema, (.error | type)])' <<<"$output")" = '[["xnf/error/1","string"]]' &&
	tb_expect "xnf -j $*: nothing on stderr" "${#stderr}" -eq 0
}

# refuse ARGS...: refused, and nothing xnf shows has changed since the
# first refusal of the test (a refusal changes nothing, so one snapshot
# before the first serves them all).
REF_BEFORE=
refuse()
{
	local after
	[ -n "$REF_BEFORE" ] || REF_BEFORE=$(tb_snapshot)
	refused "$@" || return 1
	after=$(tb_snapshot)
	if [ "$REF_BEFORE" != "$after" ]; then
		echo "FAIL: xnf $*: state changed" >&2
		diff <(echo "$REF_BEFORE") <(echo "$after") >&2
		return 1
	fi
}

no_pins_for()
{
	if [ -e "$XNF_PIN_ROOT/dev/$1" ]; then
		echo "FAIL: pins for $1 exist: $(ls "$XNF_PIN_ROOT/dev/$1")" >&2
		return 1
	fi
}

@test "malformed IPv4 prefixes" {
	local p
	for p in 192.0.2.0/33 192.0.2.1/24 300.1.1.1/8 garbage 192.0.2.0/ \
		 192.0.2.0/-1 192.0.2.0/24x 192.0.2/24 /24 192.0.2.0//24; do
		refuse route add "$p" via $TB_SINK4
		refuse route del "$p"
		refuse fw add drop src "$p"
		refuse fw add drop dst "$p"
	done
}

@test "malformed IPv6 prefixes" {
	local p
	for p in 2001:db8::/129 2001:db8::1/64 2001:db8:::1/64 2001:zz8::/32 \
		 2001:db8::/-1 2001:db8::/64/64; do
		refuse route add "$p" via $TB_SINK6
		refuse fw add drop src "$p"
	done
}

@test "malformed addresses" {
	local a
	for a in 300.1.1.1 192.0.2 198.51.100.1.1 garbage 2001:db8:::1 ""; do
		refuse route add 203.0.113.0/24 via "$a"
	done
	# A next hop of the other family.
	refuse route add 2001:db8:5::/64 via $TB_SINK4
	refuse route add 203.0.113.0/24 via $TB_SINK6
	# src and dst of one rule in two families.
	refuse fw add drop src 192.0.2.0/24 dst 2001:db8:2::/64
}

@test "malformed and non-unicast MACs" {
	local m
	for m in 02:00:00:00:00 02:00:00:00:00:01:02 zz:00:00:00:00:01 \
		 02-00-00-00-00-01 0200.0000.0001 2:0:0:0:0:1 ""; do
		refuse route add 203.0.113.0/24 dev d1 lladdr "$m"
		refuse fdb add "$m" dev d1
	done
	for m in ff:ff:ff:ff:ff:ff 01:00:5e:00:00:01 33:33:00:00:00:01 00:00:00:00:00:00; do
		refuse route add 203.0.113.0/24 dev d1 lladdr "$m"
		refuse fdb add "$m" dev d1
	done
}

@test "ports and port ranges" {
	local p
	for p in 65536 10-5 -1 abc 1-65536 "" 5- -5 1.5 0x10 "80 81"; do
		refuse fw add drop proto udp dport "$p"
		refuse fw add drop proto tcp sport "$p"
	done
}

@test "unknown protocol" {
	local p
	for p in foo 256 -1 "" udpp 17x; do
		refuse fw add drop proto "$p"
	done
}

@test "duplicate firewall priority" {
	refuse fw add prio 100 allow proto tcp dport 80
	refuse fw add prio 100 drop proto udp dport 5001
}

@test "firewall matches that cannot hold: oif, a device that does not exist, flags outside their mask, icmp of the other family" {
	refuse fw add allow oif d1
	refuse fw add allow iif no-such-dev0
	refuse fw add drop tcp flags syn / ack
	refuse fw add drop proto udp tcp flags syn
	refuse fw add drop icmp type echo-request src 2001:db8:1::/64
	refuse fw add drop icmp type no-such-type
	refuse fw add allow ct state new,bogus
	refuse fw add allow ct status new
}

@test "NAT rules that cannot hold: a taken prio, an address for masquerade, ports without tcp or udp, a device that does not exist, families mixed" {
	refuse nat add prio 100 snat to 203.0.113.1
	refuse nat add masquerade to 203.0.113.1
	refuse nat add masquerade to :1024-2047
	refuse nat add dnat proto icmp dport 80 to 198.51.100.2
	refuse nat add snat oif no-such-dev0 to 203.0.113.1
	refuse nat add snat saddr 2001:db8:1::/64 to 203.0.113.1
	refuse nat add snat to 203.0.113.9-203.0.113.1
	refuse nat del prio 7
}

@test "a route that exists is not added again" {
	refuse route add 198.51.100.0/24 via $TB_SINK4
	refuse route add 2001:db8:2::/64 via $TB_SINK6
	refuse route del 203.0.113.0/24
	refuse fdb add $MAC_FDB dev d0
}

@test "route to a device that does not exist" {
	refuse route add 203.0.113.0/24 dev nosuch0 lladdr 02:78:6e:00:00:04
	refuse route add 203.0.113.0/24 via $TB_SINK4 dev nosuch0
	refuse fdb add 02:78:6e:00:01:02 dev nosuch0
}

@test "next hop without a neighbour entry and no lladdr" {
	refuse route add 203.0.113.0/24 via 198.51.100.77
	refuse route add 203.0.113.0/24 via 198.51.100.77 dev d1
	refuse route add 2001:db8:5::/64 via 2001:db8:2::77
	refuse route add 203.0.113.0/24 dev d1
}

@test "unknown config key or action" {
	refuse config set bogus pass
	refuse config set no_route flood
	refuse config set l2_miss forward
	refuse config set martian flood
	refuse config set flow_cache pass
	refuse config set flow_cache 1
	refuse config set no_route on
	refuse config set log_reasons none,martian
	refuse config set log_reasons martian,bogus
	refuse config set log_reasons ,
	refuse config set log_reasons_limit 0/second
	refuse config set log_reasons_limit 10/week
	refuse config set log_reasons_limit 10
}

@test "a full table refuses one more entry and keeps its contents" {
	# A second instance in the same bpffs, so the other tests keep theirs.
	# The route tables hold a full Internet table (XNF_MAX_ROUTES), too
	# many for a test; the nexthop table (XNF_MAX_NH, ids from 1) fills
	# with as many routes, each through its own MAC, in one batch.
	local root="${XNF_PIN_ROOT%/*}/xnf-full" batch="$TB_TMP/full.batch" before after max
	max=$(sed -n 's/^#define XNF_MAX_NH[[:space:]]*\([0-9]*\).*/\1/p' "$TB_TOP/include/uapi/xnf_l3fwd.h")
	awk -v n=$((max - 1)) 'BEGIN { for (i = 0; i < n; i++)
		printf "route add 2001:db8:%x::/48 dev d1 lladdr 02:78:6e:01:%02x:%02x\n", i, int(i / 256), i % 256 }' >"$batch"
	XNF_PIN_ROOT=$root tb_xnf -b "$batch"
	before=$(XNF_PIN_ROOT=$root tb_xnf -j route show)
	tb_expect "routes" "$(jq '.routes | length' <<<"$before")" -eq $((max - 1))
	XNF_PIN_ROOT=$root refused route add 2001:db8:ffff::/64 dev d1 lladdr $TB_MAC_K0
	XNF_PIN_ROOT=$root refused route add 2001:db8::/32 via $TB_SINK6
	after=$(XNF_PIN_ROOT=$root tb_xnf -j route show)
	tb_expect "routes of the full table unchanged" \
		"$(sha256sum <<<"$after")" = "$(sha256sum <<<"$before")"
	# A route through a next hop that exists takes no new object.
	XNF_PIN_ROOT=$root tb_xnf route add 203.0.113.0/24 dev d1 lladdr 02:78:6e:01:00:07
	XNF_PIN_ROOT=$root tb_xnf destroy
	tb_expect "instance removed" "$(test -e "$root" && echo present || echo gone)" = gone
}

@test "attach with an unknown NF name" {
	refuse attach f1 chain l3fwd,bogus
	refuse attach f1 chain bogus
	refuse attach f1 chain ""
	refuse attach f1 chain l3fwd,l3fwd
	refuse attach f1 chain firewall,l3fwd,l2fwd,xsk,firewall
	no_pins_for f1
	tb_expect "XDP on f1" "$(tb_xdp_prog_id "$TB_DUT" f1)" = none
	# chain set on an attached device: the old chain keeps running.
	refuse chain set d0 l3fwd,bogus
	tb_ping_ok "$TB_SRC" $TB_SINK4 2
}

# A chain in which an NF would never see some of its packets: the
# firewall after an NF that hands packets to the kernel (which forwards
# them without it), xsk before an NF that chooses the egress again, the
# firewall before conntrack, whose state it reads. The candidate's edit
# refuses it, so every way to set a chain does.
@test "a chain in which an NF would miss packets: attach, chain set, -b, apply, apply check" {
	local f=$BATS_TEST_TMPDIR
	refuse attach f1 chain l3fwd,firewall
	refuse attach f1 chain l2fwd,firewall mode generic
	refuse attach f1 chain xsk,l3fwd
	refuse chain set d0 l3fwd,l2fwd,firewall
	refuse chain set d0 firewall,xsk,l2fwd fused
	refuse attach f1 chain firewall,conntrack,l3fwd
	refuse chain set d0 firewall,conntrack
	printf '%s\n' "route add 203.0.113.0/24 blackhole" \
		"chain set d0 l3fwd,firewall" >"$f/batch"
	refuse -b "$f/batch"
	tb_xnf save | sed 's/^attach d0 chain [^ ]*/attach d0 chain l3fwd,firewall/' >"$f/apply"
	grep -q '^attach d0 chain l3fwd,firewall ' "$f/apply"
	refuse apply check "$f/apply"
	refuse apply "$f/apply"
	refused_json chain set d0 l2fwd,firewall
	no_pins_for f1
	tb_ping_ok "$TB_SRC" $TB_SINK4 2
}

# A chain the library's parser refuses is the command's one error: under
# -j one xnf/error/1 document and nothing on stderr.
@test "under -j a chain that does not parse is one error document" {
	refused_json attach f1 chain l3fwd,bogus
	refused_json attach f1 chain l3fwd,l3fwd
	refused_json attach f1 chain l3fwd,,l2fwd
	refused_json chain set d0 l3fwd,bogus
	no_pins_for f1
}

# Empty NF names and overlong chain texts are refused with an Error: line.
@test "malformed chain lists" {
	refuse attach f1 chain l3fwd,,l2fwd
	refuse attach f1 chain ,l3fwd,
	refuse attach f1 chain "$(printf 'l3fwd%.0s' {1..60})"
	refuse chain set d0 l3fwd,,l2fwd
	no_pins_for f1
}

@test "attach to a device that does not exist" {
	refuse attach nosuch0 chain l3fwd
	refuse attach nosuch0 chain l3fwd mode generic
	no_pins_for nosuch0
}

@test "attach over a foreign XDP program refuses and leaves it in place" {
	refuse attach f0 chain l3fwd
	refuse attach f0 chain l3fwd mode generic
	refuse attach f0 chain firewall,l3fwd,l2fwd fused
	tb_expect "program on f0" "$(tb_xdp_prog_id "$TB_DUT" f0)" -eq "$FOREIGN_ID"
	tb_expect "its name" \
		"$(ip -n "$TB_DUT" -j link show dev f0 | jq -r '.[0].xdp.prog.name')" = xnf_xmit
	no_pins_for f0
}

@test "a second attach on an attached device" {
	local id
	id=$(tb_xdp_prog_id "$TB_DUT" d0)
	refuse attach d0 chain l3fwd
	refuse attach d0 chain firewall,l3fwd,l2fwd
	refuse attach d0 chain l3fwd mode generic
	tb_expect "program on d0" "$(tb_xdp_prog_id "$TB_DUT" d0)" -eq "$id"
	tb_ping_ok "$TB_SRC" $TB_SINK4 2
}

@test "detach of a device xnf did not attach" {
	refuse detach f0
	refuse detach f1
	refuse detach nosuch0
	tb_expect "program on f0" "$(tb_xdp_prog_id "$TB_DUT" f0)" -eq "$FOREIGN_ID"
	no_pins_for f0
	no_pins_for f1
}

# Two instances side by side, a (the test bed's, XNF_PIN_ROOT) and b, with
# b attached to e0. A device name given to a that walks out of its dev/
# directory, or that is no device name at all, is refused by every command
# that takes one, under -j too; b stays attached with its chain, and a is
# unchanged (refuse compares its state).
B_ROOT=
@test "a device name that walks into another instance is refused" {
	local name cmd words w args b_before b_after
	B_ROOT="${XNF_PIN_ROOT%/*}/b"
	ip -n "$TB_DUT" link add e0 type veth peer name e1
	ip -n "$TB_DUT" link set e0 up
	ip -n "$TB_DUT" link set e1 up
	XNF_PIN_ROOT=$B_ROOT tb_xnf attach e0 chain l3fwd,xsk
	b_before=$(XNF_PIN_ROOT=$B_ROOT tb_xnf -j status)
	tb_expect "b attached to e0" "$(jq -r '.devices[0].attached' <<<"$b_before")" = true
	for name in ../../b/dev/e0 ../../b/dev/e0/ d0/ d0/. ./d0 . .. \
		"$(printf 'e%.0s' {1..16})" "" "d0 " $'d0\n'; do
		for cmd in "detach @" "chain set @ l2fwd" "status @" "stats @" \
			"stats dev @ reset" "worker @ nf l2fwd duration 1" "plan @"; do
			read -r -a words <<<"$cmd"
			args=()
			for w in "${words[@]}"; do
				[ "$w" = @ ] && args+=("$name") || args+=("$w")
			done
			refuse "${args[@]}"
			refused_json "${args[@]}"
		done
	done
	b_after=$(XNF_PIN_ROOT=$B_ROOT tb_xnf -j status)
	tb_expect "instance b unchanged" "$b_after" = "$b_before"
	tb_expect "b still attached to e0" "$(tb_xdp_prog_id "$TB_DUT" e0)" = \
		"$(jq -r '.devices[0].prog_id' <<<"$b_after")"
	tb_ping_ok "$TB_SRC" $TB_SINK4 2
}

# The kernel resolves an alias name (d1:0) to its device (d1), so a name
# with ':' would write routes, FDB entries, cross-connects and pins for d1
# under a name that is not d1's.
@test "an alias device name is refused" {
	refuse route add 203.0.113.0/24 dev d1:0 lladdr 02:78:6e:00:00:09
	refuse route add 203.0.113.0/24 via $TB_SINK4 dev d1:0
	refuse fdb add 02:78:6e:00:01:09 dev d1:0
	refuse xconnect d0:0 d1
	refuse xconnect d0 d1:0
	refuse attach f1:0 chain l3fwd
	no_pins_for f1:0
	tb_expect "XDP on f1" "$(tb_xdp_prog_id "$TB_DUT" f1)" = none
}

# pin_root_refused ROOT: a command that would create the instance at ROOT
# is refused (text and JSON) and leaves nothing at ROOT.
pin_root_refused()
{
	local root=$1
	XNF_PIN_ROOT=$root refused route add 203.0.113.0/24 blackhole || return 1
	XNF_PIN_ROOT=$root refused_json route add 203.0.113.0/24 blackhole || return 1
	tb_expect "nothing created at $root" \
		"$(test -e "$root" && echo present || echo none)" = none
}

# A pin root outside a bpffs, the bpffs mount itself (where other
# programs' pins live, which destroy would remove), one that walks out
# with "..", a relative one, and one too long for a pin path: all refused
# before anything is created.
@test "pin roots that are no place for an instance are refused" {
	local bpffs=${XNF_PIN_ROOT%/*}
	mkdir -p "$TB_TMP/plain"
	pin_root_refused "$TB_TMP/plain/xnf"
	XNF_PIN_ROOT=$bpffs refused route add 203.0.113.0/24 blackhole
	XNF_PIN_ROOT=$bpffs refused_json route add 203.0.113.0/24 blackhole
	tb_expect "no tables on the bpffs mount" \
		"$(test -e "$bpffs/tables" && echo present || echo none)" = none
	pin_root_refused "$XNF_PIN_ROOT/../c"
	tb_expect "no instance c" "$(test -e "$bpffs/c" && echo present || echo none)" = none
	XNF_PIN_ROOT=relative/xnf refused route add 203.0.113.0/24 blackhole
	pin_root_refused "$bpffs/$(printf 'r%.0s' {1..250})"
}

# nobody CMD...: CMD as user nobody, with no group of root's.
nobody()
{
	setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
}

# A bpffs mounted as `mount -t bpf bpf DIR` leaves it (mode 1777) on a
# directory every user can reach: any of them can make a name on it
# first. A pin root another user made (where they could hold the lock, or
# rename dev/ and tables/ and orphan root's XDP programs), one below a
# directory of theirs, a symbolic link of theirs, and a root's directory
# anyone may write to: each is refused, before xnf writes anything into
# it. A root xnf makes there is root's, mode 0700, and a directory in it
# that is no longer root's is refused as the root is.
PUB=
@test "pin roots another user made, or could change, are refused" {
	local root

	PUB=$(mktemp -d /tmp/xnf-pub-XXXXXX)
	chmod 0755 "$PUB"
	mount -t bpf bpf "$PUB"
	tb_expect "bpffs mode" "$(stat -c %a "$PUB")" = 1777
	nobody mkdir -m 0777 "$PUB/xnf" "$PUB/theirs"
	nobody mkdir -m 0755 "$PUB/site"
	nobody ln -s "$PUB/theirs" "$PUB/link"
	mkdir -m 0777 "$PUB/open"
	for root in "$PUB/xnf" "$PUB/site/xnf" "$PUB/link" "$PUB/open"; do
		XNF_PIN_ROOT=$root refused route add 203.0.113.0/24 blackhole
		XNF_PIN_ROOT=$root refused_json route add 203.0.113.0/24 blackhole
	done
	XNF_PIN_ROOT=$PUB/xnf refused attach f1 chain l3fwd
	tb_expect "XDP on f1" "$(tb_xdp_prog_id "$TB_DUT" f1)" = none
	tb_expect "nothing written into their directories" \
		"$(find "$PUB/xnf" "$PUB/site" "$PUB/theirs" "$PUB/open" -mindepth 1 | wc -l)" -eq 0

	XNF_PIN_ROOT=$PUB/ours tb_xnf route add 203.0.113.0/24 blackhole
	tb_expect "a root xnf makes" "$(stat -c '%U %a' "$PUB/ours")" = "root 700"
	chown 65534 "$PUB/ours/dev"
	XNF_PIN_ROOT=$PUB/ours refused route add 203.0.113.1/32 blackhole
	chown 0 "$PUB/ours/dev"
	XNF_PIN_ROOT=$PUB/ours tb_xnf destroy
}

# Under -j a refusal is one JSON document {"schema": "xnf/error/1",
# "error": "..."} on stdout, as bpftool does, and still changes nothing;
# without -j, stdout stays empty.
@test "under -j a refusal is a JSON error on stdout" {
	local args
	for args in "detach f0" "route add 203.0.113.0/33 dev d1" \
		"fw add prio 100 drop proto udp dport 5001" "chain set nosuch0 l3fwd"; do
		# shellcheck disable=SC2086 # the words of one command
		run --separate-stderr tb_xnf -j $args
		tb_expect "xnf -j $args: exit" "$status" -eq 1
		tb_expect "xnf -j $args: one error object" \
			"$(jq -c '[keys, .schema]' <<<"$output")" = '[["error","schema"],"xnf/error/1"]'
		tb_expect "xnf -j $args: a message" \
			"$(jq -r '.error | length > 0' <<<"$output")" = true
		# shellcheck disable=SC2086
		refuse $args
	done
}

# help is asked for: it goes to stdout, with exit 0.
@test "help of every object is on stdout, exit 0" {
	local obj
	for obj in attach detach chain status stats route fw fdb xconnect \
		config destroy plan worker; do
		run --separate-stderr tb_xnf "$obj" help
		tb_expect "xnf $obj help: exit" "$status" -eq 0
		tb_expect "xnf $obj help: on stdout" "$(grep -c '^Usage:' <<<"$output")" -ge 1
		tb_expect "xnf $obj help: nothing on stderr" "${#stderr}" -eq 0
	done
	run --separate-stderr tb_xnf help
	tb_expect "xnf help: exit" "$status" -eq 0
	tb_expect "xnf help: on stdout" "$(grep -c '^Usage:' <<<"$output")" -ge 1
}

# An attach refused on a fresh pin root leaves no instance behind, nor
# does a batch whose attach is refused after a route on the line before
# was written: a batch is all or nothing.
@test "a refused first attach leaves no instance, nor does a batch that failed" {
	local root="${XNF_PIN_ROOT%/*}/fresh$RANDOM"

	run ip netns exec "$TB_DUT" env XNF_PIN_ROOT="$root" "$XNF" attach f0 chain l3fwd
	tb_expect "attach to f0 (foreign program): exit" "$status" -eq 1
	tb_expect "no instance left at $root" "$(ls -A "$root" 2>/dev/null | wc -l)" -eq 0

	run ip netns exec "$TB_DUT" env XNF_PIN_ROOT="$root" "$XNF" -b - <<-EOB
		route add 203.0.113.0/24 blackhole
		attach f0 chain l3fwd
	EOB
	tb_expect "batch stops at the attach" "$status" -eq 1
	tb_expect "no instance left after the batch" "$(ls -A "$root" 2>/dev/null | wc -l)" -eq 0
	run ip netns exec "$TB_DUT" env XNF_PIN_ROOT="$root" "$XNF" -j route show
	tb_expect "route show: no instance" "$status" -eq 1
	rm -rf "$root"
	tb_expect "program on f0" "$(tb_xdp_prog_id "$TB_DUT" f0)" -eq "$FOREIGN_ID"
}

# An invisible character in a name (a zero width space, a right-to-left
# override, a no-break space) is shown escaped, never as itself.
@test "an error shows invisible characters in a name escaped" {
	local pair ch esc
	# U+200B, U+202E and U+00A0 in UTF-8, and as an error shows them.
	for pair in $'\xe2\x80\x8b \\u200b' $'\xe2\x80\xae \\u202e' $'\xc2\xa0 \\u00a0'; do
		ch=${pair%% *} esc=${pair#* }
		refuse attach "d0$ch" chain l3fwd
		tb_expect "the name's character, escaped" \
			"$(grep -cF "d0$esc" <<<"$stderr")" -eq 1
		tb_expect "the name's character, not as itself" \
			"$(grep -cF "$ch" <<<"$stderr")" -eq 0
	done
}

# A word of 100,000 bytes, on the command line, in a batch (10,000) and
# as a line of its own: each refusal quotes its first bytes, not all of
# it.
@test "an error quotes the first bytes of a huge word" {
	local big
	big=$(head -c 100000 /dev/zero | tr '\0' x)
	refuse route add "$big" blackhole
	tb_expect "the error of a huge word: bytes" "${#stderr}" -lt 300
	refuse -b <(printf 'route add %s blackhole\n' "${big:0:10000}")
	tb_expect "the error of a huge word in a batch: bytes" "${#stderr}" -lt 300
	refuse -b <(printf '#%s\n' "$big")
	tb_expect "the error of a huge line: bytes" "${#stderr}" -lt 300
}

# nobody_xnf ARGS...: xnf ARGS in the DUT as user and group nobody, no
# supplementary groups.
nobody_xnf()
{
	timeout "$TB_TIMEOUT" ip netns exec "$TB_DUT" setpriv --reuid=65534 \
		--regid=65534 --clear-groups env XNF_PIN_ROOT="$XNF_PIN_ROOT" \
		"$XNF" "$@"
}

# The modes nobody's test changed, as "MODE PATH" lines: put back.
NOBODY_MODES=
nobody_modes_restore()
{
	local mode path
	while read -r mode path; do
		chmod "$mode" "$path"
	done <<<"$NOBODY_MODES"
	NOBODY_MODES=
}

# nobody_refused ARGS...: `xnf ARGS` as nobody fails with one line on
# stderr, "Error:" and why, as bpftool says it (permission denied, or
# the bpf() call not permitted), nothing on stdout; and changes nothing.
nobody_refused()
{
	local before
	before=$(tb_snapshot)
	run --separate-stderr nobody_xnf "$@"
	echo "nobody: xnf $*: exit $status; stderr: $stderr"
	tb_expect "nobody: xnf $*: exit" "$status" -eq 1 &&
	tb_expect "nobody: xnf $*: one Error line" \
		"$(grep -c '^Error: .*\(Permission denied\|Operation not permitted\)' <<<"$stderr")/${#stderr_lines[@]}" = 1/1 &&
	tb_expect "nobody: xnf $*: stdout" "$output" = "" &&
	tb_expect "nobody: xnf $*: state" "$(tb_snapshot)" = "$before"
}

# The instance exists; a user who may not read it is told so, not that
# there is none: with the pin root's directory out of reach (as
# /sys/fs/bpf, mounted 0700), with the instance's directory out of reach
# (its 0700), and with the tables' pins reached but bpf() refused.
@test "a reader without the rights to the instance is told permission denied" {
	local bpffs=${XNF_PIN_ROOT%/*} empty=$TB_TMP/empty.conf
	command -v setpriv >/dev/null || skip "no setpriv"
	NOBODY_MODES=$(stat -c '%a %n' "$TB_TMP" "$bpffs" "$XNF_PIN_ROOT" \
		"$XNF_PIN_ROOT/tables")
	# Only the way to the bpffs, as to /sys/fs/bpf.
	chmod 0711 "$TB_TMP"
	nobody_xnf -V >/dev/null || skip "nobody cannot run $XNF"
	: >"$empty"
	chmod 0644 "$empty"
	nobody_refused status
	nobody_refused route show
	nobody_refused save
	nobody_refused apply check "$empty"
	# The bpffs open, the instance's directory not.
	chmod 0755 "$bpffs"
	nobody_refused status
	nobody_refused apply check "$empty"
	# The pins reached, bpf() refused (or the pins' own modes).
	chmod 0755 "$XNF_PIN_ROOT" "$XNF_PIN_ROOT/tables"
	nobody_refused status
	nobody_refused apply check "$empty"
	run --separate-stderr nobody_xnf -j route show
	tb_expect "nobody: -j route show: exit" "$status" -eq 1
	tb_expect "nobody: -j route show: the error" \
		"$(jq -r '.error | test("Permission denied|Operation not permitted")' <<<"$output")" = true
	nobody_modes_restore
}

# Where there is no instance, a list of what is attached is empty, as `ip
# link` and `nft list ruleset` print nothing where there is nothing: exit
# 0, nothing printed (under -j the list without a device). Asking for one
# device there is still a refusal, and neither creates anything.
@test "without an instance, status lists nothing and exits 0; status DEV is refused" {
	local root="${XNF_PIN_ROOT%/*}/none$RANDOM" cmd

	for cmd in status "chain show" s st; do
		# shellcheck disable=SC2086 # $cmd is one or two words
		XNF_PIN_ROOT=$root run --separate-stderr tb_xnf $cmd
		tb_expect "$cmd: exit" "$status" -eq 0
		tb_expect "$cmd: stdout" "${#output}" -eq 0
		tb_expect "$cmd: stderr" "${#stderr}" -eq 0
		# shellcheck disable=SC2086
		XNF_PIN_ROOT=$root run --separate-stderr tb_xnf -j $cmd
		tb_expect "-j $cmd: exit" "$status" -eq 0
		tb_expect "-j $cmd: the list with no device" \
			"$(jq -c '[.schema, .devices]' <<<"$output")" = '["xnf/status-list/1",[]]'
		tb_expect "-j $cmd: stderr" "${#stderr}" -eq 0
	done
	XNF_PIN_ROOT=$root refused status d0
	XNF_PIN_ROOT=$root refused chain show d0
	XNF_PIN_ROOT=$root refused_json status d0
	tb_expect "no instance made at $root" "$(ls -A "$root" 2>/dev/null | wc -l)" -eq 0
	[ ! -e "$root" ]
}
