#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# ct_diff.bats - the stateful firewall against Linux: the same packet
# sequences through a Linux router running nftables with the classic edge
# policy and through xnf with the same policy, every packet's fate
# compared (selftests/lib/ct_diff.py sends them and says how a fate is
# known without timing).
#
#   [lin] lan0 --- Linux router (nft, conntrack) --- wan0 [lout]
#   [xin] lan0 --- xnf (conntrack,firewall,l3fwd) --- wan0 [xout]
#
# Both beds are testbed.bash's (tb_veths: the same addresses and MACs),
# with the router's ports named lan0 and wan0 as the rules say; the xnf
# bed is the one tb_teardown knows, the Linux bed's namespaces are added
# to its list, so teardown removes both, even after a failure.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=300}"

load ../testbed/testbed
load lib/twobed

DIFF=("/usr/bin/python3" "$TB_TOP/selftests/lib/ct_diff.py")

# The Linux router's rule set: nft's words for the policy of the issue.
# (`ct state` loads nf_conntrack: the sysctls below exist from then on.)
LINUX_RULES='table inet filter {
	chain forward {
		type filter hook forward priority 0; policy drop;
		ct state established,related accept
		ct state invalid drop
		iifname "lan0" accept
		iifname "wan0" tcp dport 22 ct state new accept
	}
}'
# The same with one more rule: a rule change, not only a reload.
LINUX_RULES_CHANGED=${LINUX_RULES/'ct state new accept'/'ct state new accept
		iifname "wan0" tcp dport 2222 ct state new accept'}

# xnf's words for it.
XNF_RULES='fw add allow ct state established,related
fw add drop ct state invalid
fw add allow iif lan0
fw add allow iif wan0 proto tcp dport 22 ct state new
fw default drop'
XNF_RULES_CHANGED="$XNF_RULES
fw add allow iif wan0 proto tcp dport 2222 ct state new"

# Differences between the two routers that are meant, with the reason:
# LABEL=REASON, LABEL a packet's label in ct_diff.py's output.
EXPECTED=(
	# XDP cannot reassemble: a chain with conntrack passes every fragment
	# to the router's kernel (reason frag, docs/conntrack.md), which
	# reassembles and applies its own nftables; this bed's xnf router
	# has none, so its kernel forwards them. Linux's conntrack reassembles
	# before the rules and drops the datagram.
	"v4 fragmented udp unsolicited from outside=fragments go to the kernel, which has no rules here"
	"v6 fragmented udp unsolicited from outside=fragments go to the kernel, which has no rules here"
)

# The hosts' kernels must see nothing of the test: their prerouting and
# output drop everything (packet sockets capture before prerouting), so
# they answer no stray segment with a RST and no datagram with an ICMP
# error, and send nothing of their own.
HOST_RULES='table inet ctdiff_host {
	chain pre { type filter hook prerouting priority -400; policy drop; }
	chain out { type filter hook output priority -400; policy drop; }
}'

setup_file()
{
	twobed_setup_file
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	twobed_beds || return 1
	local ns
	for ns in "$L_R" "$X_R"; do
		# No redirects or other messages of the routers' own.
		tb_run "$ns" sysctl -q -w net.ipv4.conf.all.send_redirects=0 \
			net.ipv4.conf.default.send_redirects=0 \
			net.ipv4.conf.lan0.send_redirects=0 \
			net.ipv4.conf.wan0.send_redirects=0 >/dev/null || return 1
	done
	linux_router || return 1
	printf '%s\n' "$LINUX_RULES" >"$TB_TMP/linux.nft"
	printf 'flush ruleset\n%s\n' "$LINUX_RULES" >"$TB_TMP/linux-reload.nft"
	printf 'flush ruleset\n%s\n' "$LINUX_RULES_CHANGED" >"$TB_TMP/linux-changed.nft"
}

teardown()
{
	tb_teardown
}

# linux_router: the Linux router's rule set and conntrack settings (window
# tracking off as in xnf: be_liberal; loose, mid-stream pick-up, is on by
# default).
linux_router()
{
	tb_run "$L_R" nft -f - <<<"$LINUX_RULES" &&
	tb_run "$L_R" sysctl -q -w net.netfilter.nf_conntrack_tcp_be_liberal=1 \
		net.netfilter.nf_conntrack_tcp_loose=1 >/dev/null
}

# xnf_router [RULES [MODE]]: xnf on lan0 and wan0 with the policy (or
# RULES), the chain tail-called (or MODE: fused).
xnf_router()
{
	tb_attach_both conntrack,firewall,l3fwd ${2:-} && tb_routes &&
	tb_xnf -b - <<<"${1:-$XNF_RULES}"
}

# argv_json ARG...: the arguments as a JSON array (a command of an action).
argv_json()
{
	/usr/bin/python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@"
}

# bed_json NAME IN ROUTER OUT ACTIONS: one bed of ct_diff.py's --beds.
bed_json()
{
	jq -n --arg name "$1" --arg in "$2" --arg out "$4" --argjson actions "$5" \
		'{name: $name, in_ns: $in, in_dev: "s0", out_ns: $out,
		  out_dev: "k0", actions: $actions}'
}

linux_bed()
{
	local nx=(ip netns exec "$L_R")
	bed_json linux "$L_IN" "$L_R" "$L_OUT" "$(jq -n \
		--argjson reload "$(argv_json "${nx[@]}" nft -f "$TB_TMP/linux-reload.nft")" \
		--argjson changed "$(argv_json "${nx[@]}" nft -f "$TB_TMP/linux-changed.nft")" \
		--argjson short "$(argv_json "${nx[@]}" sysctl -q -w net.netfilter.nf_conntrack_udp_timeout=2 \
			net.netfilter.nf_conntrack_udp_timeout_stream=2 \
			net.netfilter.nf_conntrack_icmp_timeout=2 \
			net.netfilter.nf_conntrack_icmpv6_timeout=2 \
			net.netfilter.nf_conntrack_tcp_timeout_established=2 \
			net.netfilter.nf_conntrack_tcp_timeout_close=2)" \
		'{reload: [$reload], reload_changed: [$changed],
		  short_timeouts: [$short]}')"
}

xnf_bed()
{
	local nx=(ip netns exec "$X_R" env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF")
	tb_xnf save >"$TB_TMP/xnf.conf" || return 1
	{ grep -v '^fw ' "$TB_TMP/xnf.conf"; printf '%s\n' "$XNF_RULES_CHANGED"; } \
		>"$TB_TMP/xnf-changed.conf"
	bed_json xnf "$X_IN" "$X_R" "$X_OUT" "$(jq -n \
		--argjson reload "$(argv_json "${nx[@]}" apply "$TB_TMP/xnf.conf")" \
		--argjson changed "$(argv_json "${nx[@]}" apply "$TB_TMP/xnf-changed.conf")" \
		--argjson short "$(for k in established close udp udp_stream icmp; do
			argv_json "${nx[@]}" config set "ct_timeout_$k" 2
		done | jq -s .)" \
		'{reload: [$reload], reload_changed: [$changed],
		  short_timeouts: $short}')"
}

# fate JSON LABEL BED: true when the packet LABEL was forwarded on BED.
fate()
{
	jq -e --arg l "$2" --arg b "$3" '.[] | select(.label == $l) | .fates[$b]' "$1"
}

@test "the harness: the Linux router's fates are what the nft policy means" {
	linux_bed >"$TB_TMP/bed-linux.json"
	jq -s . "$TB_TMP/bed-linux.json" >"$TB_TMP/beds.json"
	run "${DIFF[@]}" --beds "$TB_TMP/beds.json" --out "$TB_TMP/fates.json"
	echo "$output"
	[ "$status" -eq 0 ]
	local f=$TB_TMP/fates.json fam l
	# Anchors of the policy whose fate no reading of conntrack can
	# change: if one is wrong, the harness is.
	for fam in 4 6; do
		for l in "fin#1 in S" "fin#2 out SA" "fin#4 in PA +5" "fin#5 out PA +6" \
			"ssh-in#1 out S" "ssh-in#2 in SA" "ssh-in#4 out PA +5" \
			"udp request" "udp answer" "echo request from inside" \
			"echo reply from outside" "port unreachable (related)" \
			"reload#2 out SA" "v$fam reload data from outside after reload" \
			"expiry udp answer in time" "expiry tcp data from inside after expiry" \
			"expiry tcp data from outside after the pick-up"; do
			l=${l#"v$fam "}
			tb_expect "v$fam $l forwarded" "$(fate "$f" "v$fam $l" linux)" = true
		done
		for l in "telnet-in#1 out S" "udp unsolicited from outside" \
			"unsolicited from outside S" "echo request from outside" \
			"port unreachable about nothing" "expiry udp answer after expiry" \
			"expiry echo reply after expiry" "bad flags SF from in" \
			"expiry tcp data from outside after expiry" \
			"expiry rst late data from outside after expiry"; do
			tb_expect "v$fam $l dropped" "$(fate "$f" "v$fam $l" linux)" = false
		done
	done
}

# diff_all: ct_diff.py with both beds, every sequence; then xnf's own
# accounting checked against the fates.
diff_all()
{
	linux_bed >"$TB_TMP/bed-linux.json"
	xnf_bed >"$TB_TMP/bed-xnf.json"
	jq -s . "$TB_TMP/bed-linux.json" "$TB_TMP/bed-xnf.json" >"$TB_TMP/beds.json"
	local e args=()
	for e in "${EXPECTED[@]}"; do
		args+=(--expect "$e")
	done
	local k0 k1 st dropped frag
	k0=$(tb_kfwd)
	run "${DIFF[@]}" --beds "$TB_TMP/beds.json" --out "$TB_TMP/fates.json" "${args[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	# xnf decided: each packet it did not forward, its firewall denied
	# (no sentinel is ever denied); its router's kernel forwarded only the
	# fragments xnf passed to it.
	k1=$(tb_kfwd)
	st=$(tb_stats_json)
	dropped=$(jq '[.[] | select(.fates.xnf | not)] | length' "$TB_TMP/fates.json")
	tb_expect "packets xnf's firewall denied" \
		"$(jq '[.devices[].drop_reasons.fw_deny] | add' <<<"$st")" -eq "$dropped"
	frag=$(jq '[.devices[].pass_reasons.frag] | add' <<<"$st")
	tb_expect "fragments passed to the kernel" "$frag" -gt 0
	tb_expect "datagrams the router's kernel forwarded" \
		$((${k1% *} + ${k1#* } - ${k0% *} - ${k0#* })) -eq "$frag"
}

@test "xnf and Linux: every packet's fate is the same, but for the listed differences" {
	xnf_router
	diff_all
}

@test "xnf fused and Linux: every packet's fate is the same, but for the listed differences" {
	xnf_router "$XNF_RULES" fused
	diff_all
}

@test "the harness catches a difference: xnf without 'drop ct state invalid'" {
	# The inside's invalid packets then meet `allow iif lan0`: Linux
	# drops them, this xnf forwards them, and each is reported.
	xnf_router "$(grep -v 'ct state invalid' <<<"$XNF_RULES")"
	linux_bed >"$TB_TMP/bed-linux.json"
	xnf_bed >"$TB_TMP/bed-xnf.json"
	jq -s . "$TB_TMP/bed-linux.json" "$TB_TMP/bed-xnf.json" >"$TB_TMP/beds.json"
	run "${DIFF[@]}" --beds "$TB_TMP/beds.json" --out "$TB_TMP/fates.json" --only tcp,echo
	echo "$output"
	[ "$status" -eq 1 ]
	local f=$TB_TMP/fates.json
	# Every difference: from the inside, dropped by Linux, forwarded by xnf.
	tb_expect "differences of another kind" "$(jq '[.[] | select(.fates.linux != .fates.xnf) |
		select(.from != "in" or .fates.linux or (.fates.xnf | not))] | length' "$f")" -eq 0
	for l in "v4 bad flags SF from in" "v6 bad flags SR from in" \
		"v4 unsolicited from inside SA" "v6 echo reply without request from inside"; do
		tb_expect "$l: linux, xnf" "$(jq -c --arg l "$l" '.[] | select(.label == $l) |
			[.fates.linux, .fates.xnf]' "$f")" = '[false,true]'
	done
}
