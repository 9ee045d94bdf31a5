#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# nat_ct.bats - translated connections as operators see them in the
# connection table (`xnf ct show`, `flush`, `stats`, the exporter), on the
# test bed (testbed/testbed.bash) with conntrack,firewall,l3fwd. The
# entries are written by hand in the layout of include/uapi/xnf_ct.h
# (selftests/lib/ct_entries.py through bpftool), as xnf_ct_confirm()
# writes a translated connection: its alias (the reply tuple's key), then
# the connection; no traffic is needed to see them.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=120}"

load ../testbed/testbed

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	tb_testbed_up conntrack,firewall,l3fwd
}

teardown()
{
	tb_teardown
}

# ct_write ENTRY...: the entries of selftests/lib/ct_entries.py into the
# instance's xnf_ct.
ct_write()
{
	python3 "$TB_TOP/selftests/lib/ct_entries.py" \
		"$XNF_PIN_ROOT/tables/xnf_ct" "$@" >"$TB_TMP/ct.batch"
	tb_run "$TB_DUT" bpftool batch file "$TB_TMP/ct.batch" >/dev/null
}

# Inside 192.0.2.0/24; the router's public 203.0.113.1 on d1: a
# masquerade out of d1, a port forward of 203.0.113.1:8080 to
# 192.0.2.80:80, and a connection without translation.
ct_fill()
{
	local d1
	d1=$(tb_run "$TB_DUT" cat "/sys/class/net/$TB_D1/ifindex")
	ct_write \
		"tcp,192.0.2.10,40000,198.51.100.20,443,198.51.100.20,443,203.0.113.1,40000,masquerade,$d1" \
		"tcp,198.51.100.30,50000,203.0.113.1,8080,192.0.2.80,80,198.51.100.30,50000,dnat" \
		"udp,192.0.2.12,5353,198.51.100.20,53"
}

# ct_count [FILTER...]: the connections `ct show FILTER` lists.
ct_count()
{
	tb_xnf -j ct show "$@" | jq '.entries | length'
}

@test "ct show lists a translated connection once, with its reply tuple and translation; reply-dst finds a public address's" {
	local masq dnat plain

	ct_fill
	tb_expect "three connections, no alias" "$(ct_count family inet)" -eq 3
	tb_xnf -j ct show family inet >"$TB_TMP/ct.json"
	cat "$TB_TMP/ct.json"
	masq=$(jq -c '.entries[] | select(.orig.sport == 40000)' "$TB_TMP/ct.json")
	tb_expect "masquerade: original" \
		"$(jq -c '.orig | [.src, .dst, .sport, .dport]' <<<"$masq")" = \
		'["192.0.2.10","198.51.100.20",40000,443]'
	tb_expect "masquerade: reply to the public address" \
		"$(jq -c '.reply | [.src, .dst, .sport, .dport]' <<<"$masq")" = \
		'["198.51.100.20","203.0.113.1",443,40000]'
	tb_expect "masquerade: its kind and device" "$(jq -c .nat <<<"$masq")" = \
		"{\"snat\":true,\"dnat\":false,\"masquerade\":true,\"oif\":\"$TB_D1\"}"
	dnat=$(jq -c '.entries[] | select(.orig.sport == 50000)' "$TB_TMP/ct.json")
	tb_expect "dnat: reply from the inside server" \
		"$(jq -c '[.reply.src, .reply.sport, .nat.dnat, .nat.snat, .nat.oif]' <<<"$dnat")" = \
		'["192.0.2.80",80,true,false,null]'
	plain=$(jq -c '.entries[] | select(.orig.sport == 5353)' "$TB_TMP/ct.json")
	tb_expect "untranslated: the reply is the original swapped" \
		"$(jq -c '[.reply.src, .reply.dst, .reply.sport, .reply.dport, .nat.snat, .nat.dnat]' <<<"$plain")" = \
		'["198.51.100.20","192.0.2.12",53,5353,false,false]'
	run -0 python3 "$TB_TOP/selftests/lib/json_shape.py" validate \
		"$TB_TOP/docs/json" "$TB_TMP/ct.json"

	# The text: both tuples on the connection's one line, as conntrack -L.
	run -0 tb_xnf ct show reply-dst 203.0.113.1
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"src=192.0.2.10 dst=198.51.100.20 sport=40000 dport=443 "* ]]
	[[ "$output" == *"src=198.51.100.20 dst=203.0.113.1 sport=443 dport=40000 "* ]]

	tb_expect "dst: the port forward" "$(ct_count dst 203.0.113.1)" -eq 1
	tb_expect "reply-src: its server" "$(ct_count reply-src 192.0.2.80)" -eq 1
	tb_expect "nat masquerade" "$(ct_count nat masquerade)" -eq 1
	tb_expect "nat any" "$(ct_count nat any)" -eq 2
	tb_expect "nat dnat" "$(ct_count nat dnat)" -eq 1
	tb_expect "oif" "$(ct_count oif "$TB_D1")" -eq 1
	tb_expect "oif of another device" "$(ct_count oif "$TB_D0")" -eq 0
	run -1 tb_xnf ct show nat alias
}

@test "ct flush takes a translated connection's alias with it, and orphan aliases; stats and the exporter count connections and aliases apart" {
	local st

	ct_fill
	st=$(tb_xnf -j ct stats)
	echo "$st"
	tb_expect "aliases" "$(jq .aliases <<<"$st")" -eq 2
	tb_expect "entries are connections" "$(jq .entries <<<"$st")" -eq "$(ct_count)"

	# What the address watcher does when 203.0.113.1 leaves d1.
	tb_expect "flushed" \
		"$(tb_xnf -j ct flush nat masquerade reply-dst 203.0.113.1 | jq .flushed)" -eq 1
	tb_expect "gone" "$(ct_count nat masquerade)" -eq 0
	st=$(tb_xnf -j ct stats)
	tb_expect "its alias with it" "$(jq .aliases <<<"$st")" -eq 1
	tb_expect "counted a connection" "$(jq .flushed <<<"$st")" -eq 1
	tb_expect "no eviction" "$(jq .evicted <<<"$st")" -eq 0

	# An alias alone (its connection gone): any flush takes it, uncounted.
	ct_write "udp,192.0.2.13,4000,198.51.100.20,53,198.51.100.20,53,203.0.113.1,4000,masquerade,0,orphan"
	tb_expect "an orphan" "$(tb_xnf -j ct stats | jq .aliases)" -eq 2
	tb_expect "a flush of nothing" \
		"$(tb_xnf -j ct flush proto sctp | jq .flushed)" -eq 0
	tb_expect "the orphan gone" "$(tb_xnf -j ct stats | jq .aliases)" -eq 1

	# The exporter: the same counters, the new ones with their types.
	tb_xnf stats -f prometheus >"$TB_TMP/prom.txt"
	tb_xnf -j ct stats >"$TB_TMP/ct-stats.json"
	run -0 python3 "$TB_TOP/selftests/lib/json_shape.py" validate \
		"$TB_TOP/docs/json" "$TB_TMP/ct-stats.json"
	grep -qx "# TYPE xnf_ct_aliases gauge" "$TB_TMP/prom.txt"
	grep -qx "xnf_ct_aliases 1" "$TB_TMP/prom.txt"
	for n in nat_created nat_retries nat_no_port nat_no_addr nat_clash; do
		grep -qx "# TYPE xnf_ct_${n}_total counter" "$TB_TMP/prom.txt"
		grep -qx "xnf_ct_${n}_total $(jq ".$n" "$TB_TMP/ct-stats.json")" \
			"$TB_TMP/prom.txt"
	done

	tb_expect "the rest" "$(tb_xnf -j ct flush | jq .flushed)" -ge 2
	st=$(tb_xnf -j ct stats)
	tb_expect "no alias left" "$(jq .aliases <<<"$st")" -eq 0
	tb_expect "no connection left" "$(jq .entries <<<"$st")" -eq 0
}
