#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# cli_fuzz.bats - every refusal looks like one. A bounded fuzz of the xnf
# command line: each command that takes a device with odd device names
# (traversal, trailing slash, ".", "..", 16 bytes and more, empty,
# whitespace, control bytes, not UTF-8), every command with too few and too
# many words, unknown options, objects and commands. Each invocation must
#  - exit non-zero, below 124 (timeout) and 128 (a signal: a crash),
#  - print nothing on stdout and exactly one line on stderr, starting with
#    "Error:";
#  - under -j, print one JSON object with an "error" member (schema
#    xnf/error/1) on stdout and
#    nothing on stderr.
# All of them run against an instance attached to d0 and d1 of the test
# bed (testbed/testbed.bash), which must be unchanged at the end.
# The cases are generated from fixed lists: no randomness, the same few
# hundred invocations every run. FUZZ_VERBOSE=1 prints every one.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=600}"

load ../testbed/testbed

setup_file()
{
	TB_SKIP=$(tb_missing)
	export TB_SKIP
	[ -z "$TB_SKIP" ] || return 0
	tb_testbed_up firewall,l3fwd,l2fwd
	tb_xnf fw add prio 100 drop proto udp dport 5001
}

teardown_file()
{
	tb_teardown
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
}

# Device names no command may accept. Each must be refused before it
# becomes a pin path or an ifindex: none of them is a device of the DUT
# ("d0:1" would be d0 to the kernel, "../../b/dev/e0" another instance's).
LONG=$(printf 'n%.0s' {1..300})
NAMES=("" " " "." ".." "../../b/dev/e0" "d0/" "/d0" "d0 " $'d0\n' $'d0\x01'
	"0123456789abcdef" "$LONG" "-j" "%s%n" $'\xff\xfe' "d0:1" "nosuch0")
# Those that also run under -j.
JSON_NAMES=("" "../../b/dev/e0" $'d0\n' "$LONG" $'\xff\xfe' "d0:1")

# Commands with a device ("@" is replaced by each name).
DEV_CMDS=("detach @" "chain set @ l3fwd" "chain show @" "status @"
	"stats @" "stats dev @" "stats @ reset" "attach @ chain l3fwd"
	"route add 203.0.113.0/24 dev @ lladdr 02:78:6e:00:00:09"
	"route add 203.0.113.0/24 via 198.51.100.1 dev @"
	"fdb add 02:78:6e:00:01:09 dev @" "xconnect @ d1" "xconnect d0 @"
	"xconnect del @" "worker @ nf l2fwd duration 1" "plan @"
	"nat add masquerade oif @" "nat add dnat iif @ to 198.51.100.2")

# The same names where other nouns go.
WORD_CMDS=("@" "route @" "fw @" "route del @" "fw add drop src @"
	"fdb add @ dev d1" "config set @ pass" "nat @" "nat add @"
	"nat add snat to @" "nat add masquerade saddr @")

# Too few or too many words, missing values.
COUNT_CASES=("" "detach" "detach d0 d1" "destroy now" "chain set"
	"chain set d0" "chain set d0 l3fwd bogus" "chain show d0 d1"
	"status d0 d1" "stats d0 d1" "stats watch" "stats watch 1 count"
	"stats count 2" "stats -f" "stats -f bogus" "stats -f prometheus watch 1"
	"stats -f prometheus reset" "exporter bogus" "exporter listen"
	"exporter listen 127.0.0.1" "exporter listen nowhere:80" "attach" "attach d0" "attach d0 chain" "attach d0 mode"
	"attach f9 chain l3fwd mode" "route add" "route add 203.0.113.0/24"
	"route add 203.0.113.0/24 via" "route add 203.0.113.0/24 dev d1"
	"route del" "route del 203.0.113.0/24 extra" "route show extra"
	"fw add" "fw add prio" "fw add drop proto" "fw del" "fw del prio"
	"fw del prio 1 2" "fw default" "fw default allow drop" "fw flush now"
	"fw show extra" "nat add" "nat add prio" "nat add snat to"
	"nat add masquerade oif" "nat del" "nat del prio" "nat del prio 1 2"
	"nat flush now" "nat show extra" "fdb add" "fdb add 02:78:6e:00:01:09"
	"fdb add 02:78:6e:00:01:09 dev" "fdb del" "fdb show extra"
	"xconnect d0" "xconnect del" "xconnect show extra" "config set"
	"config set no_route" "config set no_route pass extra"
	"config show extra" "plan" "plan d0 queues" "plan d0 cores"
	"worker" "worker d0" "worker d0 nf" "worker d0 nf l2fwd batch")

# Unknown options, objects and commands; prefixes of several that resolve
# to one that refuses what follows (detach without a device, fw del
# without prio); a prefix of reset, which is never abbreviated.
UNKNOWN_CASES=("-Z status" "--bogus status" "-b" "-vZ status"
	"--json=1 status" "-Z" "--verbose=2 status" "-b /nonexistent"
	"-b - status" "bogus" "d" "de" "route bogus" "fw bogus" "fw d" "fw r"
	"fw res"
	"fdb bogus" "nat bogus" "nat add masquerade bogus" "chain bogus" "config bogus" "xconnect bogus d1"
	"attach d0 chain l3fwd bogus" "plan d0 bogus 1" "stats d0 bogus"
	"worker d0 bogus 1" "route add 203.0.113.0/24 bogus")

# The batching model (Python): a few cases, each one starts numpy.
MODEL_CASES=("model" "model bogus" "model predict -L x")

# fuzz_run ARGS...: one invocation of xnf in the DUT, checked; a failure
# is logged to $FUZZ_LOG and counted in $FUZZ_FAILS, every run in $FUZZ_N.
# It is a JSON one when an option before the object holds -j.
fuzz_run()
{
	local out="$BATS_TEST_TMPDIR/out" err="$BATS_TEST_TMPDIR/err"
	local rc=0 why="" json=0 w errl
	for w in "$@"; do
		[[ "$w" == -* && "$w" != - && "$w" != -- ]] || break
		[[ "$w" == --json || "$w" =~ ^-[a-z]*j ]] && json=1
	done
	FUZZ_N=$((FUZZ_N + 1))
	# XNF_PIN_ROOT is exported by the test bed.
	timeout "$TB_TIMEOUT" ip netns exec "$TB_DUT" "$XNF" "$@" \
		>"$out" 2>"$err" || rc=$?
	mapfile -t errl <"$err"
	if [ "$rc" -eq 0 ]; then
		why="exit 0"
	elif [ "$rc" -ge 124 ]; then
		why="exit $rc (timeout or signal)"
	elif [ "$json" = 1 ]; then
		if [ -s "$err" ]; then
			why="stderr not empty under -j"
		elif ! jq -se 'length == 1 and .[0].schema == "xnf/error/1" and
			(.[0].error | type) == "string"' \
			<"$out" >/dev/null 2>&1; then
			why="stdout is not one JSON object with an error"
		fi
	elif [ -s "$out" ]; then
		why="output on stdout"
	elif [ "${#errl[@]}" -ne 1 ] || [[ "${errl[0]}" != "Error: "* ]]; then
		why="stderr is not one 'Error: ' line"
	fi
	if [ -n "${FUZZ_VERBOSE:-}" ] || [ -n "$why" ]; then
		{
			printf 'xnf'
			printf ' %q' "$@"
			printf ': exit %d%s\n--- stdout:\n%s\n--- stderr:\n%s\n' \
				"$rc" "${why:+ FAIL: $why}" \
				"$(head -c 600 "$out")" "$(head -c 600 "$err")"
		} >>"$FUZZ_LOG"
	fi
	[ -z "$why" ] || FUZZ_FAILS=$((FUZZ_FAILS + 1))
}

# fuzz_words [-j] LINE...: each LINE split on blanks.
fuzz_words()
{
	local j=() line words
	if [ "$1" = -j ]; then
		j=(-j)
		shift
	fi
	for line in "$@"; do
		read -r -a words <<<"$line"
		fuzz_run "${j[@]}" "${words[@]}"
	done
}

# fuzz_names [-j] TEMPLATE NAME...: TEMPLATE with "@" replaced by each
# NAME (as one word, whatever it holds).
fuzz_names()
{
	local j=() tpl name w args
	if [ "$1" = -j ]; then
		j=(-j)
		shift
	fi
	tpl=$1
	shift
	for name in "$@"; do
		args=()
		for w in $tpl; do
			[ "$w" = @ ] && args+=("$name") || args+=("$w")
		done
		fuzz_run "${j[@]}" "${args[@]}"
	done
}

fuzz_begin()
{
	FUZZ_N=0 FUZZ_FAILS=0 FUZZ_LOG="$BATS_TEST_TMPDIR/fuzz.log"
	: >"$FUZZ_LOG"
	FUZZ_BEFORE=$(tb_snapshot)
}

fuzz_end()
{
	local after
	echo "# $BATS_TEST_DESCRIPTION: $FUZZ_N invocations, $FUZZ_FAILS failed" >&3
	cat "$FUZZ_LOG"
	after=$(tb_snapshot)
	[ "$after" = "$FUZZ_BEFORE" ] ||
		diff <(echo "$FUZZ_BEFORE") <(echo "$after")
	tb_expect "failed invocations" "$FUZZ_FAILS" -eq 0
	tb_expect "state unchanged" "$after" = "$FUZZ_BEFORE"
}

@test "odd device names are refused with one Error line" {
	local c
	fuzz_begin
	for c in "${DEV_CMDS[@]}"; do
		fuzz_names "$c" "${NAMES[@]}"
		fuzz_names -j "$c" "${JSON_NAMES[@]}"
	done
	fuzz_end
}

@test "odd words where other nouns go are refused with one Error line" {
	local c
	fuzz_begin
	for c in "${WORD_CMDS[@]}"; do
		fuzz_names "$c" "${NAMES[@]}"
		fuzz_names -j "$c" "${JSON_NAMES[@]}"
	done
	fuzz_end
}

@test "wrong word counts, unknown options and commands: one Error line" {
	fuzz_begin
	fuzz_words "${COUNT_CASES[@]}" "${UNKNOWN_CASES[@]}"
	fuzz_words -j "${COUNT_CASES[@]}" "${UNKNOWN_CASES[@]}"
	fuzz_end
}

@test "the model's refusals: one Error line, or one JSON error under -j" {
	fuzz_begin
	fuzz_words "${MODEL_CASES[@]}"
	fuzz_words -j "${MODEL_CASES[@]}"
	fuzz_end
}

# A prefix of several objects or commands is the first of them in xnf's
# order (xnf(8), "Prefixes"), as ip(8) resolves one: each of these runs
# the command it names, reads only, and prints its document.
@test "a prefix of several objects or commands is the first in xnf's order" {
	local c w schema
	local -A want=(
		[s]=xnf/status-list/1 [st]=xnf/status-list/1 [sta]=xnf/status-list/1
		[stat]=xnf/status-list/1 [stats]=xnf/stats/1 [sa]=xnf/save/1
		[c]=xnf/status-list/1 ["c s"]=xnf/status-list/1 ["co s"]=xnf/config/1
		["r s"]=xnf/routes/1 ["f s"]=xnf/fw/1 ["fd s"]=xnf/fdb/1
		["x s"]=xnf/xconnects/1 ["mo last 1 once"]=xnf/change/1
	)
	fuzz_begin
	for c in "${!want[@]}"; do
		read -r -a w <<<"$c"
		run --separate-stderr tb_xnf -j "${w[@]}"
		schema=$(jq -rs '.[0].schema' <<<"$output")
		echo "xnf -j $c: exit $status, $schema" >&2
		tb_expect "xnf -j $c: exit" "$status" -eq 0
		tb_expect "xnf -j $c: the document of ${want[$c]}" "$schema" = "${want[$c]}"
	done
	fuzz_end
}
