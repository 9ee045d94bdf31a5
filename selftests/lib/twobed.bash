# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# twobed.bash - the two test beds of ct_diff.bats and nat_diff.bats (load
# lib/twobed after ../testbed/testbed): an xnf router and a Linux router,
# each between an inside and an outside host, all testbed.bash's (tb_veths:
# the same addresses and MACs), the routers' ports named lan0 and wan0.
#
#   [lin] lan0 --- Linux router --- wan0 [lout]     L_IN L_R L_OUT
#   [xin] lan0 --- xnf          --- wan0 [xout]     X_IN X_R X_OUT
#
# The Linux bed's namespaces are added to tb_teardown's list, so
# teardown removes both beds, even after a failure.

# twobed_setup_file: setup_file's TB_SKIP (the test bed's needs and
# scapy, which the harnesses send with).
twobed_setup_file()
{
	TB_SKIP=$(tb_missing)
	if [ -z "$TB_SKIP" ]; then
		/usr/bin/python3 -c 'import scapy' 2>/dev/null ||
			TB_SKIP="needs python3-scapy (scripts/install-deps.sh)"
	fi
	export TB_SKIP
}

# twobed_beds: both beds built (X_IN X_R X_OUT, L_IN L_R L_OUT: their
# namespaces) and $HOST_RULES (the caller's nft rule set) loaded in the
# four hosts.
twobed_beds()
{
	TB_D0=lan0 TB_D1=wan0
	tb_base || return 1
	# The xnf bed: TB_SRC, TB_DUT, TB_SINK.
	X_IN=$TB_SRC X_R=$TB_DUT X_OUT=$TB_SINK
	tb_veths || return 1
	# The Linux bed, built by the same tb_veths in namespaces of its own.
	L_IN="$TB_NAME-$TB_OWNER-$TB_TAG-lin" L_R="$TB_NAME-$TB_OWNER-$TB_TAG-lrt"
	L_OUT="$TB_NAME-$TB_OWNER-$TB_TAG-lout"
	tb_ns_new "$L_IN" && tb_ns_new "$L_R" && tb_ns_new "$L_OUT" || return 1
	TB_SRC=$L_IN TB_DUT=$L_R TB_SINK=$L_OUT
	tb_veths
	local rc=$?
	TB_SRC=$X_IN TB_DUT=$X_R TB_SINK=$X_OUT
	[ $rc -eq 0 ] || return 1

	local ns
	for ns in "$L_IN" "$L_OUT" "$X_IN" "$X_OUT"; do
		tb_run "$ns" nft -f - <<<"$HOST_RULES" || return 1
	done
}
