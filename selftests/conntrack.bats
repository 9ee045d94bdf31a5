#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# conntrack.bats - the stateful firewall end to end with real TCP
# connections: the edge router's policy (inside out, replies back, the
# outside kept out but for port 22), a flood of new flows past the
# table's size, replies on the other CPU, and state kept across a rule
# change and a chain swap. The test bed is testbed.bash's, the DUT's
# ports named lan0 (inside: the source) and wan0 (outside: the sink).
#
# A connection is one ct_conn.py client held open and driven a line at a
# time through a fifo: each line comes back "ok LINE" (echoed) or "lost
# LINE" (no echo within its bound), so every step is bounded and its
# result is read, never guessed from a wait.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=240}"

load ../testbed/testbed

CONN=("/usr/bin/python3" "$TB_TOP/selftests/lib/ct_conn.py")
GEN=$(dirname "$XNF")/xnf-gen

RULES='fw add allow ct state established,related
fw add drop ct state invalid
fw add allow iif lan0
fw add allow iif wan0 proto tcp dport 22 ct state new
fw default drop'

CHAIN=conntrack,firewall,l3fwd

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	TB_D0=lan0 TB_D1=wan0
	CONN_FDS=()
	tb_setup
}

teardown()
{
	local fd
	for fd in "${CONN_FDS[@]}"; do
		exec {fd}>&-
	done
	tb_teardown
}

# router [CONFIG...]: xnf on lan0 and wan0 with the edge policy, made by
# one apply with CONFIG lines (config set ...) first: ct_max is taken only
# by the apply that makes the instance.
router()
{
	printf '%s\n' "$@" "attach lan0 chain $CHAIN" "attach wan0 chain $CHAIN" \
		"$RULES" >"$TB_TMP/router.conf" &&
	tb_xnf apply "$TB_TMP/router.conf" && tb_routes
}

# server NS PORT [CPU]: an echo server on PORT in NS (pinned to CPU).
server()
{
	local pin=()
	[ -z "${3:-}" ] || pin=(taskset -c "$3")
	tb_bg "$1" "${pin[@]}" timeout 200 "${CONN[@]}" server "$2"
	tb_until "tcp port $2 listening in $1" listens "$1" "$2"
}

listens()
{
	tb_run "$1" ss -Hltn "sport = :$2" | grep -q .
}

# conn_open NAME NS HOST PORT [CPU]: connection NAME from NS to HOST
# PORT (its client pinned to CPU); fails if it cannot connect.
conn_open()
{
	local name=$1 ns=$2 host=$3 port=$4 pin=() fd
	[ -z "${5:-}" ] || pin=(taskset -c "$5")
	mkfifo "$TB_TMP/$name.in"
	: >"$TB_TMP/$name.out"
	# Opened for reading and writing, a fifo blocks nobody: the client's
	# open for reading below finds a writer at once.
	exec {fd}<>"$TB_TMP/$name.in"
	# As tb_bg, but with the fifo as standard input (a background command
	# without a redirection of its own reads /dev/null).
	ip netns exec "$ns" "${pin[@]}" timeout 200 "${CONN[@]}" -w 5 client "$host" \
		"$port" <"$TB_TMP/$name.in" >"$TB_TMP/$name.out" 3>&- &
	TB_PIDS+=($!)
	CONN_FDS+=("$fd")
	eval "CONN_FD_$name=$fd"
	tb_until "connection $name to answer" grep -q '^\(connected\|refused\)' \
		"$TB_TMP/$name.out"
	grep -q '^connected' "$TB_TMP/$name.out" ||
		{ echo "connection $name: $(cat "$TB_TMP/$name.out")" >&2; return 1; }
}

# conn_try NAME NS HOST PORT: prints "connected" or "refused" (a SYN that
# no SYN/ACK answers within 3 s).
conn_try()
{
	local name=$1
	tb_run "$2" timeout 20 "${CONN[@]}" -w 3 client "$3" "$4" </dev/null \
		>"$TB_TMP/$name.out" || true
	awk 'NR == 1 { print $1 }' "$TB_TMP/$name.out"
}

# conn_send NAME LINE: LINE over connection NAME; fails unless echoed.
conn_send()
{
	local name=$1 line=$2 fdv="CONN_FD_$1"
	echo "$line" >&"${!fdv}"
	tb_until "connection $name: an answer to $line" \
		grep -q -e "^ok $line\$" -e "^lost $line\$" "$TB_TMP/$name.out"
	grep -q "^ok $line\$" "$TB_TMP/$name.out" ||
		{ echo "connection $name: $line lost" >&2; return 1; }
}

fw_default()
{
	tb_xnf -j fw show | jq -e .default_packets
}

ct_stats()
{
	tb_xnf -j ct stats
}

@test "the edge policy: the inside connects out, the outside only to port 22" {
	local d0 got fam dst src
	router
	server "$TB_SINK" 80
	server "$TB_SRC" 22
	server "$TB_SRC" 23
	for fam in 4 6; do
		if [ $fam = 4 ]; then dst=$TB_SINK4 src=$TB_SRC4; else dst=$TB_SINK6 src=$TB_SRC6; fi
		conn_open out$fam "$TB_SRC" "$dst" 80
		conn_send out$fam "hello-$fam"
		conn_send out$fam "again-$fam"
		conn_open ssh$fam "$TB_SINK" "$src" 22
		conn_send ssh$fam "ssh-$fam"
		d0=$(fw_default)
		got=$(conn_try telnet$fam "$TB_SINK" "$src" 23)
		tb_expect "v$fam connection from outside to port 23" "$got" = refused
		# its SYNs met the default policy
		tb_expect "v$fam SYNs to port 23 dropped by default" \
			$(($(fw_default) - d0)) -ge 1
		got=$(conn_try in$fam "$TB_SINK" "$src" 80)
		tb_expect "v$fam connection from outside to port 80" "$got" = refused
	done
	# The connections the inside opened are tracked, both directions.
	got=$(tb_xnf -j ct show | jq '[.entries[] | select(.proto == "tcp")] | length')
	tb_expect "tcp connections tracked" "$got" -ge 4
}

@test "a flood of new flows past the table's size: evicted and counted, an established connection kept" {
	local s0 c0 drop0 b sent=0 drops d created evicted entries max got j ev0 full per=1000
	# The smallest table xnf takes, so that a few thousand flows fill it.
	router "config set ct_max 1024"
	server "$TB_SINK" 80
	# The flood's datagrams go to ports nobody listens on: the sink
	# drops them without answering (no ICMP errors).
	tb_sink nft -f - <<<'table inet ctflood {
		chain pre {
			type filter hook prerouting priority -400;
			udp dport 9000-9099 drop
		}
	}'
	conn_open est "$TB_SRC" $TB_SINK4 80
	conn_send est before
	s0=$(ct_stats)
	max=$(jq .max <<<"$s0")
	tb_expect "the table's size" "$max" -eq 1024
	drop0=$(tb_link "$TB_SRC" s0 tx.dropped)
	# Batches of new flows (xnf-gen: flow i from port 1024 + i; each
	# batch to a port of its own),
	# each followed by a line over the connection, which is used between
	# them and so kept by the LRU. Until the table evicted, then one more
	# batch; bounded by the number of batches, not by time.
	ev0=$(jq .evicted <<<"$s0") full=
	for ((b = 0; b < 10 * max / per; b++)); do
		j=$(tb_src "$GEN" s0 count $per flows $per rate 100000 dport $((9000 + b)) \
			dmac $TB_MAC_D0 -j) || { echo "xnf-gen: $j" >&2; return 1; }
		sent=$((sent + $(jq .sent <<<"$j")))
		conn_send est "during-$b"
		if [ -n "$full" ]; then
			break
		fi
		if [ "$(ct_stats | jq .evicted)" -gt "$ev0" ]; then
			full=$b
		fi
	done
	conn_send est after
	c0=$(ct_stats)
	echo "sent $sent in $b batches; before: $s0"
	echo "after: $c0"
	# Frames the veth toward the DUT dropped never met xnf (testbed.bash:
	# tb_link); every other one was a new flow, accepted and confirmed.
	drops=$(($(tb_link "$TB_SRC" s0 tx.dropped) - drop0))
	created=$(($(jq .created <<<"$c0") - $(jq .created <<<"$s0")))
	evicted=$(($(jq .evicted <<<"$c0") - $(jq .evicted <<<"$s0")))
	entries=$(jq .entries <<<"$c0")
	tb_expect "entries created (one per flow that reached xnf)" "$created" -ge $((sent - drops))
	tb_expect "entries in the table" "$entries" -le "$max"
	tb_expect "entries evicted" "$evicted" -gt 0
	tb_expect "entries evicted" "$evicted" -ge $((sent - drops - max))
	# The counters add up: evicted is what was created and is gone by no
	# other way.
	d=$(jq '.created - .expired - .deleted - .flushed - .entries - .dead' <<<"$c0")
	tb_expect "evicted = created - expired - deleted - flushed - present" \
		"$(jq .evicted <<<"$c0")" -eq "$d"
	# xnf still runs both ports, and the connection is in the table.
	tb_expect "attached" "$(tb_xnf -j status | jq '[.devices[] | select(.attached)] | length')" -eq 2
	got=$(tb_xnf -j ct show proto tcp port 80 | jq -r '[.entries[].state] | join(",")')
	tb_expect "the connection's state" "$got" = ESTABLISHED
}

@test "replies that arrive on the other CPU: the connection is established on both" {
	local got
	[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs" >&2; return 1; }
	router
	# On veth, a frame's receive (and xnf's XDP program) runs on the CPU
	# that sent it: the client's segments are seen by xnf on CPU 0, the
	# server's replies on CPU 1.
	server "$TB_SINK" 80 1
	conn_open cpu "$TB_SRC" $TB_SINK4 80 0
	conn_send cpu one
	conn_send cpu two
	conn_open cpu6 "$TB_SRC" $TB_SINK6 80 0
	conn_send cpu6 one
	# Each direction counted in one entry, replies included.
	got=$(tb_xnf -j ct show proto tcp dport 80 |
		jq -c '[.entries[] | [.state, (.orig.packets > 0), (.reply.packets > 0)]]')
	tb_expect "entries" "$got" = '[["ESTABLISHED",true,true],["ESTABLISHED",true,true]]'
}

@test "a rule change and a chain swap keep an established connection" {
	router
	server "$TB_SINK" 80
	conn_open keep "$TB_SRC" $TB_SINK4 80
	conn_open keep6 "$TB_SRC" $TB_SINK6 80
	conn_send keep start
	tb_xnf fw add prio 5 drop proto udp dport 9999
	conn_send keep after-rule-add
	conn_send keep6 after-rule-add
	tb_xnf fw del prio 5
	conn_send keep after-rule-del
	# Another chain (the l2fwd after l3fwd sees no frame: l3fwd decides
	# them all), the chain fused, then tail-called again: each a new
	# program swapped in by bpf_link_update, the connection table the same.
	tb_xnf chain set lan0 $CHAIN,l2fwd
	tb_xnf chain set wan0 $CHAIN,l2fwd
	conn_send keep after-swap
	conn_send keep6 after-swap
	tb_xnf chain set lan0 $CHAIN fused
	tb_xnf chain set wan0 $CHAIN fused
	conn_send keep after-fused
	conn_send keep6 after-fused
	tb_xnf chain set lan0 $CHAIN tailcall
	tb_xnf chain set wan0 $CHAIN tailcall
	conn_send keep after-swap-back
	conn_send keep6 after-swap-back
	tb_xnf save >"$TB_TMP/xnf.conf"
	tb_xnf apply "$TB_TMP/xnf.conf"
	conn_send keep after-apply
	conn_send keep6 after-apply
}
