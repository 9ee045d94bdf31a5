#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# json.bats - every JSON document xnf prints has the shape docs/json.md
# documents: one object whose first member "schema" names it, valid
# against docs/json/<name>.schema.json (selftests/lib/json_shape.py, with
# Debian's python3-jsonschema). The schemas forbid members they do not
# list, so a field added without documenting it fails here.
#
# setup_file builds one test bed (testbed/testbed.bash) holding
# every kind of state: two attachments (one placed, one with an AF_XDP
# worker behind xsk), routes of every type and both families, a multipath
# route, firewall rules of every field and hits on them, an FDB entry, a
# cross-connect, a changed exception action. Then every command that
# prints JSON runs once under -j, with its stdout, stderr and exit status
# kept and what they must be written to a manifest (`keep`): the show
# commands (status also of a chain without l3fwd, and without an
# instance), stats (once, per CPU, watch), route get of every route type
# and of a flow, save and apply, plan (attached, and on the fixture
# machines), the
# worker's report, the event streams of `route sync` and `neigh follow`,
# the batching model, refusals (one error document on stdout) and
# warnings (documents of their own on stderr, beside stdout's). The tests
# then check the manifest, the schemas' coverage of the sources and of
# docs/json.md, and that a member the schema does not list is refused.
# JSON_KEEP=DIR keeps a copy of the outputs and the manifest in DIR.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=600}"

load ../testbed/testbed

DOCS=$TB_TOP/docs/json
FIX=$TB_TOP/selftests/fixtures
SHAPE=("/usr/bin/python3" "$TB_TOP/selftests/lib/json_shape.py")
# Schemas docs/json.md announces for output still to come, with what will
# print it. Once a source prints one, it must have its schema file and be
# exercised here like every other (the coverage test), and leaves this list.
PENDING=()

# The sync's gateway MACs and prefixes (documentation and benchmarking
# ranges, inside the test bed's namespaces).
NEW=02:78:6e:00:0f:99
NH_A=02:78:6e:00:0f:01
NH_B=02:78:6e:00:0f:02
P4=203.0.113.0/24
BR_NET=198.18.200
BR_PFX=198.18.201.0/24

setup_file()
{
	TB_SKIP=$(tb_missing)
	[ -n "$TB_SKIP" ] || "${SHAPE[0]}" -c 'import jsonschema' 2>/dev/null ||
		TB_SKIP="needs python3-jsonschema (scripts/install-deps.sh)"
	export TB_SKIP
	[ -z "$TB_SKIP" ] || return 0
	tb_setup || return 1
	J=$TB_TMP/json
	export J
	mkdir "$J" && state && collect
}

teardown_file()
{
	tb_teardown
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
}

# keep NAME RC SCHEMA STDOUT STDERR CMD...: runs CMD, keeping its stdout,
# stderr and exit status in $J/NAME.{out,err,rc}, and writes to the
# manifest what they must be: exit status RC; on stdout (STDOUT) "one"
# document, a document a line ("lines"), or "none"; on stderr (STDERR)
# "none" or "warnings" (one or more warning documents); every document of
# schema SCHEMA ("any": each of its own).
keep()
{
	local name=$1 rc=$2 schema=$3 out=$4 err=$5 got=0
	shift 5
	"$@" >"$J/$name.out" 2>"$J/$name.err" || got=$?
	echo "$got" >"$J/$name.rc"
	echo "$name $rc $schema $out $err" >>"$J/manifest"
}

# keep_bg NAME CMD...: CMD (a stream, or the worker; it bounds itself)
# started in the DUT in the background, with the test bed's pin root, its
# output kept as keep does; sets BG_PID. keep_end NAME SCHEMA PID ends it
# with SIGTERM and records it (exit 0, a document a line).
keep_bg()
{
	local name=$1
	shift
	tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" "$@" \
		>"$J/$name.out" 2>"$J/$name.err"
	BG_PID=$TB_BG_PID
}

keep_end()
{
	local name=$1 schema=$2 pid=$3 got=0
	kill -TERM "$pid"
	wait "$pid" || got=$?
	echo "$got" >"$J/$name.rc"
	echo "$name 0 $schema lines none" >>"$J/manifest"
}

# masq_gone: a connection masqueraded out of jsbr0 to its address
# (written by hand, selftests/lib/ct_entries.py), flushed by the route
# sync when the address is removed: its ct_flush event.
masq_gone()
{
	local br
	br=$(ip netns exec "$TB_DUT" cat /sys/class/net/jsbr0/ifindex) &&
		python3 "$TB_TOP/selftests/lib/ct_entries.py" \
			"$XNF_PIN_ROOT/tables/xnf_ct" \
			"udp,192.0.2.77,4000,198.51.100.77,53,198.51.100.77,53,$BR_NET.1,4000,masquerade,$br" \
			>"$J/ct.batch" &&
		tb_run "$TB_DUT" bpftool batch file "$J/ct.batch" >/dev/null &&
		ip -n "$TB_DUT" addr del $BR_NET.1/24 dev jsbr0 &&
		tb_until "the ct_flush event" event "$J/sync.out" ct_flush \
			'.flushed == 1 and .dev == "jsbr0"'
}

# event FILE NAME [JQ]: the stream in FILE printed the event NAME.
event()
{
	jq -e --arg e "$2" "select(.event == \$e) | ${3:-true}" "$1" \
		2>/dev/null | grep -qx true
}

trace_armed()
{
	[ "$(tb_xnf -j status | jq -r '.trace.live')" = true ]
}

worker_running()
{
	[ "$(tb_xnf -j status d0 | jq -r '.workers[0].state // "none"')" = running ]
}

# state: what the outputs show. d0 runs firewall,xsk placed by `cores
# auto`, with an AF_XDP l3fwd worker (WPID) transmitting on d1; d1 runs
# firewall,l3fwd,l2fwd; a route sends to e0, an egress port xnf is not
# attached to, whose veth peer takes no redirected frame (a warning).
# Pings through the worker and datagrams the firewall drops leave
# counters, batch histograms and rule hits.
state()
{
	local rc
	# The monitor, from before the instance exists to the end.
	keep_bg monitor timeout 600 "$XNF" -j monitor
	MPID=$BG_PID
	tb_until "the monitor to start" event "$J/monitor.out" instance || return 1
	tb_xnf attach d0 chain firewall,xsk cores auto &&
	tb_xnf attach d1 chain firewall,l3fwd,l2fwd &&
	tb_routes &&
	tb_xnf route add $P4 nexthop via $TB_SINK4 dev d1 \
		nexthop dev d1 lladdr $NH_A nexthop dev d1 lladdr $NH_B &&
	tb_xnf route add 203.0.113.77/32 blackhole &&
	tb_xnf route add 203.0.113.78/32 unreachable &&
	tb_xnf route add 203.0.113.80/32 dev d1 lladdr 02:00:00:00:00:99 &&
	tb_xnf route add 198.51.100.128/25 kernel &&
	tb_xnf route add 2001:db8:99::/48 blackhole &&
	ip -n "$TB_DUT" link add e0 type veth peer name e1 &&
	ip -n "$TB_DUT" link set e0 up && ip -n "$TB_DUT" link set e1 up &&
	tb_xnf route add 203.0.113.81/32 dev e0 lladdr 02:00:00:00:00:98 \
		2>/dev/null &&
	tb_xnf fw add prio 5 allow proto udp src 192.0.2.0/24 \
		dst 198.51.100.0/24 sport 1000-2000 dport 53 &&
	tb_xnf fw add drop proto tcp dport 23 &&
	tb_xnf fw add allow src 2001:db8:1::/64 &&
	tb_xnf fw add drop proto udp dport 5001 log prefix "json: " &&
	tb_xnf config set log_reasons martian,no_route &&
	tb_xnf nat add masquerade oif d1 saddr 192.0.2.0/24 proto udp \
		to :1024-2047 random &&
	tb_xnf nat add dnat iif d1 proto tcp dport 8080 to [2001:db8:2::9]:80 || return 1

	keep_bg worker "$XNF" -j worker d0 nf l3fwd egress d1 duration 300
	WPID=$BG_PID
	tb_until "the worker to run" worker_running &&
	tb_ping_ok "$TB_SRC" "$TB_SINK4" 3 &&
	tb_udp_send "$TB_SRC" "$TB_SINK4" 5001 3 || return 1
	# A trace of one ping (through d0's worker), ended by its count.
	keep_bg trace "$XNF" -j trace proto icmp count 1 timeout 60
	tb_until "the trace to be armed" trace_armed &&
		tb_ping_ok "$TB_SRC" "$TB_SINK4" 1 || return 1
	rc=0
	wait "$BG_PID" || rc=$?
	echo "$rc" >"$J/trace.rc"
	echo "trace 0 xnf/trace/1 lines none" >>"$J/manifest"
	tb_xnf fdb add 02:00:00:00:00:aa dev d1 &&
	tb_xnf xconnect d0 d1 lladdr 02:00:00:00:00:01 02:00:00:00:00:02 &&
	tb_xnf config set martian pass
}

# collect: every JSON output, kept with what it must be.
collect()
{
	local bad=$TB_TMP/bad.batch conf=$TB_TMP/saved.conf d

	keep version 0 xnf/version/1 one none tb_xnf -j -V
	keep status 0 xnf/status-list/1 one none tb_xnf -j status
	keep status-dev 0 xnf/status/1 one none tb_xnf -j status d0
	keep chain-show 0 xnf/status/1 one none tb_xnf -j chain show d1
	keep stats 0 xnf/stats/1 one none tb_xnf -j stats
	keep stats-percpu 0 xnf/stats/1 one none tb_xnf -j stats d0 percpu
	keep stats-watch 0 xnf/stats/1 lines none \
		tb_xnf -j stats d1 watch 0.2 count 2
	keep routes 0 xnf/routes/1 one none tb_xnf -j route show
	keep route-unicast 0 xnf/route/1 one none tb_xnf -j route get 198.51.100.9
	keep route-multipath 0 xnf/route/1 one none tb_xnf -j route get 203.0.113.9
	keep route-local 0 xnf/route/1 one none tb_xnf -j route get $TB_D04
	keep route-blackhole 0 xnf/route/1 one none tb_xnf -j route get 203.0.113.77
	keep route-unreachable 0 xnf/route/1 one none tb_xnf -j route get 203.0.113.78
	keep route-static 0 xnf/route/1 one none tb_xnf -j route get 203.0.113.80
	keep route-kernel 0 xnf/route/1 one none tb_xnf -j route get 198.51.100.200
	keep route-v6 0 xnf/route/1 one none tb_xnf -j route get 2001:db8:2::9
	keep route-flow 0 xnf/route/1 one none tb_xnf -j route get 203.0.113.9 \
		from $TB_SRC4 proto udp sport 1000 dport 53
	keep route-flow-icmp 0 xnf/route/1 one none tb_xnf -j route get 198.51.100.9 \
		from $TB_SRC4 proto icmp
	keep status-none 0 xnf/status-list/1 one none timeout "$TB_TIMEOUT" \
		ip netns exec "$TB_DUT" env XNF_PIN_ROOT="${XNF_PIN_ROOT%/*}/none" "$XNF" -j status
	keep fw 0 xnf/fw/1 one none tb_xnf -j fw show
	keep nat 0 xnf/nat/1 one none tb_xnf -j nat show
	keep fdb 0 xnf/fdb/1 one none tb_xnf -j fdb show
	keep xconnects 0 xnf/xconnects/1 one none tb_xnf -j xconnect show
	keep config 0 xnf/config/1 one none tb_xnf -j config show
	keep ct 0 xnf/ct/1 one none tb_xnf -j ct show
	keep ct-stats 0 xnf/ct-stats/1 one none tb_xnf -j ct stats
	keep ct-flush 0 xnf/ct-flush/1 one none tb_xnf -j ct flush proto udp
	keep save 0 xnf/save/1 one none tb_xnf -j save
	tb_xnf save >"$conf" || return 1
	keep apply 0 xnf/apply/1 one none tb_xnf -j apply "$conf"
	keep apply-check 0 xnf/diff/1 one none tb_xnf -j apply check "$conf"
	keep batch 0 any lines none tb_xnf -j -b - \
		<<<$'route show\nfw show\nstatus d1\nconfig show'
	keep plan 0 xnf/plan/1 one none tb_xnf -j plan d0
	keep plan-two-socket 0 xnf/plan/1 one none \
		env XNF_SYSFS_ROOT="$FIX/two-socket" "$XNF" -j plan ens1f0 cores 0-3
	keep plan-isolated 0 xnf/plan/1 one none \
		env XNF_SYSFS_ROOT="$FIX/ht-isolated" "$XNF" -j plan enp1s0f0

	# Refusals: one error document on stdout, nothing on stderr.
	keep error-route 1 xnf/error/1 one none tb_xnf -j route get 2001:db8:ffff::1
	keep error-format 1 xnf/error/1 one none tb_xnf -j stats -f prometheus
	printf '%s\n' "route show" "fw add prio x drop" >"$bad"
	keep error-batch 1 xnf/error/1 one none tb_xnf -j -b "$bad"
	keep error-model 1 xnf/error/1 one none "$XNF" -j model predict

	# Warnings: beside what stdout holds (here nothing), on stderr. A
	# veth pair of the DUT whose peer takes no redirected frame (no XDP,
	# no GRO) and sends with tx checksum offload on: attach warns twice.
	ip -n "$TB_DUT" link add w0 type veth peer name w1 &&
		ip -n "$TB_DUT" link set w0 up && ip -n "$TB_DUT" link set w1 up &&
		tb_dut ethtool -K w1 gro off tx on >/dev/null || return 1
	keep warning-attach 0 - none warnings tb_xnf -j attach w0 chain l2fwd
	keep status-l2fwd 0 xnf/status/1 one none tb_xnf -j status w0
	tb_xnf detach w0 || return 1
	keep warning-route 0 - none warnings \
		tb_xnf -j route add 203.0.113.82/32 dev w0 lladdr 02:00:00:00:00:97

	# The model: its three outputs, and a warning beside a document.
	keep model-predict 0 xnf/model-predict/1 one none \
		"$XNF" -j model predict --measured "$FIX/model/stats.json"
	keep model-dimension 0 xnf/model-dimension/1 one none \
		"$XNF" -j model dimension -L 64 --beta 8 --service-linear 400,100 \
		--load 20M
	keep model-dimension-snapshots 0 xnf/model-dimension/1 one none \
		"$XNF" -j model dimension --measured "$FIX"/model/snap-0*.json \
		--loss 1e-3
	keep model-validate 0 xnf/model-validate/1 one none \
		"$XNF" -j model validate "$FIX/model/sweep.json" --out "$TB_TMP/validate"
	keep model-warning 3 xnf/model-predict/1 one warnings \
		"$XNF" -j model predict -L 256 --beta 32 --rate 1M \
		--service-linear 1000,20 --solver iterate --max-iter 5

	# A trace of one ping (through d0's worker), ended by its count.
	# The worker's report when it ends.
	keep_end worker xnf/worker/1 "$WPID" || return 1
	WPID=

	# neigh follow, for the routes by hand: the sink's MAC changes.
	keep_bg follow timeout 600 "$XNF" -j neigh follow
	tb_until "neigh follow to start" event "$J/follow.out" started &&
		ip -n "$TB_DUT" neigh replace $TB_SINK4 lladdr $NEW dev d1 nud permanent &&
		tb_until "the neigh event" event "$J/follow.out" neigh ".lladdr == \"$NEW\"" &&
		ip -n "$TB_DUT" neigh replace $TB_SINK4 lladdr $TB_MAC_K0 dev d1 nud permanent &&
		keep_end follow xnf/sync-event/1 "$BG_PID" || return 1

	# route sync, once the routes by hand are gone: a route added, one
	# through a device without XDP transmit (a bridge: passed to the
	# kernel and reported), a neighbour changed; then its flush.
	for d in $(tb_xnf -j route show | jq -r '.routes[].dst'); do
		tb_xnf route del "$d" || return 1
	done
	ip -n "$TB_DUT" link add jsbr0 type bridge &&
		ip -n "$TB_DUT" link set jsbr0 up &&
		ip -n "$TB_DUT" addr add $BR_NET.1/24 dev jsbr0 &&
		ip -n "$TB_DUT" neigh replace $BR_NET.2 lladdr $NEW dev jsbr0 nud permanent ||
		return 1
	keep_bg sync timeout 600 "$XNF" -j route sync
	tb_until "route sync to start" event "$J/sync.out" started &&
		ip -n "$TB_DUT" route add $P4 via $TB_SINK4 &&
		tb_until "the batch" event "$J/sync.out" batch '.added >= 1' &&
		ip -n "$TB_DUT" route add $BR_PFX via $BR_NET.2 &&
		tb_until "the report" event "$J/sync.out" unsupported ".dst == \"$BR_PFX\"" &&
		ip -n "$TB_DUT" neigh replace $TB_SINK4 lladdr $NEW dev d1 nud permanent &&
		tb_until "the neigh event" event "$J/sync.out" neigh ".lladdr == \"$NEW\"" &&
		masq_gone || return 1
	keep_end sync xnf/sync-event/1 "$BG_PID" || return 1
	keep sync-flush 0 xnf/sync-flush/1 one none tb_xnf -j route sync flush
	tb_until "the monitor to see the flush" event "$J/monitor.out" change \
		'.command == "route sync flush"' &&
		keep_end monitor any "$MPID" || return 1
	# The packet log's records of the datagrams to 5001, from the ring.
	keep monitor-log 0 xnf/log/1 lines none tb_xnf -j monitor log once
	# More changes than the change log keeps (256): the first are lost.
	for ((i = 0; i < 260; i++)); do echo "config set no_route pass"; done |
		tb_xnf -b - || return 1
	keep monitor-lost 0 xnf/change/1 lines none tb_xnf -j monitor changes last 1000 once
	[ -z "${JSON_KEEP:-}" ] || cp -r "$J" "$JSON_KEEP"
}

# shape ARGS...: json_shape.py ARGS with the schemas of docs/json.
shape()
{
	"${SHAPE[@]}" "$1" "$DOCS" "${@:2}"
}

# The names in one list, sorted, one a line.
lines() { printf '%s\n' "$@" | sort -u; }

@test "every output is a document of its schema, first member schema, on the stream it belongs to" {
	run -0 shape check "$J"
	echo "$output"
	# Every command ran: 40 outputs, each checked.
	tb_expect "outputs checked" "$(wc -l <"$J/manifest")" -ge 40
}

# The flow cache's hit rate, summed and per CPU, of every NF that caches:
# hit / (hit + miss) to 3 decimals, null where neither counted. The traffic of the state
# went through d0's and d1's firewalls, so both kinds are there.
@test "stats: the flow cache's hit_rate is hit / (hit + miss), null before any packet" {
	local all='[.devices[].flow_cache | (., .percpu[]) | to_entries[]
		| select(.key != "percpu" and .key != "cpu" and .key != "bypassed") | .value]'
	tb_expect "every hit_rate right" \
		"$(jq "$all | map(if .hit + .miss == 0 then .hit_rate == null
			else (.hit_rate - .hit / (.hit + .miss)) as \$d
				| \$d <= 0.0005 and \$d >= -0.0005 end) | all" "$J/stats.out")" = true
	tb_expect "some NF counted packets" \
		"$(jq "$all | map(select(.hit + .miss > 0 and .hit_rate != null)) | length > 0" \
			"$J/stats.out")" = true
	tb_expect "some NF counted none" \
		"$(jq "$all | map(select(.hit + .miss == 0 and .hit_rate == null)) | length > 0" \
			"$J/stats.out")" = true
}

@test "a refusal is one error document on stdout, a warning a document on stderr beside stdout's" {
	local n
	for n in error-route error-format error-batch error-model; do
		tb_expect "$n: exit" "$(cat "$J/$n.rc")" -eq 1
		tb_expect "$n: one error with a message" \
			"$(jq -sc 'map([.schema, (.error | length > 0)])' "$J/$n.out")" = \
			'[["xnf/error/1",true]]'
		tb_expect "$n: stderr" "$(wc -c <"$J/$n.err")" -eq 0
	done
	# The attach did what it was asked and warned twice: the peer takes
	# no redirected frame, and sends with tx checksum offload on.
	tb_expect "attach: exit" "$(cat "$J/warning-attach.rc")" -eq 0
	tb_expect "attach: stdout" "$(wc -c <"$J/warning-attach.out")" -eq 0
	tb_expect "attach: two warnings" \
		"$(jq -sc 'map(.schema) | unique + [length]' "$J/warning-attach.err")" = \
		'["xnf/warning/1",2]'
	# A route to w0, an egress port that takes no redirected frame: one.
	tb_expect "route add: exit" "$(cat "$J/warning-route.rc")" -eq 0
	tb_expect "route add: stdout" "$(wc -c <"$J/warning-route.out")" -eq 0
	tb_expect "route add: one warning" \
		"$(jq -sc 'map(.schema) | unique + [length]' "$J/warning-route.err")" = \
		'["xnf/warning/1",1]'
	# The model's: the prediction on stdout, the warning on stderr.
	tb_expect "model: not converged" \
		"$(jq -c '[.schema, .solver.converged]' "$J/model-warning.out")" = \
		'["xnf/model-predict/1",false]'
	tb_expect "model: the warning" \
		"$(jq -sc 'map(.schema)' "$J/model-warning.err")" = '["xnf/warning/1"]'
}

@test "the streams carry the schema on every line, and printed every kind of event" {
	tb_expect "route sync: the events" \
		"$(jq -sc 'map(.event) | unique' "$J/sync.out")" = \
		'["batch","ct_flush","neigh","resync","started","stopped","unsupported"]'
	tb_expect "neigh follow: the events" \
		"$(jq -sc 'map(.event) | unique' "$J/follow.out")" = \
		'["neigh","started","stopped"]'
	tb_expect "watch: two refreshes with rates" \
		"$(jq -sc 'map([.schema, (.interval > 0), (.devices[0].nfs[0].rates | type)])' \
			"$J/stats-watch.out")" = \
		'[["xnf/stats/1",true,"object"],["xnf/stats/1",true,"object"]]'
	tb_expect "monitor: the events" \
		"$(cat "$J/monitor.out" "$J/monitor-lost.out" | jq -sc 'map(.event) | unique')" = \
		'["change","instance","log","lost"]'
	tb_expect "monitor log: the datagrams' records" \
		"$(jq -sc 'map(select(.source == "rule") | [.schema, .prefix, .dport])' "$J/monitor-log.out")" = \
		'[["xnf/log/1","json: ",5001],["xnf/log/1","json: ",5001],["xnf/log/1","json: ",5001]]'
	tb_expect "monitor: the same records" \
		"$(jq -sc 'map(select(.source == "rule") | [.schema, .prefix, .dport])' "$J/monitor.out")" = \
		'[["xnf/log/1","json: ",5001],["xnf/log/1","json: ",5001],["xnf/log/1","json: ",5001]]'
	tb_expect "every line a document" \
		"$(cat "$J/sync.out" "$J/follow.out" "$J/stats-watch.out" "$J/monitor.out" \
			"$J/monitor-lost.out" "$J/monitor-log.out" | grep -vc '^{"schema":')" -eq 0
}

# Coverage: the schemas the sources print, the files of docs/json, and
# the schemas this test met are the same set (less PENDING ones no source
# prints yet); every source file of the CLI that prints JSON opens its
# documents with a schema; docs/json.md describes every member of each.
@test "every schema the sources print has its file and its section, and was exercised here" {
	local src files seen pend f
	cd "$TB_TOP"
	src=$(grep -ohE '"xnf/[a-z0-9-]+/[0-9]+\\?"' cli/*.c common/*.c tools/xnf_model/*.py |
		tr -d '"\\' | sort -u)
	pend=$(lines "${PENDING[@]}" | grep -vxF -f <(echo "$src") || true)
	files=$(shape names | sort -u)
	seen=$(sort -u "$J/seen")
	echo "sources: $src" | tr '\n' ' '
	tb_expect "files without a source, or sources without a file" \
		"$(diff <(echo "$src") <(echo "$files") | grep '^[<>]' | tr '\n' ' ')" = ""
	tb_expect "schemas not exercised here" \
		"$(diff <(echo "$src") <(echo "$seen") | grep '^[<>]' | tr '\n' ' ')" = ""
	# Pending schemas are announced in the doc, and have no file yet.
	for f in $pend; do
		grep -qF "\`$f\`" docs/json.md
		tb_expect "$f: a file but no source" "$(grep -c "\"$f\"" docs/json/*.json | grep -vc ':0$')" -eq 0
	done
	# A CLI source that prints JSON (anything with a key for -j) opens a
	# document with its schema.
	for f in $(grep -lE 'open_json_(object|array)|print_[a-z]+\(PRINT_(ANY|JSON)' cli/*.c); do
		tb_expect "$f: a document with a schema" "$(grep -c 'open_json_doc("xnf/' "$f")" -ge 1
	done
	run -0 shape doc docs/json.md
	echo "$output"
}

# The schemas hold: a member they do not list, one missing, or one of
# another type fails, at the top, in a row, in a row of another file's
# definition ($ref) and in a reason map.
@test "a member the schema does not list, lacks or types otherwise fails" {
	local t=$TB_TMP/mutated.json case file expr
	for case in \
		"status-dev|.bogus = 1" \
		"status-dev|del(.pins)" \
		"status-dev|.workers[0].bogus = 1" \
		"status|.devices[0].nfs[0].bogus = 1" \
		"stats|.devices[0].workers[0].kernel.bogus = 1" \
		"stats|.devices[0].drop_reasons.bogus = 1" \
		"stats|.devices[0].ifindex = \"2\"" \
		"stats|.egress_ports[0].xmit.bogus = 1" \
		"status|.egress_ports[0].attached = true" \
		"stats|.time = \"now\"" \
		"routes|.routes[0].bogus = 1" \
		"nat|.rules[1].bogus = 1" \
		"nat|.rules[0].family = 4" \
		"route-multipath|.nexthops[0].bogus = 1" \
		"route-flow|.flow.bogus = 1" \
		"route-flow|.flow.hash = null" \
		"status-l2fwd|.l3fwd = \"none\"" \
		"sync-flush|.deleted = null" \
		"worker|.workers[0].frames_in.bogus = 1" \
		"model-validate|.rows[0].solver.bogus = 1" \
		"model-dimension-snapshots|.intervals[2].bogus = 1" \
		"model-dimension-snapshots|del(.intervals_used)" \
		"version|{version, schema}"; do
		file=${case%%|*} expr=${case#*|}
		jq -c "$expr" "$J/$file.out" >"$t"
		run -1 shape validate "$t"
		echo "$file | $expr: $output"
	done
	# Unchanged, the same documents pass.
	for file in status-dev status stats routes route-multipath route-flow \
		status-l2fwd status-none worker nat; do
		run -0 shape validate "$J/$file.out"
	done
}
