#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# killed.bats - xnf attach, detach, apply and -b killed midway, and the
# instance lock held by a stopped process.
#
# A kill lands after a random delay (in microseconds) spread over the
# command's own run time, measured first: SIGKILL, so nothing of xnf runs
# after it. Whatever the moment, the next commands must find a truthful
# state and complete or undo what the killed one began:
#   - `status` (a reader: it takes no lock and writes nothing) lists d0
#     exactly when an XDP program runs on d0, and then names that program;
#     never as "not attached" while it is listed; `stats` agrees;
#   - then `detach` (attached) or `attach` (not attached) succeeds;
#   - after `detach`, nothing is left: no XDP on d0, no pins of d0, no
#     napi_poll tracer, no egress port, no histogram entry, and no program
#     that uses the instance's tables (bpftool).
# A killed apply or batch (a commit of many changes) is undone by the next
# command that changes something: the whole old configuration runs, or
# the whole new one, never a part (the commit's journal, lib/commit.c).
# Deterministic kills at every step of the transactions are in the unit
# tests killed_attach_detach and killed_commit (selftests/unit/killed.c).

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=240}"

load ../testbed/testbed

CHAIN=l3fwd,l2fwd
TRIALS=${XNF_KILL_TRIALS:-50}

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	tb_setup
	STOPPED= BATCH_FD=
}

teardown()
{
	# A stopped process would never see the SIGTERM of tb_teardown.
	if [ -n "$STOPPED" ]; then
		kill -CONT "$STOPPED" 2>/dev/null || true
		kill "$STOPPED" 2>/dev/null || true
	fi
	[ -z "${BATCH_FD:-}" ] || exec {BATCH_FD}>&-
	tb_teardown
}

now_us() { echo $(($(date +%s%N) / 1000)); }

# run_us ARGS...: xnf ARGS in the DUT, as the kills run it; prints the
# microseconds it took.
run_us()
{
	local t0
	t0=$(now_us)
	tb_xnf "$@" >/dev/null
	echo $(($(now_us) - t0))
}

# killed US ARGS...: xnf ARGS in the DUT, killed with SIGKILL after US
# microseconds (unless it ended before).
killed()
{
	local us=$1
	shift
	timeout -s KILL "$(printf '%d.%06d' $((us / 1000000)) $((us % 1000000)))" \
		ip netns exec "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" \
		"$XNF" "$@" >/dev/null 2>&1 || true
}

# random_us MAX: uniform in [0, MAX).
random_us() { echo $(((RANDOM * 32768 + RANDOM) % $1)); }

# The ids of the instance's tables (a JSON array), for clean.
table_ids()
{
	timeout 10 bpftool -f -j map show |
		jq -c --arg r "$XNF_PIN_ROOT/tables/" \
			'[.[] | select(any(.pinned[]?; startswith($r))) | .id]'
}

# truthful WHAT: status and stats tell what runs on d0; sets ATTACHED.
# (jq costs tens of milliseconds to start: one per check.)
truthful()
{
	local what=$1 st sx ln got
	st=$(tb_xnf -j status) && sx=$(tb_xnf -j stats) &&
		ln=$(ip -n "$TB_DUT" -j link show dev d0) ||
		{ echo "FAIL: $what: status, stats or ip failed" >&2; return 1; }
	got=$(jq -rn --argjson st "$st" --argjson sx "$sx" --argjson ln "$ln" '
		($ln[0].xdp.prog.id // null) as $xdp |
		[$st.devices[] | select(.dev == "d0")] as $d0 |
		if ($st.devices | length) != ($d0 | length) then "status lists other devices"
		elif [$sx.devices[].dev] != [$st.devices[].dev] then
			"stats lists \([$sx.devices[].dev]), status \([$st.devices[].dev])"
		elif ($d0 | length) == 0 then
			if $xdp == null then "detached"
			else "d0 runs program \($xdp) but status does not list it" end
		elif ($d0[0].attached | not) then "status lists d0 as not attached"
		elif $d0[0].prog_id != $xdp then
			"status names program \($d0[0].prog_id), d0 runs \($xdp)"
		else "attached" end')
	case $got in
	attached) ATTACHED=true ;;
	detached) ATTACHED=false ;;
	*) echo "FAIL: $what: $got" >&2; return 1 ;;
	esac
	if $ATTACHED; then
		tb_expect "$what: pins of an attachment" \
			"$(cd "$XNF_PIN_ROOT/dev/d0" && echo *)" = \
			"chain link prog xnf_dev xnf_stats xnf_xsks"
	fi
}

# clean WHAT: nothing of d0 is left: no XDP, no pins, no napi_poll
# tracer, no egress port (no route uses d0), no histogram entry, and no
# program using the instance's tables. Freeing a program is deferred in
# the kernel (a prog array is emptied by a work queue): they are given
# two seconds to go.
clean()
{
	local what=$1 ln tx bt got i
	tb_expect "$what: no pins of d0" "$(cd "$XNF_PIN_ROOT/dev" && echo *)" = "*"
	tb_expect "$what: no napi_poll tracer" "$(cd "$XNF_PIN_ROOT" && echo *)" = "dev tables"
	ln=$(ip -n "$TB_DUT" -j link show dev d0) &&
		tx=$(timeout 10 bpftool -j map dump pinned "$XNF_PIN_ROOT/tables/xnf_tx") &&
		bt=$(timeout 10 bpftool -j map dump pinned "$XNF_PIN_ROOT/tables/xnf_batch") ||
		{ echo "FAIL: $what: ip or bpftool failed" >&2; return 1; }
	for ((i = 0; i < 100; i++)); do
		got=$(timeout 10 bpftool -j prog show |
		      jq -r --argjson ln "$ln" --argjson tx "$tx" --argjson bt "$bt" \
			 --argjson t "$TABLE_IDS" '
			[.[] | select(any(.map_ids[]?; . as $m | $t | index($m)))] as $p |
			if $ln[0].xdp != null then "d0 runs XDP"
			elif ($tx | length) != 0 then "egress ports left: \($tx)"
			elif ($bt | length) != 0 then "histogram entries left"
			elif ($p | length) != 0 then "programs left: \([$p[] | .name])"
			else "clean" end')
		[[ $got == "programs left"* ]] || break
		sleep 0.02
	done
	tb_expect "$what" "$got" = clean
}

# after_kill WHAT: the state is truthful; detach, or attach and detach,
# succeed; nothing is left. Counts the outcomes in N_ATTACHED.
after_kill()
{
	local what=$1
	truthful "$what"
	if $ATTACHED; then
		N_ATTACHED=$((N_ATTACHED + 1))
	else
		tb_xnf attach d0 chain $CHAIN || { echo "FAIL: $what: attach" >&2; return 1; }
	fi
	tb_xnf detach d0 || { echo "FAIL: $what: detach" >&2; return 1; }
	clean "$what"
}

# measure OP: the longest of three runs of attach or detach, in us, on an
# instance made before (its creation is part of the first attach only).
measure()
{
	local i t a=0 d=0
	tb_xnf attach d0 chain $CHAIN && tb_xnf detach d0
	for i in 1 2 3; do
		t=$(run_us attach d0 chain $CHAIN)
		((t > a)) && a=$t
		t=$(run_us detach d0)
		((t > d)) && d=$t
	done
	if [ "$1" = attach ]; then echo "$a"; else echo "$d"; fi
}

@test "xnf attach killed at random points: status tells the truth, the next command completes or undoes it" {
	local i t us
	N_ATTACHED=0
	t=$(measure attach)
	TABLE_IDS=$(table_ids)
	tb_expect "the instance's tables" "$(jq length <<<"$TABLE_IDS")" -ge 10
	for ((i = 0; i < TRIALS; i++)); do
		us=$(random_us "$t")
		killed "$us" attach d0 chain $CHAIN
		after_kill "trial $i: attach killed after ${us} us of ${t}"
	done
	echo "# attach ($t us) killed $TRIALS times: $N_ATTACHED attached, $((TRIALS - N_ATTACHED)) not" >&3
}

@test "xnf detach killed at random points: status tells the truth, the next command completes or undoes it" {
	local i t us
	N_ATTACHED=0
	t=$(measure detach)
	TABLE_IDS=$(table_ids)
	for ((i = 0; i < TRIALS; i++)); do
		tb_xnf attach d0 chain $CHAIN
		us=$(random_us "$t")
		killed "$us" detach d0
		after_kill "trial $i: detach killed after ${us} us of ${t}"
	done
	echo "# detach ($t us) killed $TRIALS times: $N_ATTACHED attached, $((TRIALS - N_ATTACHED)) not" >&3
}

# A batch reads its input whole before it takes the lock: here a fifo the
# test writes, so the batch waits in the middle of its input. A writer
# goes on meanwhile, and the batch runs nothing before its input ended
# (all or nothing); then its candidate is made over what runs.
@test "a batch waiting for its input holds no lock" {
	local fifo=$TB_TMP/batch pid

	tb_attach_both $CHAIN
	tb_routes
	mkfifo "$fifo"
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" -b "$fifo"
	pid=$TB_BG_PID
	# Opened after the batch started, which so does not hold it too (it
	# would never see the end of its input); read-write, so that the
	# open does not wait for the batch's.
	exec {BATCH_FD}<>"$fifo"
	echo "route add 203.0.113.0/25 via $TB_SINK4" >&"$BATCH_FD"
	reading()
	{
		local fd
		for fd in "/proc/$pid/fd/"*; do
			[ "$(readlink "$fd")" != "$fifo" ] || return 0
		done
		return 1
	}
	tb_until "the batch to read its input" reading
	run -0 tb_xnf -w 0 route add 203.0.113.128/25 via $TB_SINK4
	tb_expect "not yet the batch's route" \
		"$(tb_xnf -j route show | jq 'any(.routes[]; .dst == "203.0.113.0/25")')" = false
	exec {BATCH_FD}>&-
	BATCH_FD=
	batch_gone() { ! kill -0 "$pid" 2>/dev/null; }
	tb_until "the batch to end" batch_gone
	tb_expect "both routes" \
		"$(tb_xnf -j route show | jq '[.routes[].dst | select(startswith("203.0.113."))] | sort')" = \
		"$(jq -n '["203.0.113.0/25", "203.0.113.128/25"]')"
}

# A batch holds the lock from the end of its input to its own end, its
# reading lines included: here one whose last line watches the counters
# (until SIGTERM, or 600 refreshes), stopped in its watch, after its
# commit. (Its first refresh says it watches: SIGTERM ends the watch then,
# never the commit.)
@test "a stopped lock holder blocks no reader, and a writer only for -w seconds" {
	local batch=$TB_TMP/batch pid st

	tb_attach_both $CHAIN
	tb_routes
	tb_xnf fw add prio 10 drop proto udp dport 5001
	printf '%s\n' "route add 203.0.113.0/25 via $TB_SINK4" \
		"stats watch 1 count 600" >"$batch"
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$XNF" -b "$batch" \
		>"$TB_TMP/watch.out"
	pid=$TB_BG_PID
	watching() { [ -s "$TB_TMP/watch.out" ]; }
	tb_until "the batch to watch" watching
	kill -STOP "$pid"
	STOPPED=$pid

	# Readers: no lock, the right answers.
	st=$(tb_xnf -j status)
	tb_expect "status: both attached" \
		"$(jq -c '[.devices[] | [.dev, .attached]] | sort' <<<"$st")" = '[["d0",true],["d1",true]]'
	tb_expect "route show: the others, and the batch's, committed" \
		"$(tb_xnf -j route show | jq '[.routes[].dst] | index("203.0.113.0/25") != null and length == 9')" = true
	tb_expect "fw show: the rule" "$(tb_xnf -j fw show | jq '.rules | length')" -eq 1
	tb_expect "stats: both devices" "$(tb_xnf -j stats | jq '.devices | length')" -eq 2
	tb_expect "config show" "$(tb_xnf -j config show | jq -r .no_route)" = pass
	tb_xnf -j fdb show | jq -e '.fdb | type == "array"' >/dev/null
	tb_xnf -j xconnect show | jq -e '.xconnects | type == "array"' >/dev/null
	tb_xnf -j chain show d0 | jq -e '.attached' >/dev/null

	# A writer gives up after -w seconds, naming the holder.
	run --separate-stderr tb_xnf -j -w 1 route add 203.0.113.128/25 via $TB_SINK4
	tb_expect "writer with -w 1: exit status" "$status" -ne 0
	tb_expect "the error names the holder" \
		"$(jq -r .error <<<"$output" | grep -c "pid $pid")" -eq 1
	tb_expect "the wait was said on stderr, naming the holder" \
		"$(grep -c "pid $pid" <<<"$stderr")" -ge 1
	run tb_xnf -w 0 fw add prio 20 drop proto udp dport 5002
	tb_expect "writer with -w 0: exit status" "$status" -ne 0
	tb_expect "nothing written" \
		"$(tb_xnf -j route show | jq 'any(.routes[]; .dst == "203.0.113.128/25")')" = false

	# Resumed and told to stop watching, the batch ends; then writers
	# proceed.
	kill -CONT "$pid"
	STOPPED=
	kill -TERM "$pid"
	# the hang guard is TB_WAIT: a fixed 10 s once ran out in CI
	batch_gone() { ! kill -0 "$pid" 2>/dev/null; }
	tb_until "the batch to end" batch_gone || true
	tb_expect "the batch ended" "$(kill -0 "$pid" 2>/dev/null && echo running)" = ""
	tb_expect "the batch's route" \
		"$(tb_xnf -j route show | jq 'any(.routes[]; .dst == "203.0.113.0/25")')" = true
	tb_xnf -w 5 route add 203.0.113.128/25 via $TB_SINK4
	tb_xnf fw add prio 20 drop proto udp dport 5002
	tb_expect "written" "$(tb_xnf -j route show | jq 'any(.routes[]; .dst == "203.0.113.128/25")')" = true
}

# A whole configuration a commit away from what runs: d0's chain changed,
# d1 detached, 3,000 routes and 200 rules added (new.conf); and the
# lines that add the routes alone, as a batch (routes.batch).
commit_files()
{
	tb_attach_both l3fwd,l2fwd
	tb_routes
	tb_xnf save >"$TB_TMP/old.conf" || return 1
	{ grep -v '^attach d1 ' "$TB_TMP/old.conf" |
		sed 's/^attach d0 chain l3fwd,l2fwd /attach d0 chain firewall,l3fwd,l2fwd /'
	  awk -v mac="$TB_MAC_K0" 'BEGIN { for (i = 0; i < 3000; i++)
		printf "route add 10.%d.%d.0/24 dev d1 lladdr %s\n", int(i / 256), i % 256, mac }'
	  awk 'BEGIN { for (i = 0; i < 200; i++)
		printf "fw add prio %d drop proto udp dport %d\n", 100 + i, 10000 + i }'
	} >"$TB_TMP/new.conf"
	grep '^route add 10\.' "$TB_TMP/new.conf" >"$TB_TMP/routes.batch"
}

# killed_commits WHAT US N ARGS...: xnf ARGS killed N times, after a
# random time below US microseconds. After each, the next command that
# changes something (a config set of the value that runs) must leave the
# whole configuration of before (old) or of after (the saved $2_after);
# then the old one is applied again. Counts them in N_OLD and N_NEW.
killed_commits()
{
	local what=$1 t=$2 n=$3 i us got
	shift 3
	N_OLD=0 N_NEW=0
	for ((i = 0; i < n; i++)); do
		us=$(random_us "$t")
		killed "$us" "$@"
		tb_xnf config set martian drop || return 1
		got=$(tb_xnf save) || return 1
		if [ "$got" = "$(cat "$TB_TMP/old.conf")" ]; then
			N_OLD=$((N_OLD + 1))
		elif [ "$got" = "$(cat "$TB_TMP/after.conf")" ]; then
			N_NEW=$((N_NEW + 1))
		else
			echo "FAIL: $what killed after $us us of $t: a part of it runs:" >&2
			diff "$TB_TMP/old.conf" <(echo "$got") | head -5 >&2
			return 1
		fi
		tb_xnf apply "$TB_TMP/old.conf" >/dev/null || return 1
	done
}

# killed_in_log ARGS: the change log's records of `xnf ARGS`: each ended
# ("ok"), or was killed and undone (failed, "killed ... restored").
killed_in_log()
{
	local cmd="$*"
	tb_xnf -j monitor once | jq -s -e --arg c "$cmd" '
		[.[] | select(.event == "change" and .command == $c)] |
		all(.result == "ok" or (.result == "failed" and
			(.message | test("^killed .* was restored$"))))'
}

@test "xnf apply killed at random points: the next command leaves the whole old or the whole new configuration, and the log says which" {
	local t killed_n
	commit_files
	t=$(run_us apply "$TB_TMP/new.conf")
	tb_xnf save >"$TB_TMP/after.conf"
	tb_expect "the new configuration's routes" \
		"$(grep -c '^route add 10\.' "$TB_TMP/after.conf")" -eq 3000
	tb_xnf apply "$TB_TMP/old.conf" >/dev/null
	killed_commits apply "$t" 10 apply "$TB_TMP/new.conf"
	echo "# apply ($t us) killed 10 times: $N_OLD the old configuration, $N_NEW the new" >&3
	killed_in_log apply "$TB_TMP/new.conf"
	killed_n=$(tb_xnf -j monitor once | jq -s --arg c "apply $TB_TMP/new.conf" \
		'[.[] | select(.command == $c and .result == "failed")] | length')
	echo "# $killed_n killed after their first change, undone by the next command" >&3
}

@test "xnf -b killed at random points: the next command leaves all of its lines or none" {
	local t
	commit_files
	tb_xnf apply "$TB_TMP/old.conf" >/dev/null
	t=$(run_us -b "$TB_TMP/routes.batch")
	tb_xnf save >"$TB_TMP/after.conf"
	tb_expect "the batch's routes" \
		"$(grep -c '^route add 10\.' "$TB_TMP/after.conf")" -eq 3000
	tb_xnf apply "$TB_TMP/old.conf" >/dev/null
	killed_commits batch "$t" 10 -b "$TB_TMP/routes.batch"
	echo "# -b ($t us) killed 10 times: $N_OLD none of its lines, $N_NEW all" >&3
	killed_in_log -b "$TB_TMP/routes.batch"
}
