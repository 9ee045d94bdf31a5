#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# docs.bats - what the documentation tells an operator is what the command
# does: `xnf help`, every `xnf OBJECT help`, the bash completion and
# xnf(8) name the same words (selftests/lib/doc_words.py); every reason
# the pages name is one `xnf stats` counts; and the routes of the README's
# tour and of the shipped /etc/xnf/xnf.conf, run in the test bed, reach
# every host of a connected subnet.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=120}"

load ../testbed/testbed

WORDS=("/usr/bin/python3" "$TB_TOP/selftests/lib/doc_words.py")

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
}

teardown()
{
	tb_teardown
}

@test "xnf help, each object's help, the bash completion and xnf(8) name the same words" {
	[ -x "$XNF" ] || skip "needs $XNF (run make)"
	run "${WORDS[@]}" check "$XNF" "$TB_TOP/docs/xnf.8" \
		"$TB_TOP/dist/bash-completion/xnf"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "every reason xnf(8) and the pages name is one xnf counts" {
	run "${WORDS[@]}" reasons "$TB_TOP/docs/xnf.8" \
		"$TB_TOP/include/uapi/xnf_dp.h" "$TB_TOP"/docs/*.md "$TB_TOP/README.md"
	echo "$output"
	[ "$status" -eq 0 ]
}

# h2_up: a second host on d1's subnet, 198.51.100.2, with a MAC of its
# own (a macvlan of k0 in a namespace of its own), which the DUT has no
# static neighbour entry for: its kernel resolves it.
h2_up()
{
	local h2=${TB_SINK%-sink}-h2
	tb_ns_new "$h2" &&
		ip -n "$TB_SINK" link add h2 link "$TB_K0" type macvlan mode bridge &&
		ip -n "$TB_SINK" link set h2 netns "$h2" &&
		ip -n "$h2" addr add 198.51.100.2/24 dev h2 &&
		ip -n "$h2" link set h2 up &&
		ip -n "$h2" route add default via $TB_D14
}

# as_testbed: configuration lines on stdin for the test bed's DUT: eth0 and
# eth1 are d0 and d1.
as_testbed()
{
	sed -e 's/\beth0\b/d0/g' -e 's/\beth1\b/d1/g'
}

# A route `via` one host of a connected subnet sends every host of it to
# that host's MAC: the other hosts are never reached.
@test "the README's tour and the shipped xnf.conf reach every host of a connected subnet" {
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	tb_setup
	h2_up
	# The tour's attach and route lines, as its commands give them.
	sed -n 's#^    build/xnf \(\(attach\|route add\) .*\)$#\1#p' \
		"$TB_TOP/README.md" | as_testbed >"$TB_TMP/tour.conf"
	# The example's, uncommented, but for its AF_XDP port eth2.
	sed -n 's/^#\(\(attach\|route add\) .*\)$/\1/p' "$TB_TOP/dist/xnf.conf" |
		grep -v eth2 | as_testbed >"$TB_TMP/example.conf"
	for f in tour example; do
		cat "$TB_TMP/$f.conf"
		[ "$(grep -c '^attach d[01] ' "$TB_TMP/$f.conf")" -eq 2 ]
		grep -q '^route add ' "$TB_TMP/$f.conf"
		tb_xnf apply "$TB_TMP/$f.conf"
		tb_ping_ok "$TB_SRC" $TB_SINK4 3
		tb_ping_ok "$TB_SRC" 198.51.100.2 3
	done
}
