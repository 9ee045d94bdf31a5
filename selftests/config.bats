#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# config.bats - the configuration as a file: `xnf save`, `xnf apply`, the
# all-or-nothing `xnf -b`, `xnf detach all`, and the lines they read.
#
# One test bed for the file (testbed/testbed.bash), plus a veth pair
# f0/f1 in the DUT with a foreign XDP program on f0 (an attach that fails
# after every check passed). Each test starts from nothing attached and no
# instance, and leaves it so.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=180}"

load ../testbed/testbed

GEN=${GEN:-$(dirname "$XNF")/xnf-gen}
SINK=${SINK:-$(dirname "$XNF")/xnf-sink}

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
	[ -z "$TB_SKIP" ] || return 0
	tb_setup
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

teardown()
{
	local d
	[ -z "$TB_SKIP" ] || return 0
	tb_xnf detach all || true
	tb_xnf destroy 2>/dev/null || true
	# The hostile veths (each pair goes with either end).
	for d in "${HOSTILE[@]}" "$HCTL"; do
		! ip -n "$TB_DUT" link show dev "$d" >/dev/null 2>&1 ||
			ip -n "$TB_DUT" link del dev "$d"
	done
}

# Every object and mode: two attachments (native tail-called LPM with a
# placement; generic fused fib), routes of every type, both families, by
# gateway and by MAC, rules of every field, the default policy, an FDB
# entry, a cross-connect, an exception action changed, the flow cache
# off and connection tracking's settings changed.
full_config()
{
	tb_xnf attach d0 chain firewall,l3fwd,l2fwd cores 1 &&
	tb_xnf attach d1 chain firewall,l3fwd mode generic fused fib &&
	tb_routes &&
	tb_xnf route add 203.0.113.0/24 via $TB_SINK4 dev d1 &&
	tb_xnf route add 203.0.113.77/32 blackhole &&
	tb_xnf route add 203.0.113.78/32 unreachable &&
	tb_xnf route add 203.0.113.80/32 dev d1 lladdr 02:00:00:00:00:99 &&
	tb_xnf fw add prio 5 allow proto udp src 192.0.2.0/24 dst 198.51.100.0/24 sport 1000-2000 dport 53 &&
	tb_xnf fw add drop proto tcp dport 23 &&
	tb_xnf fw add allow src 2001:db8:1::/64 &&
	tb_xnf fw default drop &&
	tb_xnf fdb add 02:00:00:00:00:aa dev d1 &&
	tb_xnf xconnect d0 d1 lladdr 02:00:00:00:00:01 02:00:00:00:00:02 &&
	tb_xnf config set no_route drop &&
	tb_xnf config set flow_cache off &&
	tb_xnf config set ct_timeout_established 3600 &&
	tb_xnf config set ct_fragments drop &&
	tb_xnf config set log_reasons martian,bad_csum &&
	tb_xnf config set log_reasons_limit 3/minute
}

# prog and link ids of what runs: equal when nothing was reloaded.
ids()
{
	tb_xnf -j status | jq -c '[.devices[] | {dev, link_id, prog_id, nfs}]'
}

@test "save | apply on a fresh instance rebuilds the same state, byte for byte" {
	run full_config
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	tb_xnf save >"$TB_TMP/a.conf"
	grep -q '^attach d0 chain firewall,l3fwd,l2fwd mode native tailcall lpm cores 1$' "$TB_TMP/a.conf"
	grep -q '^attach d1 chain firewall,l3fwd mode generic fused fib$' "$TB_TMP/a.conf"
	grep -q '^xconnect add d0 d1 lladdr 02:00:00:00:00:01 02:00:00:00:00:02$' "$TB_TMP/a.conf"
	grep -q '^config set flow_cache off$' "$TB_TMP/a.conf"
	grep -q '^config set ct_timeout_established 3600$' "$TB_TMP/a.conf"
	grep -q '^config set ct_fragments drop$' "$TB_TMP/a.conf"
	grep -q '^config set log_reasons bad_csum,martian$' "$TB_TMP/a.conf"
	grep -q '^config set log_reasons_limit 3/minute$' "$TB_TMP/a.conf"
	tb_xnf detach all
	tb_xnf destroy
	[ "$(tb_xdp_prog_id "$TB_DUT" d0)" = none ]

	run -0 tb_xnf -j apply - <"$TB_TMP/a.conf"
	jq -e '.changes > 0 and .changed.attached == 2' <<<"$output"
	tb_xnf save >"$TB_TMP/b.conf"
	diff -u "$TB_TMP/a.conf" "$TB_TMP/b.conf"
	[ "$(tb_xdp_prog_id "$TB_DUT" d0)" != none ]
	# What it printed is what runs.
	tb_xnf -j status | jq -e '.devices[] | select(.dev == "d1") |
		.fused and .mode == "generic" and .l3fwd == "fib" and .chain == "firewall,l3fwd"'
}

@test "ct_max is the size of the instance an apply makes; on a running one a change is refused" {
	local before
	printf '%s\n' "config set ct_max 2048" "config set ct_timeout_udp 45" \
		>"$TB_TMP/ct.conf"
	run -0 tb_xnf apply "$TB_TMP/ct.conf"
	tb_expect "the table's size" "$(tb_xnf -j ct stats | jq .max)" -eq 2048
	tb_expect "the timeout" "$(tb_xnf -j config show | jq -r .ct_timeout_udp)" = 45
	before=$(tb_xnf save)
	grep -qx 'config set ct_max 2048' <<<"$before"

	run -1 tb_xnf config set ct_max 4096
	[[ "$output" == Error:* ]]
	tb_expect "size kept" "$(tb_xnf -j ct stats | jq .max)" -eq 2048
	tb_expect "nothing changed" "$(tb_xnf save)" = "$before"

	# What the refusal says: destroy, and apply the file again.
	sed 's/^config set ct_max 2048$/config set ct_max 4096/' <<<"$before" \
		>"$TB_TMP/ct4096.conf"
	tb_xnf destroy
	run -0 tb_xnf apply "$TB_TMP/ct4096.conf"
	tb_expect "resized" "$(tb_xnf -j ct stats | jq .max)" -eq 4096
	tb_expect "the other settings kept" \
		"$(tb_xnf -j config show | jq -r .ct_timeout_udp)" = 45
}

@test "the firewall's ct state, iif, icmp and tcp flags matches and fw_input: save | apply rebuilds them, fw show -j names them" {
	local fw

	tb_xnf attach d0 chain conntrack,firewall,l3fwd
	tb_xnf fw add allow ct state established,related
	tb_xnf fw add drop ct state invalid
	tb_xnf fw add allow iif d0 proto tcp dport 22 ct state new
	tb_xnf fw add allow icmp type echo-request
	tb_xnf fw add drop icmpv6 type destination-unreachable code port-unreachable
	tb_xnf fw add drop tcp flags syn / syn,ack src 192.0.2.0/24
	tb_xnf fw add drop tcp flags fin,rst
	tb_xnf fw default drop
	tb_xnf config set fw_input rules
	tb_xnf save >"$TB_TMP/a.conf"
	grep -qx 'fw add prio 30 allow proto tcp dport 22 ct state new iif d0' "$TB_TMP/a.conf"
	grep -qx 'fw add prio 60 drop src 192.0.2.0/24 tcp flags syn / syn,ack' "$TB_TMP/a.conf"
	fw=$(tb_xnf -j fw show)
	jq -e '.rules[0].ct_state == "established,related" and
		.rules[2].iif == "d0" and .rules[3].icmp_type == "echo-request" and
		.rules[3].proto == "icmp" and
		.rules[4].icmp_code == "port-unreachable" and
		.rules[5].tcp_flags == "syn / syn,ack" and
		.rules[6].tcp_flags == "fin,rst"' <<<"$fw"
	tb_xnf detach all
	tb_xnf destroy
	tb_xnf apply "$TB_TMP/a.conf"
	tb_xnf save >"$TB_TMP/b.conf"
	diff "$TB_TMP/a.conf" "$TB_TMP/b.conf"
}

@test "apply of what runs changes nothing: no program reloaded, counters kept" {
	local before after hits
	tb_xnf attach d0 chain firewall,l3fwd
	tb_xnf attach d1 chain firewall,l3fwd
	tb_routes
	tb_xnf fw add prio 10 allow proto icmp src 192.0.2.0/24
	tb_xnf save >"$TB_TMP/a.conf"
	tb_ping "$TB_SRC" "$TB_SINK4" 3
	hits=$(tb_xnf -j fw show | jq '.rules[] | select(.prio == 10) | .packets')
	tb_expect "the rule counted the pings" "$hits" -ge 3
	before=$(ids)

	run -0 tb_xnf -j apply "$TB_TMP/a.conf"
	tb_expect "changes" "$(jq .changes <<<"$output")" -eq 0
	run -0 tb_xnf -j apply "$TB_TMP/a.conf"
	tb_expect "changes the second time" "$(jq .changes <<<"$output")" -eq 0
	after=$(ids)
	tb_expect "programs and links" "$after" = "$before"
	tb_expect "the rule's counter" \
		"$(tb_xnf -j fw show | jq '.rules[] | select(.prio == 10) | .packets')" -eq "$hits"
}

@test "apply changes only the difference, one element at a time" {
	local d0_link d1_prog out
	tb_xnf attach d0 chain firewall,l3fwd
	tb_xnf attach d1 chain firewall,l3fwd
	tb_routes
	tb_xnf route add 203.0.113.0/24 blackhole
	tb_xnf route add 203.0.113.99/32 blackhole
	tb_xnf fw add prio 10 allow proto icmp src 192.0.2.0/24
	tb_ping "$TB_SRC" "$TB_SINK4" 2
	local hits
	hits=$(tb_xnf -j fw show | jq '.rules[] | select(.prio == 10) | .packets')
	d0_link=$(tb_xnf -j status | jq '.devices[] | select(.dev == "d0") | .link_id')
	d1_prog=$(tb_xnf -j status | jq '.devices[] | select(.dev == "d1") | .prog_id')

	# d0's chain, one route replaced, one removed, one added, a rule
	# added; d1 as it was.
	tb_xnf save | sed -e 's/^attach d0 chain firewall,l3fwd /attach d0 chain l3fwd /' \
		-e 's|^route add 203.0.113.0/24 blackhole$|route add 203.0.113.0/24 unreachable|' \
		-e '\|^route add 203.0.113.99/32|d' >"$TB_TMP/b.conf"
	echo "route add 203.0.113.100/32 blackhole" >>"$TB_TMP/b.conf"
	echo "fw add prio 20 drop proto tcp dport 23" >>"$TB_TMP/b.conf"

	run -0 tb_xnf -j apply "$TB_TMP/b.conf"
	out=$output
	tb_expect "chains switched" "$(jq .changed.chains <<<"$out")" -eq 1
	tb_expect "attached" "$(jq '.changed.attached + .changed.detached + .changed.reattached' <<<"$out")" -eq 0
	tb_expect "firewall switches" "$(jq .changed.firewall <<<"$out")" -eq 1
	tb_expect "routes" "$(jq .changed.routes <<<"$out")" -eq 3
	tb_expect "total" "$(jq .changes <<<"$out")" -eq 5
	# A chain switch keeps the link; d1 was not touched.
	tb_expect "d0's link" "$(tb_xnf -j status | jq '.devices[] | select(.dev == "d0") | .link_id')" -eq "$d0_link"
	tb_expect "d1's program" "$(tb_xnf -j status | jq '.devices[] | select(.dev == "d1") | .prog_id')" -eq "$d1_prog"
	tb_expect "d0's chain" "$(tb_xnf -j status | jq -r '.devices[] | select(.dev == "d0") | .chain')" = l3fwd
	tb_expect "the kept rule's counter" \
		"$(tb_xnf -j fw show | jq '.rules[] | select(.prio == 10) | .packets')" -eq "$hits"
	tb_xnf save >"$TB_TMP/c.conf"
	# The added lines print where their table has them.
	diff <(sort "$TB_TMP/b.conf") <(sort "$TB_TMP/c.conf")
}

@test "apply of a file with one bad line changes nothing, and names the line" {
	local before
	tb_xnf attach d0 chain l3fwd
	tb_routes
	before=$(tb_xnf save)
	printf '%s\n' "attach d0 chain firewall,l3fwd" "attach d1 chain l3fwd" \
		"fw default drop" "route add 203.0.113.0/24 via 198.51.100.250" \
		>"$TB_TMP/bad.conf"
	run -1 tb_xnf -j apply "$TB_TMP/bad.conf"
	jq -e '.error | test("bad.conf:4:")' <<<"$output"
	tb_expect "the running configuration" "$(tb_xnf save)" = "$before"
	# A line that is not configuration is refused the same way.
	printf '%s\n' "fw default drop" "stats" >"$TB_TMP/bad2.conf"
	run -1 tb_xnf -j apply "$TB_TMP/bad2.conf"
	jq -e '.error | test("bad2.conf:2:")' <<<"$output"
	tb_expect "after a show line" "$(tb_xnf save)" = "$before"
	# check: every line checked, nothing applied.
	run -0 tb_xnf apply check <(printf '%s\n' "attach d1 chain l3fwd" "fw default drop")
	tb_expect "after check" "$(tb_xnf save)" = "$before"
	run -1 tb_xnf apply check "$TB_TMP/bad.conf"
}

@test "apply check prints each change a line of the configuration, in order, and changes nothing" {
	local before gone want
	tb_xnf attach d0 chain l3fwd
	tb_routes
	tb_xnf fw add prio 10 drop proto udp dport 5001
	before=$(tb_xnf save)
	gone=$(grep '^route add 192.0.2.0/24 ' <<<"$before")
	{ grep -v -e '^route add 192.0.2.0/24 ' -e '^fw add prio 10 ' <<<"$before" |
		sed -e 's/^attach d0 chain l3fwd /attach d0 chain firewall,l3fwd /' \
		    -e 's/^config set no_route pass$/config set no_route drop/'
	  echo "route add 203.0.113.0/24 blackhole"
	  echo "attach d1 chain l2fwd"; } >"$TB_TMP/new.conf"
	run -0 tb_xnf -j apply check "$TB_TMP/new.conf"
	want=$(jq -nc --arg gone "$gone" '[
		["change", "config", "config set no_route drop", "config set no_route pass"],
		["remove", "fw_rule", "fw add prio 10 drop proto udp dport 5001", null],
		["change", "attach", "attach d0 chain firewall,l3fwd mode native tailcall lpm",
		 "attach d0 chain l3fwd mode native tailcall lpm"],
		["add", "attach", "attach d1 chain l2fwd mode native tailcall lpm", null],
		["add", "route", "route add 203.0.113.0/24 blackhole", null],
		["remove", "route", $gone, null]]')
	tb_expect "the changes, in the order the apply makes them" \
		"$(jq -c '[.changes[] | [.op, .object, .line, .was]]' <<<"$output")" = "$want"
	tb_expect "counted" "$(jq .count <<<"$output")" -eq 6
	run -0 tb_xnf apply check "$TB_TMP/new.conf"
	tb_expect "as text: a mark and the line" "$(cut -c1-2 <<<"$output" | tr -d '\n')" = "~ - ~ + + - "
	tb_expect "nothing changed" "$(tb_xnf save)" = "$before"
	tb_xnf apply "$TB_TMP/new.conf"
	run -0 tb_xnf -j apply check "$TB_TMP/new.conf"
	tb_expect "applied: nothing left to change" "$(jq .count <<<"$output")" -eq 0
}

@test "an apply that fails after its checks undoes what it changed" {
	local before
	tb_xnf attach d0 chain firewall,l3fwd
	tb_routes
	before=$(tb_xnf save)
	# The firewall and a route change first; the attach to f0 fails at
	# the kernel (a program xnf did not attach runs there).
	{ tb_xnf save | sed 's/^fw default allow$/fw default drop/'
	  echo "route add 203.0.113.0/24 blackhole"
	  echo "attach f0 chain l3fwd"; } >"$TB_TMP/f0.conf"
	run -1 tb_xnf apply "$TB_TMP/f0.conf"
	echo "$output"
	tb_expect "the running configuration" "$(tb_xnf save)" = "$before"
	tb_expect "f0's program" "$(tb_xdp_prog_id "$TB_DUT" f0)" = "$FOREIGN_ID"
}

@test "xnf -b is all or nothing" {
	local before
	tb_xnf attach d0 chain l3fwd
	before=$(tb_xnf save)
	# A wrong line: nothing runs.
	run -1 tb_xnf -b <(printf '%s\n' "route add 203.0.113.0/24 blackhole" "fw add prio x drop")
	tb_expect "after a bad line 2" "$(tb_xnf save)" = "$before"
	# A line that fails for real: the ones before it are undone.
	run -1 tb_xnf -b <(printf '%s\n' "route add 203.0.113.0/24 blackhole" \
		"fw default drop" "attach f0 chain l3fwd")
	tb_expect "after a failed attach" "$(tb_xnf save)" = "$before"
	tb_expect "f0's program" "$(tb_xdp_prog_id "$TB_DUT" f0)" = "$FOREIGN_ID"
	# And a good batch runs in order, reads included.
	run -0 tb_xnf -b <(printf '%s\n' "route add 203.0.113.0/24 blackhole" "route show")
	[[ "$output" == *"203.0.113.0/24"* ]]
}

@test "batch lines are read whole: long lines, NUL bytes, open quotes, CRLF" {
	local long
	tb_xnf attach d0 chain firewall,l3fwd
	# A comment longer than any buffer, with a command where a 4,096-byte
	# buffer would have cut it.
	long="#$(printf '%*s' 4094 '' | tr ' ' x)fw default drop"
	run -0 tb_xnf -b <(printf '%s\n' "$long")
	tb_expect "default" "$(tb_xnf -j fw show | jq -r .default)" = allow
	# A NUL cut a rule down to a broader one: now the line is refused.
	run -1 tb_xnf -j -b <(printf 'fw add prio 7 drop proto udp\0 dport 53\n')
	jq -e '.error | test(":1:")' <<<"$output"
	tb_expect "rules after a NUL" "$(tb_xnf -j fw show | jq '.rules | length')" -eq 0
	run -1 tb_xnf -b <(printf '%s\n' 'route add "203.0.113.0/24 blackhole')
	tb_expect "routes after an open quote" "$(tb_xnf -j route show | jq '.routes | length')" -eq 0
	run -0 tb_xnf -b <(printf 'fw add prio 8 drop proto udp dport 53\r\n# done\r\n')
	tb_expect "a CRLF line" "$(tb_xnf -j fw show | jq -c '.rules[0] | [.prio, .dport]')" = '[8,"53"]'
	# The same reader for apply.
	run -1 tb_xnf apply <(printf 'attach d0 chain firewall,l3fwd\nfw add prio 9 drop\0\n')
	tb_expect "rules after apply with a NUL" "$(tb_xnf -j fw show | jq '.rules | length')" -eq 1
}

# xnf in the DUT as tb_xnf runs it, within 20 s and 2 GiB: one that
# reads what never ends ends as 124 (timeout) or out of memory, and takes
# nobody else's.
xnf20()
{
	prlimit --as=$((2 << 30)) -- timeout 20 ip netns exec "$TB_DUT" \
		env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" "$@"
}

@test "the input of -b and apply: never a device, lines of at most 64 KiB, files of at most 512 MiB" {
	local before line
	tb_xnf attach d0 chain l3fwd
	tb_routes
	before=$(tb_xnf save)
	# A device is refused before it is read, through a symlink too:
	# reading this one would never end, nor /dev/zero, on standard input
	# too.
	ln -s /dev/ptmx "$TB_TMP/ptmx"
	ln -s /dev/zero "$TB_TMP/zero"
	run xnf20 apply "$TB_TMP/ptmx"
	tb_expect "apply of a device: exit" "$status" -eq 1
	run xnf20 -b "$TB_TMP/ptmx"
	tb_expect "-b of a device: exit" "$status" -eq 1
	run xnf20 apply "$TB_TMP/zero"
	tb_expect "apply of /dev/zero: exit" "$status" -eq 1
	run xnf20 -b - </dev/zero
	tb_expect "-b - from /dev/zero: exit" "$status" -eq 1
	run xnf20 apply "$TB_TMP"
	tb_expect "apply of a directory: exit" "$status" -eq 1
	# A line of 64 KiB is read; one byte more is refused, as is one that
	# never ends, once it is too long (not when memory runs out).
	line="#$(head -c 65535 /dev/zero | tr '\0' x)"
	run -0 tb_xnf -b <(printf '%s\n' "$line")
	run -1 tb_xnf -b <(printf '%s\n' "${line}x")
	run xnf20 -b <(tr '\0' x </dev/zero)
	tb_expect "an endless line: exit" "$status" -eq 1
	# 512 MiB are read, through a pipe, and refused when there is more;
	# as a file, refused by its size. (Whole, each of them would be an
	# empty configuration: everything detached.)
	run xnf20 apply <(yes "$(head -c 1023 /dev/zero | tr '\0' '#')" |
		head -c $(((512 << 20) + 1024)))
	tb_expect "apply of more than 512 MiB: exit" "$status" -eq 1
	truncate -s 513M "$TB_TMP/big"
	run -1 tb_xnf apply "$TB_TMP/big"
	rm "$TB_TMP/big"
	tb_expect "nothing changed" "$(tb_xnf save)" = "$before"
}

@test "an apply in a batch reads a regular file it names, never standard input nor a pipe" {
	local before
	tb_xnf attach d0 chain l3fwd
	tb_routes
	before=$(tb_xnf save)
	# `-b -` read standard input to its end: read again, it would be an
	# empty configuration, and detach everything.
	run -1 tb_xnf -b - <<<"apply -"
	tb_expect "after apply - in a batch" "$(tb_xnf save)" = "$before"
	# A pipe could keep the batch's lock forever: this one has no writer.
	mkfifo "$TB_TMP/fifo"
	run xnf20 -b <(echo "apply $TB_TMP/fifo")
	tb_expect "apply of a fifo in a batch: exit" "$status" -eq 1
	tb_expect "after apply FIFO in a batch" "$(tb_xnf save)" = "$before"
	# A regular file is applied, under the batch's lock.
	sed 's/^fw default allow$/fw default drop/' <<<"$before" >"$TB_TMP/a.conf"
	run -0 tb_xnf -b <(echo "apply $TB_TMP/a.conf")
	tb_expect "the file's configuration" "$(tb_xnf save)" = "$(cat "$TB_TMP/a.conf")"
}

@test "detach all leaves no XDP program and keeps the tables" {
	tb_xnf attach d0 chain l3fwd
	tb_xnf attach d1 chain l3fwd
	tb_routes
	tb_xnf save >"$TB_TMP/a.conf"
	run -0 tb_xnf detach all
	[ "$(tb_xdp_prog_id "$TB_DUT" d0)" = none ]
	[ "$(tb_xdp_prog_id "$TB_DUT" d1)" = none ]
	tb_expect "f0 (not xnf's)" "$(tb_xdp_prog_id "$TB_DUT" f0)" = "$FOREIGN_ID"
	tb_expect "routes" "$(tb_xnf -j route show | jq '.routes | length')" -eq 8
	run -0 tb_xnf detach all
	run -0 tb_xnf apply "$TB_TMP/a.conf"
	[ "$(tb_xdp_prog_id "$TB_DUT" d0)" != none ]
	tb_ping_ok "$TB_SRC" "$TB_SINK4" 3
}

# A multipath route of three next hops on d1: through the sink's address
# and two by MAC alone.
MP=203.0.113.0/24
NH_A=02:78:6e:00:0f:01
NH_B=02:78:6e:00:0f:02

mp_add()
{
	tb_xnf route add $MP nexthop via $TB_SINK4 dev d1 \
		nexthop dev d1 lladdr $NH_B nexthop dev d1 lladdr $NH_A
}

# mp_route: the JSON object of $MP in `xnf -j route show`: its group id,
# next hops (ids, MACs) and each one's share of the buckets.
mp_route()
{
	tb_xnf -j route show | jq -ec --arg d $MP '.routes[] | select(.dst == $d)'
}

mp_macs()
{
	mp_route | jq -c '[.nexthops[].lladdr] | sort'
}

@test "a multipath route is saved with its next hops, and save | apply of it changes nothing" {
	local before
	tb_xnf attach d0 chain l3fwd
	tb_routes
	mp_add
	tb_xnf save >"$TB_TMP/a.conf"
	# Next hops sorted (by gateway, then device and MAC), each with
	# the MAC it runs with.
	grep -qx "route add $MP nexthop dev d1 lladdr $NH_A nexthop dev d1 lladdr $NH_B nexthop via $TB_SINK4 dev d1 lladdr $TB_MAC_K0" \
		"$TB_TMP/a.conf"
	before=$(mp_route)
	run -0 tb_xnf -j apply "$TB_TMP/a.conf"
	tb_expect "changes" "$(jq .changes <<<"$output")" -eq 0
	tb_expect "the group, its next hops and buckets" "$(mp_route)" = "$before"
	# The same set in another order is the same route.
	sed "s|^route add $MP .*|route add $MP nexthop via $TB_SINK4 dev d1 lladdr $TB_MAC_K0 nexthop dev d1 lladdr $NH_B nexthop dev d1 lladdr $NH_A|" \
		"$TB_TMP/a.conf" >"$TB_TMP/b.conf"
	! cmp -s "$TB_TMP/a.conf" "$TB_TMP/b.conf"
	run -0 tb_xnf -j apply "$TB_TMP/b.conf"
	tb_expect "changes, next hops reordered" "$(jq .changes <<<"$output")" -eq 0
	tb_expect "after the reordered file" "$(mp_route)" = "$before"
	# On a fresh instance the file makes it again, byte for byte.
	tb_xnf detach all
	tb_xnf destroy
	run -0 tb_xnf apply "$TB_TMP/a.conf"
	tb_xnf save >"$TB_TMP/c.conf"
	diff -u "$TB_TMP/a.conf" "$TB_TMP/c.conf"
	tb_expect "buckets" "$(mp_route | jq '[.nexthops[].buckets] | add')" -eq 128
}

@test "a changed set of next hops replaces the multipath route in place, and a failed apply restores it" {
	local before after
	tb_xnf attach d0 chain l3fwd
	tb_routes
	mp_add
	before=$(mp_route)
	tb_xnf save | sed "s| nexthop dev d1 lladdr $NH_B||" >"$TB_TMP/b.conf"
	run -0 tb_xnf -j apply "$TB_TMP/b.conf"
	tb_expect "routes changed" "$(jq .changed.routes <<<"$output")" -eq 1
	tb_expect "changes" "$(jq .changes <<<"$output")" -eq 1
	after=$(mp_route)
	tb_expect "the same group" "$(jq .group <<<"$after")" -eq "$(jq .group <<<"$before")"
	tb_expect "next hops left" "$(jq '.nexthops | length' <<<"$after")" -eq 2
	tb_expect "the one gone" "$(jq --arg m $NH_B '[.nexthops[] | select(.lladdr == $m)] | length' <<<"$after")" -eq 0
	# Resilient: each staying next hop keeps at least its buckets.
	jq -e -n --argjson b "$before" --argjson a "$after" '
		[$a.nexthops[] as $n | ($b.nexthops[] | select(.id == $n.id) | .buckets) <= $n.buckets] | all'
	run -0 tb_xnf -j apply "$TB_TMP/b.conf"
	tb_expect "changes the second time" "$(jq .changes <<<"$output")" -eq 0

	# Another set, then an attach the kernel refuses: the set from
	# before comes back.
	{ sed "s| nexthop dev d1 lladdr $NH_A| nexthop dev d1 lladdr $NH_B|" "$TB_TMP/b.conf"
	  echo "attach f0 chain l3fwd"; } >"$TB_TMP/f0.conf"
	grep -q "lladdr $NH_B" "$TB_TMP/f0.conf"
	run -1 tb_xnf apply "$TB_TMP/f0.conf"
	tb_expect "the next hops" "$(mp_macs)" = "$(jq -c '[.nexthops[].lladdr] | sort' <<<"$after")"
	tb_expect "f0's program" "$(tb_xdp_prog_id "$TB_DUT" f0)" = "$FOREIGN_ID"

	# A batch checks a multipath line in memory, then runs it.
	run -0 tb_xnf -b <(printf '%s\n' \
		"route replace $MP nexthop dev d1 lladdr $NH_A nexthop dev d1 lladdr $NH_B" \
		"route add 203.0.113.128/25 nexthop dev d1 lladdr $NH_A nexthop dev d1 lladdr $NH_B")
	tb_expect "after the batch" "$(mp_macs)" = "[\"$NH_A\",\"$NH_B\"]"
	run -1 tb_xnf -b <(printf '%s\n' "route del 203.0.113.128/25" \
		"route add $MP nexthop dev d1 lladdr $NH_A nexthop dev d1 lladdr $NH_B")
	tb_expect "a refused batch changed nothing" \
		"$(tb_xnf -j route show | jq '[.routes[] | select(.dst == "203.0.113.128/25")] | length')" -eq 1
}

@test "apply check names a wrong multipath line and changes nothing" {
	local before
	tb_xnf attach d0 chain l3fwd
	tb_routes
	mp_add
	before=$(tb_xnf save)
	{ tb_xnf save | grep -v "^route add $MP "
	  echo "route add $MP nexthop dev d1 lladdr $NH_A nexthop dev d1 lladdr $NH_A"; } >"$TB_TMP/bad.conf"
	run -1 tb_xnf -j apply check "$TB_TMP/bad.conf"
	jq -e --arg l "bad.conf:$(wc -l <"$TB_TMP/bad.conf"):" '.error | contains($l)' <<<"$output"
	printf '%s\n' "route add 198.51.100.0/24 via $TB_SINK4" \
		"route add $MP nexthop dev d1 lladdr $NH_A nexthop blackhole" >"$TB_TMP/bad2.conf"
	run -1 tb_xnf -j apply "$TB_TMP/bad2.conf"
	jq -e '.error | contains("bad2.conf:2:")' <<<"$output"
	printf '%s\n' "route add $MP nexthop dev nosuch0 lladdr $NH_A nexthop dev d1 lladdr $NH_B" \
		>"$TB_TMP/bad3.conf"
	run -1 tb_xnf -j apply check "$TB_TMP/bad3.conf"
	jq -e '.error | contains("bad3.conf:1:")' <<<"$output"
	tb_expect "the running configuration" "$(tb_xnf save)" = "$before"
	# The right file passes the check.
	run -0 tb_xnf apply check <(tb_xnf save)
}

# traffic_start N: xnf-sink on k0 and N frames at 2,000/s from s0 to it,
# in the background (GPID); S0, D1, K0: the counters the accounting
# starts from. IPv6 is off on s0 and d1, so that no frame of the hosts'
# own shares those rings.
traffic_start()
{
	tb_src sysctl -q -w net.ipv6.conf.s0.disable_ipv6=1
	tb_dut sysctl -q -w net.ipv6.conf.d1.disable_ipv6=1
	tb_bg "$TB_SINK" "$SINK" k0 duration 120 ready "$TB_TMP/sink.ready" -j \
		>"$TB_TMP/sink.json"
	tb_until "xnf-sink to attach" test -e "$TB_TMP/sink.ready"
	S0=$(tb_link "$TB_SRC" s0 tx.dropped)
	D1=$(tb_link "$TB_DUT" d1 tx.dropped)
	K0=$(tb_link "$TB_SINK" k0 rx.packets)
	tb_bg "$TB_SRC" "$GEN" s0 count "$1" rate 2000 duration 100 size 64 \
		src $TB_SRC4 dst $TB_SINK4 smac $TB_MAC_S0 dmac $TB_MAC_D0 -j \
		>"$TB_TMP/gen.json"
	GPID=$TB_BG_PID
}

# Device names as hostile as the kernel allows them (dev_valid_name: 1 to
# 15 bytes, not "." or "..", no '/', ':' or whitespace): a quote or a '#'
# first, every quoting character of the shell, a prefix of "help", a word
# of the route line, 15 bytes, UTF-8, and bytes that are not UTF-8. Veth
# pairs in the DUT: HX-HH, HP-HN, HQ-HL, HU-HB. The kernel allows control
# characters too (HCTL); xnf refuses them.
HX='"x' HH='#x' HP=h HN=nexthop HQ='a"b\c$d`e'"'" HL=0123456789abcde
HU=$'\xc3\xa9' HB=$'\xff\xfe' HCTL=$'q\x01'
HOSTILE=("$HX" "$HH" "$HP" "$HN" "$HQ" "$HL" "$HU" "$HB")

hostile_veths()
{
	local i d
	for ((i = 0; i < 8; i += 2)); do
		ip -n "$TB_DUT" link add name "${HOSTILE[i]}" type veth \
			peer name "${HOSTILE[i + 1]}" || return 1
	done
	for d in "${HOSTILE[@]}"; do
		ip -n "$TB_DUT" link set dev "$d" up || return 1
	done
}

# Every object, each at the largest values its limits allow, on the
# hostile devices: attachments in every mode with a placement on every
# CPU; 16 next hops (XNF_NHG_PATHS) of the longest IPv6 addresses, and 16
# by MAC alone; routes of every type with the longest prefixes; rules with
# every field at its end of the range; FDB entries, a cross-connect, every
# exception action changed.
hostile_config()
{
	local i d k hops6=() hops4=()
	for ((i = 0; i < 16; i++)); do
		d=${HOSTILE[i % 8]}
		hops6+=(nexthop via "2001:db8:ffff:ffff:ffff:ffff:ffff:ff$(printf %02x $((i + 1)))"
			dev "$d" lladdr "02:ff:ff:ff:ff:$(printf %02x $((i + 1)))")
		hops4+=(nexthop dev "$d" lladdr "02:ee:ee:ee:ee:$(printf %02x $((i + 1)))")
	done
	tb_xnf attach "$HX" chain firewall,l3fwd,l2fwd mode generic \
		cores "0-$(($(nproc) - 1))" &&
	tb_xnf attach "$HP" chain firewall,l3fwd mode generic fused fib &&
	tb_xnf attach "$HB" chain l2fwd mode generic &&
	tb_xnf route add 2001:db8:ffff:ffff:ffff:ffff:ffff:ff00/120 "${hops6[@]}" &&
	tb_xnf route add 203.0.113.0/24 "${hops4[@]}" &&
	tb_xnf route add 198.51.100.255/32 via 198.51.100.254 dev "$HH" lladdr 02:ff:ff:ff:ff:ff &&
	tb_xnf route add 2001:db8:ffff:ffff:ffff:ffff:ffff:ffff/128 \
		via 2001:db8:ffff:ffff:ffff:ffff:ffff:fffe dev "$HQ" lladdr 02:ff:ff:ff:ff:fe &&
	tb_xnf route add 192.0.2.128/25 dev "$HN" lladdr 02:00:00:00:00:01 &&
	tb_xnf route add 192.0.2.1/32 local &&
	tb_xnf route add 192.0.2.2/32 blackhole &&
	tb_xnf route add 2001:db8::/32 unreachable &&
	tb_xnf route add 0.0.0.0/0 kernel &&
	tb_xnf fw add prio 4294967295 drop proto 255 \
		src 2001:db8:ffff:ffff:ffff:ffff:ffff:ffff/128 \
		dst 2001:db8:ffff:ffff:ffff:ffff:ffff:fffe/128 &&
	tb_xnf fw add prio 0 allow proto sctp src 255.255.255.255/32 dst 0.0.0.0/0 \
		sport 0-65535 dport 65535 &&
	tb_xnf fw add prio 1 drop sport 65535 dport 0-65535 &&
	tb_xnf fw default drop &&
	tb_xnf fdb add 02:ff:ff:ff:ff:ff dev "$HQ" &&
	tb_xnf fdb add 02:00:00:00:00:01 dev "$HU" &&
	tb_xnf xconnect add "$HL" "$HN" lladdr 02:ff:ff:ff:ff:fd 02:ff:ff:ff:ff:fc &&
	for k in no_route ttl_expired local xsk_fallback; do
		tb_xnf config set $k drop || return 1
	done &&
	tb_xnf config set l2_miss pass &&
	tb_xnf config set martian pass &&
	tb_xnf config set flow_cache off
}

@test "save | apply round-trips every object at its largest, on hostile device names" {
	local devs
	hostile_veths
	run hostile_config
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	tb_xnf save >"$TB_TMP/a.conf"
	cat -A "$TB_TMP/a.conf"
	# What runs is what was asked for: the names whole, the next hops all.
	tb_expect "attached" "$(tb_xnf -j status | jq -c '[.devices[].dev] | sort')" = \
		"$(jq -nc --arg a "$HX" --arg b "$HP" --arg c "$HB" '[$a, $b, $c] | sort')"
	tb_expect "next hops" "$(tb_xnf -j route show | jq -c '[.routes[] | select(.nexthops) | .nexthops | length]')" = '[16,16]'

	tb_xnf detach all
	tb_xnf destroy
	run -0 tb_xnf -j apply "$TB_TMP/a.conf"
	tb_xnf save >"$TB_TMP/b.conf"
	diff -u "$TB_TMP/a.conf" "$TB_TMP/b.conf"
	run -0 tb_xnf -j apply "$TB_TMP/a.conf"
	tb_expect "applied again: no change" "$(jq .changes <<<"$output")" -eq 0
	# The boot's generator reads the names as apply does.
	XNF_CONF="$TB_TMP/a.conf" "$TB_TOP/dist/systemd/xnf-generator" "$TB_TMP/gen"
	devs=$(for d in "${HOSTILE[@]}"; do
		systemd-escape --path --suffix=device "/sys/subsystem/net/devices/$d"
	done | sort)
	tb_expect "the generator's devices" \
		"$(sed -n 's/^Wants=//p' "$TB_TMP/gen/xnf.service.d/50-devices.conf" | sort)" = "$devs"

	# A name the kernel allows and xnf refuses: save says so, and prints
	# nothing apply would refuse.
	ip -n "$TB_DUT" link set dev "$HQ" name "$HCTL"
	run --separate-stderr tb_xnf save
	tb_expect "save of a control character: exit" "$status" -eq 1
	tb_expect "nothing printed" "$output" = ""
	ip -n "$TB_DUT" link set dev "$HCTL" name "$HQ"
}

# Frames that reached k0 or were counted dropped by the veths on the way.
traffic_seen()
{
	echo $(($(tb_link "$TB_SINK" k0 rx.packets) - K0 + \
		$(tb_link "$TB_SRC" s0 tx.dropped) - S0 + $(tb_link "$TB_DUT" d1 tx.dropped) - D1))
}

traffic_all_seen() { (($(traffic_seen) >= $1)); }

# traffic_accounted N: after the generator ended, every one of its N
# frames arrived or was counted dropped by a veth (docs/testing.md).
traffic_accounted()
{
	local sent
	wait "$GPID"
	sent=$(jq .sent "$TB_TMP/gen.json")
	tb_expect "sent" "$sent" -eq "$1"
	tb_until "every frame to arrive or be counted dropped" traffic_all_seen "$sent"
	echo "sent $sent, at k0 $(($(tb_link "$TB_SINK" k0 rx.packets) - K0)), dropped by" \
		"s0 $(($(tb_link "$TB_SRC" s0 tx.dropped) - S0)), by d1 $(($(tb_link "$TB_DUT" d1 tx.dropped) - D1))" >&2
	tb_expect "sent = arrived + dropped by the veths" "$(traffic_seen)" -eq "$sent"
}

# Paced traffic from src to sink through d0 and d1 while the firewall,
# the routes and d0's chain change by apply: everything sent arrives, or
# was counted dropped by a veth ring (docs/testing.md).
@test "apply under live traffic loses nothing both configurations forward" {
	[ -x "$GEN" ] && [ -x "$SINK" ] || skip "xnf-gen / xnf-sink not built"
	local n=20000 i S0 D1 K0 GPID
	tb_xnf attach d0 chain firewall,l3fwd
	tb_xnf attach d1 chain l3fwd
	tb_xnf route add 198.51.100.0/24 via $TB_SINK4
	tb_xnf save >"$TB_TMP/a.conf"
	{ sed 's/^attach d0 chain firewall,l3fwd /attach d0 chain firewall,l3fwd,l2fwd /' "$TB_TMP/a.conf"
	  echo "fw add prio 10 drop proto tcp dport 23"
	  echo "route add 203.0.113.0/24 blackhole"; } >"$TB_TMP/b.conf"
	traffic_start $n
	for ((i = 0; i < 3; i++)); do
		tb_xnf apply "$TB_TMP/b.conf"
		tb_xnf apply "$TB_TMP/a.conf"
	done
	traffic_accounted $n
}

# An upgrade that changes the table schema: the old xnf saved the
# configuration, the new one applies it. Simulated by marking the running
# tables as schema N-1 (their layout is this one's, so the old programs
# keep forwarding while they run). The apply moves the old instance to
# <root>-old, builds the new one, takes each XDP link over with one
# program switch (the link stays), and removes the old instance; paced
# traffic runs through all of it.
@test "apply across a table schema change takes the links over without an outage" {
	[ -x "$GEN" ] && [ -x "$SINK" ] || skip "xnf-gen / xnf-sink not built"
	local n=10000 S0 D1 K0 GPID cfg schema links progs
	tb_xnf attach d0 chain firewall,l3fwd
	tb_xnf attach d1 chain l3fwd
	tb_xnf route add 198.51.100.0/24 via $TB_SINK4
	tb_xnf fw add prio 10 drop proto tcp dport 23
	tb_xnf save >"$TB_TMP/a.conf"
	links=$(tb_xnf -j status | jq -c '[.devices[] | .link_id]')
	progs=$(tb_xnf -j status | jq -c '[.devices[] | .prog_id]')
	# The schema is the first __u32 of xnf_cfg (little-endian here).
	cfg=$(bpftool -j map lookup pinned "$XNF_PIN_ROOT/tables/xnf_cfg" key 0 0 0 0)
	schema=$(jq '.formatted.value.schema' <<<"$cfg")
	bpftool map update pinned "$XNF_PIN_ROOT/tables/xnf_cfg" key 0 0 0 0 value \
		$(printf '%d ' $((schema - 1))) $(jq -r '.value[1:] | join(" ")' <<<"$cfg")
	tb_expect "the old schema" "$(bpftool -j map lookup pinned "$XNF_PIN_ROOT/tables/xnf_cfg" \
		key 0 0 0 0 | jq .formatted.value.schema)" -eq $((schema - 1))
	run -1 tb_xnf save
	traffic_start $n
	run -0 tb_xnf apply "$TB_TMP/a.conf"
	[ ! -e "$XNF_PIN_ROOT-old" ]
	tb_xnf save >"$TB_TMP/b.conf"
	diff -u "$TB_TMP/a.conf" "$TB_TMP/b.conf"
	tb_expect "the links" "$(tb_xnf -j status | jq -c '[.devices[] | .link_id]')" = "$links"
	tb_expect "the programs" "$(tb_xnf -j status | jq -c '[.devices[] | .prog_id]')" != "$progs"
	traffic_accounted $n
}
