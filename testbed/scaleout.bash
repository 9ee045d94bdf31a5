# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# scaleout.bash - N xnf routers behind an edge that spreads flows over
# them by BGP and ECMP, watched by BFD (issue 15, part 3). The daemon is
# BIRD 2 (Debian's bird2): one process per router, one config file, a
# control socket and a pid file whose paths the command line sets
# (bird -c CONF -s SOCK -P PID), so every daemon lives in its namespace
# with its files under the test's temporary directory, bounded by
# `timeout` and stopped by its pid. (FRR needs several daemons per router
# under watchfrr, with a per-namespace path space, to do the same.)
#
#   [src] s0 --- e0 [edge] xK --- p0 [rK] p1 --- kK [sink]     K = 1..N
#
#   src   s0  192.0.2.1/24
#   edge  e0  192.0.2.254/24       bird: BGP AS 64500 to every rK, BFD,
#         xK  198.51.100.(4K-3)/30 ECMP route to 203.0.113.0/24 (merge
#                                  paths), L4 hash (fib_multipath_hash_policy 1)
#   rK    p0  198.51.100.(4K-2)/30 bird: BGP AS 64501 to the edge, BFD,
#         p1  198.51.100.(4K+125)/30  static 203.0.113.0/24 via the sink,
#                                  exported to the kernel and to the edge;
#                                  xnf on p0 and p1 (SO_MODE, below)
#   sink  kK  198.51.100.(4K+126)/30, the service address 203.0.113.1 on lo
#
# IPv6 the same way, with a BGP session of its own per router: s0 and e0
# 2001:db8:1::1 and ::fe/64, xK and p0 2001:db8:ffff:K::1 and ::2/64, p1
# and kK 2001:db8:fffe:K::1 and ::2/64, the service 2001:db8:5::/48 with
# 2001:db8:5::1 on the sink's lo. SO_FAMILY (4 or 6) picks the traffic's.
#
# SO_MODE says where each router's xnf finds its routes: sync (the
# default) runs l3fwd by xnf's own LPM, which `xnf route sync` in the
# router's namespace fills from the kernel's table that BIRD writes (the
# route sync, bounded by timeout and stopped by the test like the
# daemons); fib runs l3fwd in fib mode, asking the kernel's FIB per
# packet.
#
# The edge and the sink are Linux routers and hosts (no xnf). Neighbours
# are static, as in testbed.bash. The sink counts every datagram of the
# service per arrival device and source port in an nftables set
# (so_flows): which router carried each flow, and how many of its
# datagrams arrived.
#
# Builds on testbed.bash (tb_run, tb_bg, tb_until, tb_ns_new, tb_expect
# and tb_teardown, which kills the background processes, deletes the
# namespaces and removes the temporary directory).

# shellcheck source-path=SCRIPTDIR source=testbed.bash
. "$(dirname "${BASH_SOURCE[0]}")/testbed.bash"

GEN=${GEN:-$(dirname "$XNF")/xnf-gen}
SO_N=${SO_N:-2}
# Seconds a daemon may run before `timeout` ends it (a guard: teardown
# stops it long before).
SO_DAEMON_TIMEOUT=${SO_DAEMON_TIMEOUT:-600}
# BFD: transmit and receive interval (ms) and detection multiplier.
SO_BFD_MS=${SO_BFD_MS:-100}
SO_BFD_MULT=${SO_BFD_MULT:-3}
# sync or fib (the header).
SO_MODE=${SO_MODE:-sync}

SO_SRC4=192.0.2.1 SO_E04=192.0.2.254
SO_SRC6=2001:db8:1::1 SO_E06=2001:db8:1::fe
SO_SRC_NET4=192.0.2.0/24 SO_SRC_NET6=2001:db8:1::/64
SO_SVC_NET4=203.0.113.0/24 SO_SVC4=203.0.113.1
SO_SVC_NET6=2001:db8:5::/48 SO_SVC6=2001:db8:5::1
# The family of the traffic (4 or 6): routing is dual stack, with a BGP
# session per family, and so_paths, so_drain, so_send, ... look at and
# use this family's.
SO_FAMILY=${SO_FAMILY:-4}
SO_AS_EDGE=64500 SO_AS_XNF=64501
SO_SPORT=1024 SO_DPORT=9 SO_FENCE_PORT=10

# Set (to anything): every router runs conntrack,firewall,l3fwd with the
# classic stateful policy (so_ct_policy) instead of firewall,l3fwd,l2fwd
# with no rules.
SO_CT=${SO_CT:-}
SO_ID=${SO_ID:-}
SO_MOUNTS=() # bpffs this process mounted (one per router)
SO_SYNC_PIDS=() # per router, the timeout around its xnf route sync

so_ns() { echo "xnf-$SO_ID-$1"; }
so_edge_addr() { echo "198.51.100.$((4 * $1 - 3))"; }
so_up_addr() { echo "198.51.100.$((4 * $1 - 2))"; }
so_dn_addr() { echo "198.51.100.$((4 * $1 + 125))"; }
so_sink_addr() { echo "198.51.100.$((4 * $1 + 126))"; }
so_edge_addr6() { echo "2001:db8:ffff:$1::1"; }
so_up_addr6() { echo "2001:db8:ffff:$1::2"; }
so_dn_addr6() { echo "2001:db8:fffe:$1::1"; }
so_sink_addr6() { echo "2001:db8:fffe:$1::2"; }
# The service's prefix and address, and router K's address toward the
# edge, in SO_FAMILY.
so_svc_net() { if [ "$SO_FAMILY" = 6 ]; then echo $SO_SVC_NET6; else echo $SO_SVC_NET4; fi; }
so_src() { if [ "$SO_FAMILY" = 6 ]; then echo $SO_SRC6; else echo $SO_SRC4; fi; }
so_svc() { if [ "$SO_FAMILY" = 6 ]; then echo $SO_SVC6; else echo $SO_SVC4; fi; }
so_up_addr_f() { if [ "$SO_FAMILY" = 6 ]; then so_up_addr6 "$1"; else so_up_addr "$1"; fi; }
so_sink_addr_f() { if [ "$SO_FAMILY" = 6 ]; then so_sink_addr6 "$1"; else so_sink_addr "$1"; fi; }
# Locally administered MACs: 02:78:6e:5K:00:0P, fixed so that static
# neighbours can be written first.
so_mac() { printf '02:78:6e:5%x:00:%02x\n' "$1" "$2"; }
SO_MAC_S0=02:78:6e:50:00:01 SO_MAC_E0=02:78:6e:50:00:02

so_missing()
{
	local t
	t=$(tb_missing) && [ -n "$t" ] && { echo "$t"; return; }
	for t in bird birdc nft; do
		command -v "$t" >/dev/null 2>&1 || { echo "needs $t"; return; }
	done
	[ -x "$GEN" ] || { echo "needs $GEN (run make)"; return; }
	case $SO_MODE in
	sync | fib) ;;
	*) echo "SO_MODE is sync or fib, not '$SO_MODE'" ;;
	esac
}

# so_xnf K ARGS...: xnf in router K with its own pin root.
so_xnf()
{
	local k=$1
	shift
	timeout "$TB_TIMEOUT" ip netns exec "$(so_ns "r$k")" \
		env XNF_PIN_ROOT="$TB_TMP/bpffs-r$k/xnf" "$XNF" "$@"
}

# so_birdc NODE ARGS...: birdc on the control socket of NODE (edge, rK).
so_birdc()
{
	local node=$1
	shift
	timeout "$TB_TIMEOUT" birdc -s "$TB_TMP/$node.ctl" "$@"
}

# so_link NS A ADDR_A MAC_A NS_B B ADDR_B MAC_B PREFIXLEN ADDR6_A ADDR6_B:
# a veth pair born in its two namespaces, addressed (IPv6 /64, nodad),
# up, with static neighbours.
so_link()
{
	local na=$1 a=$2 aa=$3 ma=$4 nb=$5 b=$6 ab=$7 mb=$8 len=$9 \
		a6=${10} b6=${11}
	ip -n "$na" link add "$a" address "$ma" type veth \
		peer name "$b" address "$mb" netns "$nb" &&
	ip -n "$na" addr add "$aa/$len" dev "$a" &&
	ip -n "$nb" addr add "$ab/$len" dev "$b" &&
	ip -n "$na" addr add "$a6/64" dev "$a" nodad &&
	ip -n "$nb" addr add "$b6/64" dev "$b" nodad &&
	ip -n "$na" link set "$a" up &&
	ip -n "$nb" link set "$b" up &&
	ip -n "$na" neigh replace "$ab" lladdr "$mb" dev "$a" nud permanent &&
	ip -n "$nb" neigh replace "$aa" lladdr "$ma" dev "$b" nud permanent &&
	ip -n "$na" neigh replace "$b6" lladdr "$mb" dev "$a" nud permanent &&
	ip -n "$nb" neigh replace "$a6" lladdr "$ma" dev "$b" nud permanent
}

# ---- bird configurations ---------------------------------------------------

# BGP timers short enough that a session that comes back is up within
# seconds (bird's defaults wait up to minutes before reconnecting).
so_bgp_timers()
{
	cat <<-EOF
		hold time 3; keepalive time 1;
		connect delay time 1; connect retry time 1; error wait time 1, 2;
	EOF
}

# so_bgp_conf NAME LOCAL AS NEIGHBOUR AS FAMILY IMPORT EXPORT: a BGP
# session with BFD, for one family (ipv4 or ipv6) with its filters.
so_bgp_conf()
{
	cat <<-EOF
		protocol bgp $1 {
		  local $2 as $3;
		  neighbor $4 as $5;
		  $(so_bgp_timers)
		  bfd on;
		  $6 { import $7; export $8; };
		}
	EOF
}

so_bfd_conf()
{
	cat <<-EOF
		protocol bfd {
		  interface "$1" {
		    min rx interval $SO_BFD_MS ms; min tx interval $SO_BFD_MS ms;
		    multiplier $SO_BFD_MULT;
		  };
		}
	EOF
}

# so_edge_conf: BGP to every router; a route with the graceful shutdown
# community (RFC 8326, 65535:0) gets local preference 0, so that it loses
# to the others and leaves the multipath route while it is still
# announced; the kernel protocol merges the equal best routes into one
# multipath route.
so_edge_conf()
{
	local k
	cat <<-EOF
		router id $SO_E04;
		log "$TB_TMP/edge.log" all;
		debug protocols { states };
		protocol device { scan time 1; }
		protocol kernel {
		  ipv4 { import none; export where source = RTS_BGP; };
		  merge paths on;
		}
		protocol kernel {
		  ipv6 { import none; export where source = RTS_BGP; };
		  merge paths on;
		}
		filter from_xnf {
		  if (65535, 0) ~ bgp_community then bgp_local_pref = 0;
		  accept;
		}
	EOF
	so_bfd_conf 'x*'
	for ((k = 1; k <= SO_N; k++)); do
		so_bgp_conf "r$k" "$(so_edge_addr "$k")" $SO_AS_EDGE \
			"$(so_up_addr "$k")" $SO_AS_XNF ipv4 "filter from_xnf" none
		so_bgp_conf "r${k}v6" "$(so_edge_addr6 "$k")" $SO_AS_EDGE \
			"$(so_up_addr6 "$k")" $SO_AS_XNF ipv6 "filter from_xnf" none
	done
}

# so_router_conf K [drain]: the service prefix as a static route toward
# the sink, exported to the kernel (where the route sync, or fib mode,
# finds it) and to the edge; with drain, announced with the graceful
# shutdown community; the way back to the source's prefix (for the
# answers of TCP connections) via the edge, into the kernel only.
# SO_STATIC_EXTRA, when set, is more of the config
# (static protocols named follow*, which go into the kernel but not to
# the edge: scaleout.bats changes routes by them).
so_router_conf()
{
	local k=$1 drain=${2:-}
	cat <<-EOF
		router id $(so_up_addr "$k");
		log "$TB_TMP/r$k.log" all;
		protocol device { scan time 1; }
		protocol static { ipv4; route $SO_SVC_NET4 via $(so_sink_addr "$k"); }
		protocol static { ipv6; route $SO_SVC_NET6 via $(so_sink_addr6 "$k"); }
		protocol static back4 { ipv4; route $SO_SRC_NET4 via $(so_edge_addr "$k"); }
		protocol static back6 { ipv6; route $SO_SRC_NET6 via $(so_edge_addr6 "$k"); }
		${SO_STATIC_EXTRA:-}
		protocol kernel {
		  ipv4 { import none; export where source = RTS_STATIC; };
		}
		protocol kernel {
		  ipv6 { import none; export where source = RTS_STATIC; };
		}
		filter to_edge {
		  if source != RTS_STATIC || proto ~ "follow*" || proto ~ "back*" then reject;
		  ${drain:+bgp_community.add((65535, 0));}
		  accept;
		}
	EOF
	so_bfd_conf p0
	so_bgp_conf edge "$(so_up_addr "$k")" $SO_AS_XNF \
		"$(so_edge_addr "$k")" $SO_AS_EDGE ipv4 none "filter to_edge"
	so_bgp_conf edge6 "$(so_up_addr6 "$k")" $SO_AS_XNF \
		"$(so_edge_addr6 "$k")" $SO_AS_EDGE ipv6 none "filter to_edge"
}

# so_router_reconf K [drain]: router K's config written again (with
# SO_STATIC_EXTRA) and loaded by `birdc configure`.
so_router_reconf()
{
	local k=$1 out
	so_router_conf "$@" >"$TB_TMP/r$k.conf" &&
		bird -p -c "$TB_TMP/r$k.conf" ||
		{ echo "bird: r$k.conf does not parse" >&2; return 1; }
	out=$(so_birdc "r$k" configure) || return 1
	grep -q '^Reconfigured' <<<"$out" ||
		{ echo "birdc configure of r$k: $out" >&2; return 1; }
}

# so_bird_start NODE NS: bird in the foreground in NS with NODE's config,
# control socket and pid file under TB_TMP, bounded by timeout; returns
# once its control socket answers.
so_bird_start()
{
	local node=$1 ns=$2
	bird -p -c "$TB_TMP/$node.conf" ||
		{ echo "bird: $node.conf does not parse" >&2; return 1; }
	tb_bg "$ns" timeout "$SO_DAEMON_TIMEOUT" bird -f -c "$TB_TMP/$node.conf" \
		-s "$TB_TMP/$node.ctl" -P "$TB_TMP/$node.pid"
	tb_until "bird of $node to answer" so_birdc "$node" show status \
		>/dev/null 2>&1
}

# so_bird_stop_all: every bird of this test bed, by its pid file (the
# timeout processes around them are tb_teardown's).
so_bird_stop_all()
{
	local f pid
	for f in "$TB_TMP"/*.pid; do
		[ -e "$f" ] || continue
		pid=$(cat "$f") || continue
		kill "$pid" 2>/dev/null || true
	done
}

# ---- setup / teardown --------------------------------------------------------

so_setup()
{
	local i k id rk ns
	for i in 1 2 3 4 5; do
		id="$$-$RANDOM"
		[ -e "/run/netns/xnf-$id-edge" ] || break
	done
	SO_ID=$id
	TB_TMP=$(mktemp -d "/tmp/xnf-so.$id.XXXXXX") || return 1
	export SO_ID TB_TMP

	tb_ns_new "$(so_ns src)" && tb_ns_new "$(so_ns edge)" &&
		tb_ns_new "$(so_ns sink)" || return 1
	so_link "$(so_ns src)" s0 $SO_SRC4 $SO_MAC_S0 \
		"$(so_ns edge)" e0 $SO_E04 $SO_MAC_E0 24 $SO_SRC6 $SO_E06 || return 1
	ip -n "$(so_ns src)" route add default via $SO_E04 &&
		ip -n "$(so_ns src)" -6 route add default via $SO_E06 || return 1
	ip -n "$(so_ns sink)" addr add $SO_SVC4/32 dev lo &&
		ip -n "$(so_ns sink)" addr add $SO_SVC6/128 dev lo nodad || return 1

	for ((k = 1; k <= SO_N; k++)); do
		rk=$(so_ns "r$k")
		# so_fail sets its links down, which would remove their IPv6
		# addresses.
		tb_ns_new "$rk" && tb_run "$rk" sysctl -q -w \
			net.ipv6.conf.default.keep_addr_on_down=1 >/dev/null || return 1
		so_link "$(so_ns edge)" "x$k" "$(so_edge_addr "$k")" "$(so_mac "$k" 1)" \
			"$rk" p0 "$(so_up_addr "$k")" "$(so_mac "$k" 2)" 30 \
			"$(so_edge_addr6 "$k")" "$(so_up_addr6 "$k")" &&
		so_link "$rk" p1 "$(so_dn_addr "$k")" "$(so_mac "$k" 3)" \
			"$(so_ns sink)" "k$k" "$(so_sink_addr "$k")" "$(so_mac "$k" 4)" 30 \
			"$(so_dn_addr6 "$k")" "$(so_sink_addr6 "$k")" || return 1
		tb_run "$rk" sysctl -q -w net.ipv4.ip_forward=1 \
			net.ipv6.conf.all.forwarding=1 >/dev/null || return 1
		# A frame xnf redirects into p1 reaches the sink in NAPI,
		# which a veth runs only with XDP or GRO on (testbed.bash);
		# the same toward the edge (a route via the edge: the sync
		# passes a route into a veth without it to the kernel).
		tb_run "$(so_ns sink)" ethtool -K "k$k" gro on >/dev/null &&
			tb_run "$(so_ns edge)" ethtool -K "x$k" gro on >/dev/null || return 1
		mkdir -m 0700 "$TB_TMP/bpffs-r$k" &&
			mount -t bpf -o mode=0700 bpf "$TB_TMP/bpffs-r$k" || return 1
		SO_MOUNTS+=("$TB_TMP/bpffs-r$k")
	done

	ns=$(so_ns edge)
	# The generator's frames come to e0 as XDP redirects (GRO on for
	# NAPI) with complete checksums (tx off on s0).
	tb_run "$ns" ethtool -K e0 gro on >/dev/null &&
	tb_run "$(so_ns src)" ethtool -K s0 tx off >/dev/null || return 1
	# Forward, and hash flows over the next hops by their L4 ports.
	tb_run "$ns" sysctl -q -w net.ipv4.ip_forward=1 \
		net.ipv4.fib_multipath_hash_policy=1 net.ipv6.conf.all.forwarding=1 \
		net.ipv6.fib_multipath_hash_policy=1 >/dev/null || return 1

	so_sink_counter || return 1
	tb_log "scale-out test bed $SO_ID: $SO_N routers, files in $TB_TMP"
}

# so_up: bird everywhere, xnf on every router's ports, and the sessions
# established; returns once the edge has all N paths.
so_up()
{
	local k
	so_edge_conf >"$TB_TMP/edge.conf" || return 1
	so_bird_start edge "$(so_ns edge)" || return 1
	for ((k = 1; k <= SO_N; k++)); do
		so_router_up "$k" || return 1
	done
	SO_FAMILY=4 so_wait_paths "$SO_N" && SO_FAMILY=6 so_wait_paths "$SO_N"
}

# so_router_up K: router K's bird and its xnf on p0 and p1: in sync
# mode l3fwd by xnf's own LPM and the route sync, which has mirrored the
# service routes on return; in fib mode l3fwd with fib.
so_router_up()
{
	local k=$1 fib=
	so_router_conf "$k" >"$TB_TMP/r$k.conf" &&
	so_bird_start "r$k" "$(so_ns "r$k")" || return 1
	SO_FAMILY=4 tb_until "bird of r$k to install $SO_SVC_NET4" so_router_has_route "$k" &&
		SO_FAMILY=6 tb_until "bird of r$k to install $SO_SVC_NET6" \
			so_router_has_route "$k" || return 1
	[ "$SO_MODE" = sync ] || fib=fib
	# TCP's senders into router K (the edge's xK, the sink's kK) send
	# with checksums complete (tx off): xnf redirects what they send,
	# and a redirect never completes a checksum left to the hardware.
	if [ -n "$SO_CT" ]; then
		tb_run "$(so_ns sink)" ethtool -K "k$k" tx off >/dev/null &&
			tb_run "$(so_ns edge)" ethtool -K "x$k" tx off >/dev/null || return 1
	fi
	so_xnf "$k" attach p0 chain "$(so_chain)" $fib &&
		so_xnf "$k" attach p1 chain "$(so_chain)" $fib || return 1
	[ -z "$SO_CT" ] || so_ct_policy "$k" || return 1
	[ "$SO_MODE" = sync ] || return 0
	so_sync_start "$k" && so_wait_synced "$k"
}

# so_sync_start K: `xnf -j route sync` in router K's namespace with its
# pin root, in the background under timeout (-k: a sync that ignores
# SIGTERM is killed), its events in $TB_TMP/sync-rK.out; returns once it
# has started.
so_sync_start()
{
	local k=$1 out=$TB_TMP/sync-r$1.out
	: >"$out"
	tb_bg "$(so_ns "r$k")" env XNF_PIN_ROOT="$TB_TMP/bpffs-r$k/xnf" \
		timeout -k 10 "$SO_DAEMON_TIMEOUT" "$XNF" -j route sync >"$out" 2>&1
	SO_SYNC_PIDS[k]=$TB_BG_PID
	tb_until "the route sync of r$k to start" so_sync_event "$k" started ||
		{ cat "$out" >&2; return 1; }
}

# so_sync_event K NAME [JQ]: router K's sync printed an event NAME (for
# which JQ holds).
so_sync_event()
{
	jq -e --arg e "$2" "select(.event == \$e) | ${3:-true}" \
		"$TB_TMP/sync-r$1.out" 2>/dev/null | grep -qx true
}

# so_sync_running K: router K's sync has not ended.
so_sync_running()
{
	[ -n "${SO_SYNC_PIDS[$1]:-}" ] && kill -0 "${SO_SYNC_PIDS[$1]}" 2>/dev/null
}

# so_sync_stop_all: SIGTERM to every router's sync (timeout passes it
# on), waited for.
so_sync_stop_all()
{
	local k
	for k in "${!SO_SYNC_PIDS[@]}"; do
		kill -TERM "${SO_SYNC_PIDS[k]}" 2>/dev/null || true
		wait "${SO_SYNC_PIDS[k]}" 2>/dev/null || true
	done
	SO_SYNC_PIDS=()
}

# so_route_get K ADDR: router K's `xnf -j route get ADDR` (the route its
# l3fwd takes for ADDR), one JSON object.
so_route_get()
{
	so_xnf "$1" -j route get "$2" | jq -ec .
}

# so_synced K: for both families, router K's xnf forwards the service by
# the route the sync mirrored from BIRD's: unicast via the sink, its
# neighbour known.
so_synced()
{
	local f
	for f in 4 6; do
		SO_FAMILY=$f so_route_get "$1" "$(SO_FAMILY=$f so_svc)" 2>/dev/null |
			jq -e --arg n "$(SO_FAMILY=$f so_svc_net)" \
				--arg v "$(SO_FAMILY=$f so_sink_addr_f "$1")" \
				'.dst == $n and .origin == "sync" and .type == "unicast" and .via == $v and .dev == "p1" and .neighbour' \
				>/dev/null || return 1
	done
}

so_wait_synced()
{
	tb_until "the sync of r$1 to mirror the service routes" so_synced "$1"
}

# so_kfwd K: datagrams router K's kernel forwarded so far, "IPv4 IPv6"
# (testbed.bash, tb_kfwd): unchanged while xnf forwards everything.
so_kfwd()
{
	local TB_DUT
	TB_DUT=$(so_ns "r$1")
	tb_kfwd
}

so_router_has_route()
{
	ip -n "$(so_ns "r$1")" -"$SO_FAMILY" route show "$(so_svc_net)" proto bird | grep -q .
}

so_teardown()
{
	local k m dir
	so_sync_stop_all
	so_bird_stop_all
	# What a failed step left running in the test bed's namespaces (a
	# generator in the background).
	if [ -n "$SO_ID" ]; then
		for m in $(ip netns list | awk -v p="xnf-$SO_ID-" 'index($1, p) == 1 { print $1 }'); do
			for dir in $(ip netns pids "$m" 2>/dev/null); do
				kill "$dir" 2>/dev/null || true
			done
		done
	fi
	for ((k = 1; k <= SO_N; k++)); do
		dir="$TB_TMP/bpffs-r$k/xnf/dev"
		[ -d "$dir" ] && [ -e "/run/netns/$(so_ns "r$k")" ] || continue
		for m in "$dir"/*; do
			[ -e "$m" ] || continue
			so_xnf "$k" detach "${m##*/}" ||
				echo "teardown: xnf detach ${m##*/} in r$k failed" >&2
		done
		so_xnf "$k" destroy || echo "teardown: xnf destroy in r$k failed" >&2
	done
	for m in "${SO_MOUNTS[@]}"; do
		umount "$m" || echo "teardown: cannot unmount $m" >&2
	done
	SO_MOUNTS=()
	for m in "$TB_TMP"/bpffs-r*; do
		if mountpoint -q "$m" 2>/dev/null; then
			echo "teardown: $m still mounted, $TB_TMP kept" >&2
			TB_TMP=
			break
		fi
	done
	tb_teardown
}

# ---- the edge's view -----------------------------------------------------------

# so_paths: how many next hops the edge's kernel route to the service has.
so_paths()
{
	local j
	j=$(ip -n "$(so_ns edge)" -"$SO_FAMILY" -j route show "$(so_svc_net)") || return 1
	jq -r '.[0] | if . == null then 0 elif .nexthops then (.nexthops | length) else 1 end' <<<"$j"
}

so_has_paths() { [ "$(so_paths)" -eq "$1" ]; }

# so_wait_paths N: until the edge's route to the service has N next hops.
so_wait_paths()
{
	tb_until "the edge's route to $(so_svc_net) to have $1 next hops" \
		so_has_paths "$1"
}

# so_path_via K: 0 when the edge's route goes through router K.
so_path_via()
{
	ip -n "$(so_ns edge)" -"$SO_FAMILY" route show "$(so_svc_net)" |
		grep -q "via $(so_up_addr_f "$1") "
}

# ---- drain, fail, restore ---------------------------------------------------------

# so_drain K: the drain procedure. Router K announces the service with the
# graceful shutdown community (its config, reloaded with `birdc
# configure`); the edge gives that route local preference 0, so it leaves
# the multipath route while it still exists (and would carry traffic were
# it the last one); the packets in flight through K are still forwarded.
# Then K's session can be shut down, or K maintained, without loss.
so_drain()
{
	local k=$1
	so_router_reconf "$k" drain &&
		tb_until "r$k to leave the edge's route" eval '! so_path_via '"$k"
}

# so_session_down K / so_session_up K: router K's BGP session to the edge
# shut down (`birdc disable`, the step of the drain procedure that may
# follow once K left the edge's route) and brought back; up returns once
# the session is established again.
so_session_down() { so_birdc "r$1" disable '"edge*"' >/dev/null; }

so_session_up()
{
	so_birdc "r$1" enable '"edge*"' >/dev/null &&
		tb_until "r$1's BGP session to be established" so_established "$1"
}

so_established()
{
	[ "$(so_birdc "r$1" show protocols '"edge*"' | grep -c Established)" -eq 2 ]
}

# so_edge_learned K: the edge's BIRD has router K's route to the service
# (best or not).
so_edge_learned()
{
	so_birdc edge show route "$(so_svc_net)" | grep -q "$(so_up_addr_f "$1")"
}

# so_undrain K: announces without the community again.
so_undrain()
{
	local k=$1
	so_router_reconf "$k" &&
		tb_until "r$k back in the edge's route" so_path_via "$k"
}

# so_fail K: router K fails hard: its links go down (and with them the
# carrier of the edge's and the sink's ends).
so_fail()
{
	ip -n "$(so_ns "r$1")" link set p0 down &&
		ip -n "$(so_ns "r$1")" link set p1 down
}

# so_restore K: router K's links come back up. A link set down loses its
# neighbours, static ones too (its IPv6 addresses are kept: so_setup sets
# keep_addr_on_down), so they are written again. Returns once the edge
# routes through K again and, in sync mode, K's xnf has its routes back.
so_restore()
{
	local ns
	ns=$(so_ns "r$1")
	ip -n "$ns" link set p1 up && ip -n "$ns" link set p0 up &&
	ip -n "$ns" neigh replace "$(so_edge_addr "$1")" lladdr "$(so_mac "$1" 1)" dev p0 nud permanent &&
	ip -n "$ns" neigh replace "$(so_edge_addr6 "$1")" lladdr "$(so_mac "$1" 1)" dev p0 nud permanent &&
	ip -n "$ns" neigh replace "$(so_sink_addr "$1")" lladdr "$(so_mac "$1" 4)" dev p1 nud permanent &&
	ip -n "$ns" neigh replace "$(so_sink_addr6 "$1")" lladdr "$(so_mac "$1" 4)" dev p1 nud permanent &&
	tb_until "r$1 back in the edge's route" so_path_via "$1" || return 1
	# BIRD put the service routes back into the kernel (the kernel
	# removed them with the links): the sync has them again.
	[ "$SO_MODE" != sync ] || so_wait_synced "$1"
}

# so_stall K: router K fails silently: its links stay up (the edge sees
# no carrier change) but it forwards and answers nothing. Its xnf drops
# every frame: the service's datagrams by a rule of their own, whose
# hit counter counts the frames lost in it exactly (so_stall_lost), all
# else (BFD, BGP) by the default policy: the rules filter what is
# addressed to the router too (fw_input rules; by default it goes to the
# kernel before them). Only BFD (or, seconds later, the BGP hold timer)
# can tell the edge.
so_stall()
{
	so_xnf "$1" config set fw_input rules &&
		so_xnf "$1" fw add prio 10 drop proto udp dport $SO_DPORT &&
		so_xnf "$1" fw default drop
}

so_stall_lost()
{
	so_xnf "$1" -j fw show | jq -e '[.rules[] | select(.prio == 10) | .packets] | add // 0'
}

so_unstall()
{
	so_xnf "$1" fw default allow && so_xnf "$1" fw flush &&
		so_xnf "$1" config set fw_input kernel &&
		tb_until "r$1 back in the edge's route" so_path_via "$1"
}

# so_bfd_state K: the edge's BFD session with router K (Up, Down, ...).
so_bfd_state()
{
	so_birdc edge show bfd sessions |
		awk -v a="$(so_up_addr_f "$1")" '$1 == a { print $3 }'
}

# ---- traffic and its accounting ---------------------------------------------------

# so_sink_counter: in the sink, every datagram to the service's port is
# counted per (arrival device, source port), every one to the fence port
# per arrival device, then dropped (nothing to answer, no ICMP back).
so_sink_counter()
{
	tb_run "$(so_ns sink)" nft -f - <<-EOF
		table inet so {
		  set fences {
		    type ifname; flags dynamic; counter;
		  }
		  set flows {
		    type ifname . inet_service; flags dynamic; size 65536; counter;
		  }
		  chain pre {
		    type filter hook prerouting priority raw; policy accept;
		    ip daddr $SO_SVC4 udp dport $SO_DPORT add @flows { iifname . udp sport } drop
		    ip6 daddr $SO_SVC6 udp dport $SO_DPORT add @flows { iifname . udp sport } drop
		    ip daddr $SO_SVC4 udp dport $SO_FENCE_PORT add @fences { iifname } drop
		    ip6 daddr $SO_SVC6 udp dport $SO_FENCE_PORT add @fences { iifname } drop
		  }
		}
	EOF
}

so_sink_reset() { tb_run "$(so_ns sink)" nft flush set inet so flows; }

# so_flows: "DEV SPORT PACKETS" per element of the sink's set.
so_flows()
{
	tb_run "$(so_ns sink)" nft -j list set inet so flows |
		jq -r '.nftables[] | select(.set) | .set.elem[]? | .elem |
			"\(.val.concat[0]) \(.val.concat[1]) \(.counter.packets)"'
}

# so_received: datagrams the sink counted, all flows.
so_received()
{
	so_flows | awk '{ n += $3 } END { print n + 0 }'
}

# so_send COUNT FLOWS RATE: xnf-gen from the source to the service,
# COUNT frames round robin over FLOWS flows (source ports SO_SPORT..),
# paced at RATE; prints the frames sent.
so_send()
{
	local out
	out=$(tb_run "$(so_ns src)" "$GEN" s0 count "$1" flows "$2" rate "$3" \
		ipv$SO_FAMILY size 128 src "$(so_src)" dst "$(so_svc)" dmac $SO_MAC_E0 sport $SO_SPORT dport $SO_DPORT -j) ||
		return 1
	jq -e '.sent' <<<"$out"
}

# so_send_bg COUNT FLOWS RATE FILE: so_send in the background, its JSON
# into FILE; sets SO_GEN_PID.
so_send_bg()
{
	tb_bg "$(so_ns src)" timeout "$TB_TIMEOUT" "$GEN" s0 count "$1" flows "$2" \
		rate "$3" ipv$SO_FAMILY size 128 src "$(so_src)" dst "$(so_svc)" dmac $SO_MAC_E0 sport $SO_SPORT \
		dport $SO_DPORT -j >"$4"
	SO_GEN_PID=$TB_BG_PID
}

# so_fence K...: SO_FLOWS datagrams to the fence port (other flows than
# the data's, so the edge spreads them over every path it has); returns
# once each of routers K brought at least one more to the sink. Frames
# sent earlier on the same path have arrived by then (each hop keeps the
# order of one path), so what has not arrived then went through a path
# that failed: the count is final without waiting for a time.
so_fence()
{
	local k before=()
	for k in "$@"; do
		before[k]=$(so_fence_count "$k") || return 1
	done
	tb_run "$(so_ns src)" "$GEN" s0 count "$SO_FLOWS" flows "$SO_FLOWS" \
		ipv$SO_FAMILY size 128 src "$(so_src)" dst "$(so_svc)" dmac $SO_MAC_E0 sport $SO_SPORT \
		dport $SO_FENCE_PORT >/dev/null 2>&1 || return 1
	for k in "$@"; do
		tb_until "a fence datagram through router $k" \
			so_fence_past "$k" "${before[k]}" || return 1
	done
}

# so_fence_count K: fence datagrams that came through router K.
so_fence_count()
{
	tb_run "$(so_ns sink)" nft -j list set inet so fences |
		jq -e --arg d "k$1" '[.nftables[] | select(.set) | .set.elem[]? |
			.elem | select(.val == $d) | .counter.packets] | add // 0'
}

so_fence_past() { [ "$(so_fence_count "$1")" -gt "$2" ]; }

# so_ring_drops [K...]: frames the veth rings of the source's and of
# routers K's links (default: all) dropped because a receiver was behind
# (testbed.bash, tb_link): s0, the edge's xK and the routers' p1, whose
# peers received what went through. A link that went down counts what it
# could not send, the daemons' packets too: leave its router out.
so_ring_drops()
{
	local k n=0 d routers=("$@")
	[ $# -gt 0 ] || mapfile -t routers < <(seq 1 "$SO_N")
	d=$(tb_link "$(so_ns src)" s0 tx.dropped) || return 1
	n=$((n + d))
	for k in "${routers[@]}"; do
		d=$(tb_link "$(so_ns edge)" "x$k" tx.dropped) || return 1
		n=$((n + d))
		d=$(tb_link "$(so_ns "r$k")" p1 tx.dropped) || return 1
		n=$((n + d))
	done
	echo "$n"
}

so_has_received() { [ "$(so_received)" -ge "$1" ]; }

# so_wait_received N: until the sink counted N datagrams (those in flight
# when the generator returned).
so_wait_received()
{
	tb_until "$1 datagrams at the sink" so_has_received "$1"
}

# so_split: flows that arrived through more than one router (source
# ports seen on more than one sink device), one per line.
so_split()
{
	so_flows | awk '!(($2, $1) in seen) { seen[$2, $1] = 1; devs[$2]++ }
		END { for (p in devs) if (devs[p] > 1) print p }'
}

# so_flow_map: "SPORT K" per flow the sink saw arrive through router K
# only (the flows of a phase without moves).
so_flow_map()
{
	so_flows | awk '{ sub(/^k/, "", $1); print $2, $1 }' | sort -n
}

# so_received_from MAP K: datagrams of the flows MAP assigns to router K,
# wherever they arrived now.
so_received_from()
{
	so_flows | awk -v k="$2" 'NR == FNR { if ($2 == k) mine[$1] = 1; next }
		($2 in mine) { n += $3 } END { print n + 0 }' "$1" -
}

# so_moved_from MAP K: flows MAP assigns to router K that arrived now
# through another router.
so_moved_from()
{
	so_flows | awk -v k="$2" 'NR == FNR { if ($2 == k) mine[$1] = 1; next }
		($2 in mine) && $1 != "k" k { moved[$2] = 1 }
		END { n = 0; for (p in moved) n++; print n }' "$1" -
}

# so_flows_via K: flows router K carried (distinct source ports at kK).
so_flows_via()
{
	so_flows | awk -v d="k$1" '$1 == d { n++ } END { print n + 0 }'
}

# so_xnf_forwarded K: frames router K's xnf forwarded from p0 (to p1).
so_xnf_forwarded()
{
	so_xnf "$1" -j stats p0 |
		jq -e '.devices[0].nfs[] | select(.nf == "chain") | .redirect'
}

# ---- phases: traffic while a router leaves -------------------------------------
#
# so_phase KIND K: FLOWS x SO_BG_PER_FLOW frames at SO_RATE from the
# source in the background; once 1000 arrived, router K leaves by KIND:
#   drain     so_drain (announced with the graceful shutdown community)
#   stall     so_stall (silent: only BFD can tell)
#   linkdown  so_fail (its links go down)
# and the edge's route loses it. Every frame is then accounted for:
#   SO_SENT   frames sent
#   SO_RECV   datagrams the sink counted
#   SO_RING   frames dropped on the rings of the other routers' paths
#             (and of K's, for a drain)
#   SO_LOST   frames lost because K left: drain and linkdown, what did not
#             arrive beyond the ring drops; stall, the hits of K's drop rule
#             (counted where they were lost)
#   SO_LOST_OTHER  frames of flows that went through another router before
#             and did not arrive (linkdown; the others are exact: 0 unless
#             SO_LOST is off)
#   SO_MOVED  flows of K that arrived through another router
#   SO_KEPT_MOVED  flows of other routers that arrived through another one
#   SO_K_FLOWS  flows K carried before
# The sink's set is reset first; the map of which router carried which
# flow (so_flow_map) is taken by a first round of traffic.
SO_FLOWS=${SO_FLOWS:-64}
SO_RATE=${SO_RATE:-1000}
SO_BG_PER_FLOW=${SO_BG_PER_FLOW:-100}

so_phase()
{
	local kind=$1 k=$2 map=$TB_TMP/map others=() ring=() j drops0 out per
	for ((j = 1; j <= SO_N; j++)); do
		((j == k)) || others+=("$j")
	done
	# A drained router's links stay up and carry its frames till the end.
	ring=("${others[@]}")
	[ "$kind" != drain ] || ring+=("$k")
	drops0=$(so_ring_drops) && so_sink_reset || return 1
	SO_SENT=$(so_send $((SO_FLOWS * 10)) "$SO_FLOWS" "$SO_RATE") || return 1
	tb_until "the flows of the first round at the sink" eval \
		'[ $(($(so_received) + $(so_ring_drops) - drops0)) -ge "$SO_SENT" ]' ||
		return 1
	so_flow_map >"$map"
	SO_K_FLOWS=$(awk -v k="$k" '$2 == k' "$map" | wc -l)
	so_sink_reset || return 1

	drops0=$(so_ring_drops "${ring[@]}") || return 1
	out=$TB_TMP/gen.json
	so_send_bg $((SO_FLOWS * SO_BG_PER_FLOW)) "$SO_FLOWS" "$SO_RATE" "$out"
	so_wait_received 1000 || return 1
	so_event "$kind" "$k" leave && so_wait_paths $((SO_N - 1)) || return 1
	wait "$SO_GEN_PID"
	SO_SENT=$(jq -e .sent "$out") || return 1
	# What has not arrived once the fence did, through a router that
	# stayed, was lost on the way (so_fence). A drained router still
	# forwards: wait for its frames too.
	if [ "$kind" = drain ]; then
		tb_until "every frame of the drain accounted for" eval \
			'[ $(($(so_received) + $(so_ring_drops) - drops0)) -ge "$SO_SENT" ]' ||
			{ so_where_lost >&2; return 1; }
	fi
	so_fence "${others[@]}" || return 1
	SO_RECV=$(so_received)
	SO_RING=$(($(so_ring_drops "${ring[@]}") - drops0))
	if [ "$kind" = stall ]; then
		SO_LOST=$(so_stall_lost "$k")
	else
		SO_LOST=$((SO_SENT - SO_RECV - SO_RING))
	fi
	per=$((SO_SENT / SO_FLOWS))
	SO_LOST_OTHER=0
	for j in "${others[@]}"; do
		SO_LOST_OTHER=$((SO_LOST_OTHER + $(awk -v k="$j" '$2 == k' "$map" | wc -l) * per - $(so_received_from "$map" "$j")))
	done
	SO_MOVED=$(so_moved_from "$map" "$k")
	SO_KEPT_MOVED=0
	for j in "${others[@]}"; do
		SO_KEPT_MOVED=$((SO_KEPT_MOVED + $(so_moved_from "$map" "$j")))
	done
}

# so_return KIND K: router K comes back after so_phase KIND K; returns
# once the edge's route has all N next hops again.
so_return()
{
	so_event "$1" "$2" return && so_wait_paths "$SO_N"
}

# so_event KIND K leave|return: router K leaves or comes back by KIND
# (so_phase); after a failure or a return from one, until the edge's BFD
# session with K agrees (BIRD lists a session that went down as Down, or
# not at all once BGP gave it up).
so_event()
{
	local kind=$1 k=$2 dir=$3 want
	case $kind/$dir in
	drain/leave) so_drain "$k" ;;
	drain/return) so_undrain "$k" ;;
	stall/leave) so_stall "$k" ;;
	stall/return) so_unstall "$k" ;;
	linkdown/leave) so_fail "$k" ;;
	linkdown/return) so_restore "$k" ;;
	*) echo "so_event: no event $kind/$dir" >&2; return 1 ;;
	esac || return 1
	[ "$kind" != drain ] || return 0
	if [ "$dir" = leave ]; then want='!= Up'; else want='= Up'; fi
	tb_until "the edge's BFD session with router $k to be $want" \
		eval '[ "$(so_bfd_state '"$k"')" '"$want"' ]'
}

# so_edge_states: the state changes of the edge's protocols (BGP
# sessions, BFD), from its log: a session that went down when the test
# did not take it down is the machine's load (BFD's 300 ms, or BGP's
# hold time, missed).
so_edge_states()
{
	grep -i 'state' "$TB_TMP/edge.log" 2>/dev/null | tail -n "${1:-40}"
}

# so_unasked_downs: how often the edge's BGP sessions with routers
# 2..SO_N went down (scaleout.bats acts on router 1 only, so these went
# down unasked).
so_unasked_downs()
{
	grep -cE ' r([2-9]|[1-9][0-9]+)(v6)?: State changed to down' \
		"$TB_TMP/edge.log" 2>/dev/null || true
}

# so_where_lost: where frames may have gone, for a failure's message: the
# sink's count, the ring drops, the edge's kernel's discards for want of
# a route, and per router its xnf's drops and its kernel's forwards.
so_where_lost()
{
	local k
	echo "sent ${SO_SENT:-?}, received $(so_received), ring drops $(so_ring_drops)"
	echo "edge: no route IPv4 $(ip netns exec "$(so_ns edge)" awk '$1 == "Ip:" && $2 != "Forwarding" { print $13 }' /proc/net/snmp)," \
		"IPv6 $(ip netns exec "$(so_ns edge)" awk '$1 == "Ip6OutNoRoutes" { print $2 }' /proc/net/snmp6)"
	for ((k = 1; k <= SO_N; k++)); do
		echo "router $k: kernel forwarded (IPv4 IPv6) $(so_kfwd "$k"), xnf p0:" \
			"$(so_xnf "$k" -j stats p0 | jq -c '.devices[0].nfs[] | select(.nf == "chain") | del(.percpu)')"
	done
	so_edge_states 20
}

# so_outage_ms K: how long router K's share of the traffic was lost, from
# SO_LOST (frames) and the rate of K's flows.
so_outage_ms()
{
	((SO_K_FLOWS > 0)) || { echo 0; return; }
	echo $((SO_LOST * 1000 * SO_FLOWS / (SO_RATE * SO_K_FLOWS)))
}

# ---- stateful routers (SO_CT) ------------------------------------------------------
#
# Inside is the source's side (p0, toward the edge: the LAN), outside the
# sink's (p1: the WAN, where the service is). TCP connections from the
# source to the sink need a way back that follows the way in: the sink
# answers through the router whose link the connection's latest packet
# came in by (so_ct_return), as a stateful firewall on each router needs
# (a reply that takes another router than its connection is, for Linux
# and for xnf alike, a packet of a connection that router never saw).

so_chain()
{
	if [ -n "$SO_CT" ]; then
		echo conntrack,firewall,l3fwd
	else
		echo firewall,l3fwd,l2fwd
	fi
}

# so_ct_policy K: router K's firewall gets the classic stateful policy
# (docs/xnf.8, firewall.md): what belongs to a known connection passes,
# the invalid is dropped, the inside may open anything, the outside only
# SSH. The router's own BGP and BFD packets go to its kernel before the
# rules (fw_input kernel, the default).
so_ct_policy()
{
	so_xnf "$1" fw add prio 10 allow ct state established,related &&
		so_xnf "$1" fw add prio 20 drop ct state invalid &&
		so_xnf "$1" fw add prio 30 allow iif p0 &&
		so_xnf "$1" fw add prio 40 allow iif p1 proto tcp dport 22 ct state new &&
		so_xnf "$1" fw default drop
}

# so_ct_return PORT: the sink answers TCP port PORT's connections through
# the router the connection's latest packet came in by: prerouting puts
# the arrival link's router (K of kK) into the connection's mark, output
# copies it into the packet's mark (a route chain, which routes the packet
# again), and the mark picks a routing table whose route to the source's
# prefix goes through that router. The main table's route, via router 1,
# is what a SYN-ACK is routed by before output's chain routes it again.
so_ct_return()
{
	local port=$1 sink k map=""
	sink=$(so_ns sink)
	for ((k = 1; k <= SO_N; k++)); do
		map+="${map:+, }\"k$k\" : $k"
		ip -n "$sink" rule add fwmark "$k" table $((100 + k)) &&
			ip -n "$sink" -6 rule add fwmark "$k" table $((100 + k)) &&
			ip -n "$sink" route add $SO_SRC_NET4 via "$(so_dn_addr "$k")" \
				dev "k$k" table $((100 + k)) &&
			ip -n "$sink" -6 route add $SO_SRC_NET6 via "$(so_dn_addr6 "$k")" \
				dev "k$k" table $((100 + k)) || return 1
	done
	ip -n "$sink" route add $SO_SRC_NET4 via "$(so_dn_addr 1)" dev k1 &&
		ip -n "$sink" -6 route add $SO_SRC_NET6 via "$(so_dn_addr6 1)" dev k1 || return 1
	tb_run "$sink" nft -f - <<-EOF
		table inet soct {
		  chain pre {
		    type filter hook prerouting priority mangle; policy accept;
		    tcp dport $port ct mark set iifname map { $map }
		  }
		  chain out {
		    type route hook output priority mangle; policy accept;
		    tcp sport $port meta mark set ct mark
		  }
		}
	EOF
}

# so_back_synced K: router K's xnf routes the source's address back via
# the edge (BIRD's static route back, through the sync in sync mode).
so_back_synced()
{
	local v
	if [ "$SO_MODE" != sync ]; then
		return 0
	fi
	v=$(if [ "$SO_FAMILY" = 6 ]; then so_edge_addr6 "$1"; else so_edge_addr "$1"; fi)
	so_route_get "$1" "$(so_src)" 2>/dev/null |
		jq -e --arg v "$v" '.via == $v and .dev == "p0" and .neighbour' >/dev/null
}

# so_ct_conns K PORT: router K's connection table entries of TCP
# connections from the source to the service's PORT, one JSON array
# (xnf ct show -j: state, orig and reply with packets and bytes).
so_ct_conns()
{
	so_xnf "$1" -j ct show proto tcp dport "$2" |
		jq -ec --arg s "$(so_src)" '[.entries[] | select(.orig.src == $s)]'
}

# so_fw_hits K PRIO: packets router K's firewall rule PRIO matched.
so_fw_hits()
{
	so_xnf "$1" -j fw show | jq -e --argjson p "$2" '.rules[] | select(.prio == $p) | .packets'
}
