# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# bench.bash - the test beds of the benchmark harness (tools/bench/*.py,
# which builds them through testbed/tb and testbed/testbed.py). Each is
# tb_base's (testbed.bash: namespaces $TB_NAME-<owner>-<tag>-{src,dut,sink},
# a private bpffs, tb_teardown) with its own devices:
#
#   bench    tb_setup's source -> DUT -> sink, devices named apart
#            (s<tag> -- i<tag> [dut] e<tag> -- k<tag>), GRO on the DUT's
#            ports too (tools/bench/bench.py)
#   soak     three such paths through one DUT (tools/bench/soak.py)
#   rtsync   N ports of the DUT whose peers nothing listens on
#            (tools/bench/rtsync.py)
#
# testbed/tb up prints each as one JSON object: tb_json (bench, as the
# traffic bed), tb_json_soak, tb_json_rtsync.

# shellcheck source-path=SCRIPTDIR source=testbed.bash
. "$(dirname "${BASH_SOURCE[0]}")/testbed.bash"

# ---- bench: the throughput and latency bed ---------------------------------

# tb_bench_setup: tb_setup's test bed with the devices named after its tag,
# so that the napi threads of its ports (napi/i<tag>-<id>) can be told
# apart from those of other test beds running at the same time. GRO is on
# on the DUT's ports as well: the kernel dataplanes measured there (no XDP
# on the DUT) get NAPI too, which threaded NAPI can move to the DUT's CPU.
tb_bench_setup()
{
	tb_base || return 1
	TB_S0=s$TB_TAG TB_D0=i$TB_TAG TB_D1=e$TB_TAG TB_K0=k$TB_TAG
	tb_veths &&
	tb_dut ethtool -K "$TB_D0" gro on >/dev/null &&
	tb_dut ethtool -K "$TB_D1" gro on >/dev/null
}

# ---- soak: three paths through one DUT ---------------------------------------
#
# One source -> DUT -> sink path per flow set, so that each generator has a
# sink of its own and every flow set is counted exactly by sequence number:
#
#   [src] g<p><tag> --veth-- i<p><tag> [dut] e<p><tag> --veth-- k<p><tag> [sink]
#
#   p = s  stable flows through the XDP chain   192.0.2.1   -> 198.51.100.1
#       c  churn flows through the XDP chain    192.0.2.65  -> 203.0.113.1
#       w  stable flows through the AF_XDP worker (chain firewall,xsk)
#                                               192.0.2.129 -> 198.51.100.129
#
# Documentation ranges only; IPv6 is off in all three namespaces, so the
# kernel sends nothing of its own (no RS, MLD or DAD) and every frame on
# the wires is a generator's.

# path, source, DUT ingress, DUT egress, sink addresses (/26 and /25 nets)
TB_SOAK_PATHS=(
	"s 192.0.2.1   192.0.2.62/26  198.51.100.126/25 198.51.100.1/25"
	"c 192.0.2.65  192.0.2.126/26 203.0.113.254/24  203.0.113.1/24"
	"w 192.0.2.129 192.0.2.190/26 198.51.100.254/25 198.51.100.129/25"
)

# tb_soak_mac PATH END: 02:78:6e:5X:00:0Y, X the path (1 s, 2 c, 3 w), Y
# the end (1 g, 2 i, 3 e, 4 k).
tb_soak_mac()
{
	local p=scw e=giek
	p=${p%%"$1"*} e=${e%%"$2"*}
	printf '02:78:6e:5%d:00:0%d\n' $((${#p} + 1)) $((${#e} + 1))
}

# tb_soak_dev PATH END: the name of END's device on PATH.
tb_soak_dev() { echo "$2$1$TB_TAG"; } # PATH END

tb_soak_setup()
{
	local ns line p src in out dst g i e k
	tb_base || return 1
	for ns in "$TB_SRC" "$TB_DUT" "$TB_SINK"; do
		tb_run "$ns" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1 >/dev/null || return 1
	done
	for line in "${TB_SOAK_PATHS[@]}"; do
		read -r p src in out dst <<<"$line"
		g=$(tb_soak_dev "$p" g) i=$(tb_soak_dev "$p" i)
		e=$(tb_soak_dev "$p" e) k=$(tb_soak_dev "$p" k)
		# The pairs are born in their namespaces: nothing in the root one.
		ip -n "$TB_SRC" link add "$g" address "$(tb_soak_mac "$p" g)" type veth \
			peer name "$i" address "$(tb_soak_mac "$p" i)" netns "$TB_DUT" &&
		ip -n "$TB_SINK" link add "$k" address "$(tb_soak_mac "$p" k)" type veth \
			peer name "$e" address "$(tb_soak_mac "$p" e)" netns "$TB_DUT" ||
			return 1
		ip -n "$TB_SRC" addr add "$src/${in#*/}" dev "$g" &&
		ip -n "$TB_SRC" link set "$g" up &&
		ip -n "$TB_DUT" addr add "$in" dev "$i" &&
		ip -n "$TB_DUT" link set "$i" up &&
		ip -n "$TB_DUT" addr add "$out" dev "$e" &&
		ip -n "$TB_DUT" link set "$e" up &&
		ip -n "$TB_SINK" addr add "$dst" dev "$k" &&
		ip -n "$TB_SINK" link set "$k" up || return 1
		# The kernel path (the worker's fallback) needs no ARP either.
		ip -n "$TB_DUT" neigh replace "${dst%/*}" lladdr "$(tb_soak_mac "$p" k)" \
			dev "$e" nud permanent &&
		ip -n "$TB_DUT" neigh replace "$src" lladdr "$(tb_soak_mac "$p" g)" \
			dev "$i" nud permanent || return 1
		# Generators and sinks finish their own checksums; GRO gives
		# the receiving ends NAPI (tb_setup says why).
		tb_src ethtool -K "$g" gro on tx off >/dev/null &&
		tb_sink ethtool -K "$k" gro on tx off >/dev/null &&
		tb_dut ethtool -K "$i" gro on >/dev/null &&
		tb_dut ethtool -K "$e" gro on >/dev/null || return 1
	done
	tb_dut sysctl -q -w net.ipv4.ip_forward=1 >/dev/null || return 1
	tb_log "soak test bed: $TB_SRC | $TB_DUT | $TB_SINK, pins $XNF_PIN_ROOT"
}

# tb_json_soak: tb_json_base with, by path (s, c, w), .dev.<p> and .mac.<p>
# ({g, i, e, k}) and .paths.<p> ({src, in, out, dst}: the addresses).
tb_json_soak()
{
	local line p src in out dst
	for line in "${TB_SOAK_PATHS[@]}"; do
		read -r p src in out dst <<<"$line"
		jq -n --arg p "$p" --arg src "$src" --arg in "$in" --arg out "$out" \
			--arg dst "$dst" \
			--arg g "$(tb_soak_dev "$p" g)" --arg i "$(tb_soak_dev "$p" i)" \
			--arg e "$(tb_soak_dev "$p" e)" --arg k "$(tb_soak_dev "$p" k)" \
			--arg mg "$(tb_soak_mac "$p" g)" --arg mi "$(tb_soak_mac "$p" i)" \
			--arg me "$(tb_soak_mac "$p" e)" --arg mk "$(tb_soak_mac "$p" k)" \
			'{dev: {($p): {g: $g, i: $i, e: $e, k: $k}},
			  mac: {($p): {g: $mg, i: $mi, e: $me, k: $mk}},
			  paths: {($p): {src: $src, in: $in, out: $out, dst: $dst}}}'
	done | jq -s --argjson base "$(tb_json_base soak)" \
		'$base + {dev: (map(.dev) | add), mac: (map(.mac) | add),
			  paths: (map(.paths) | add)}'
}

# ---- rtsync: ports for a full table ------------------------------------------

# tb_rtsync_setup N: N ports p0..p<N-1> in the DUT, port I 198.18.I.1/24
# and 2001:db8:I::1/64 (I in hex), each with a peer qI in the source
# namespace, to which nothing is sent. The next hops of the generated
# table (tools/bench/rtgen.py, nexthops(): 198.18.I.2, 2001:db8:I::2) are
# static neighbours of port I, MAC 02:78:6e:00:01:I.
tb_rtsync_setup()
{
	local n=${1:?tb_rtsync_setup N} i dev x mac
	tb_base || return 1
	TB_RTSYNC_PORTS=$n
	for ((i = 0; i < n; i++)); do
		dev=p$i x=$(printf '%x' "$i") mac=$(printf '02:78:6e:00:01:%02x' "$i")
		ip -n "$TB_DUT" link add "$dev" type veth peer name "q$i" netns "$TB_SRC" &&
		ip -n "$TB_DUT" addr add "198.18.$i.1/24" dev "$dev" &&
		ip -n "$TB_DUT" addr add "2001:db8:$x::1/64" dev "$dev" nodad &&
		ip -n "$TB_DUT" link set "$dev" up &&
		ip -n "$TB_SRC" link set "q$i" up || return 1
		# A veth can take XDP_REDIRECTed frames only when its peer runs
		# NAPI (XDP or GRO on): else xnf's route sync leaves the routes
		# through it to the kernel.
		tb_src ethtool -K "q$i" gro on >/dev/null &&
		ip -n "$TB_DUT" neigh replace "198.18.$i.2" lladdr "$mac" dev "$dev" \
			nud permanent &&
		ip -n "$TB_DUT" neigh replace "2001:db8:$x::2" lladdr "$mac" dev "$dev" \
			nud permanent || return 1
	done
	tb_dut sysctl -q -w net.ipv4.ip_forward=1 \
		net.ipv6.conf.all.forwarding=1 >/dev/null || return 1
	# The default IPv6 route cache limit would make the kernel refuse
	# most of 200,000 routes (net.ipv6.route.max_size is 4096 < 6.3);
	# a kernel that refuses the setting is left as it is.
	tb_dut sysctl -q -w net.ipv6.route.max_size=2147483647 >/dev/null 2>&1 || true
	tb_log "rtsync test bed: $n ports in $TB_DUT, pins $XNF_PIN_ROOT"
}

# tb_json_rtsync: tb_json_base and .ports: [{dev, peer}], port I at I.
tb_json_rtsync()
{
	tb_json_base rtsync | jq --argjson n "$TB_RTSYNC_PORTS" \
		'. + {ports: [range($n) | {dev: "p\(.)", peer: "q\(.)"}]}'
}
