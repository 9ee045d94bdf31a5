#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# bench.bats - the benchmark harness (tools/bench/bench.py): a quick run,
# narrowed to a few dataplanes and one frame size so that `make check`
# stays short, into a temporary directory. Asserts that every output file
# exists, that the CSVs have their columns and rows, and that the numbers
# are sane (rates > 0, loss in [0, 1], p50 <= p99, batch histograms that
# add up). No timing assertion: absolute numbers on a shared 2-vCPU VM mean
# nothing; the harness reports ratios measured side by side.

bats_require_minimum_version 1.5.0
: "${BATS_TEST_TIMEOUT:=600}"

load ../testbed/testbed

BUILD=$(cd "$(dirname "$XNF")" && pwd)

setup_file()
{
	TB_SKIP=$(tb_missing)
	if [ -z "$TB_SKIP" ]; then
		for t in xnf-gen xnf-sink xnf-fwgen; do
			[ -x "$BUILD/$t" ] || TB_SKIP="needs $BUILD/$t (run make)"
		done
		/usr/bin/python3 -c 'import matplotlib' 2>/dev/null ||
			TB_SKIP="needs python3-matplotlib (scripts/install-deps.sh)"
		command -v nft >/dev/null || TB_SKIP="needs nft"
	fi
	export TB_SKIP
}

setup()
{
	[ -z "$TB_SKIP" ] || skip "$TB_SKIP"
	OUT=$(mktemp -d /tmp/xnf-bench-test.XXXXXX)
}

teardown()
{
	[ -n "${OUT:-}" ] && rm -rf -- "$OUT"
	return 0
}

@test "bench: a quick run writes every output file with sane numbers" {
	local only="redirect,minfwd,fibfwd,xnf-?nf-tailcall-lpm,xnf-3nf-fused-lpm,xnf-1nf-tailcall-fib"
	only+=",linux,linux-nft,xnf-1nf-model"
	"$BUILD/xnf" worker help >/dev/null 2>&1 && only+=",worker-l3fwd,worker-l3fwd-napi-other"

	run timeout 540 /usr/bin/python3 "$TB_TOP/tools/bench/bench.py" --quick \
		--build "$BUILD" --out "$OUT" --only "$only" --sizes 64,dc \
		--rates 100,10k,max --rule-counts 10,1000 --duration 0.3
	echo "$output" | tail -40
	[ "$status" -eq 0 ]

	# Nothing left behind: namespaces and bpffs mounts of this run.
	local pid
	pid=$(jq -r .pid "$OUT/meta.json")
	[ -n "$pid" ] && [ "$pid" != null ]
	! ip netns list | grep -q "^xnfb-$pid-"
	! grep -q "xnf-bench-$pid-" /proc/mounts

	run /usr/bin/python3 - "$OUT" <<'EOF'
import csv, json, os, subprocess, sys
out = sys.argv[1]
def fail(msg):
    sys.exit(f"FAIL: {msg}")
def rows(name, cols):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        fail(f"{name} missing")
    with open(path, newline="") as f:
        r = list(csv.DictReader(f))
    if not r:
        fail(f"{name} has no rows")
    missing = [c for c in cols if c not in r[0]]
    if missing:
        fail(f"{name} lacks columns {missing}")
    return r
for f in ("report.md", "meta.json", "fig2_throughput_size.png", "fig2b_zeroloss.png",
          "fig3_throughput_chain.png", "fig5_latency_rate.png", "fig6_latency_chain.png",
          "batch_loss_rate.png", "rules_throughput.png"):
    p = os.path.join(out, f)
    if not os.path.exists(p) or os.path.getsize(p) == 0:
        fail(f"{f} missing or empty")
base = ["dataplane", "kind", "chain_len", "size", "rep", "sent", "received", "rx_pps",
        "rx_mpps", "rx_gbps", "loss", "duration_s", "lat_p50_ns", "lat_p99_ns"]
t = rows("throughput.csv", base)
dps = {r["dataplane"] for r in t}
for need in ("redirect", "minfwd", "fibfwd", "xnf-1nf-tailcall-lpm", "xnf-2nf-tailcall-lpm",
             "xnf-3nf-tailcall-lpm", "xnf-3nf-fused-lpm", "xnf-1nf-tailcall-fib", "linux",
             "linux-nft"):
    if need not in dps:
        fail(f"throughput.csv has no row for {need}")
if {r["size"] for r in t} != {"64", "dc"}:
    fail(f"throughput sizes {sorted({r['size'] for r in t})}")
def sane(name, rs, lat=True):
    for r in rs:
        sent, recv = int(r["sent"]), int(r["received"])
        if sent <= 0 or recv <= 0 or float(r["rx_pps"]) <= 0 or float(r["rx_gbps"]) <= 0:
            fail(f"{name}: {r['dataplane']} {r['size']}: sent {sent} received {recv} "
                 f"rx_pps {r['rx_pps']}")
        if not 0.0 <= float(r["loss"]) <= 1.0:
            fail(f"{name}: loss {r['loss']}")
        if lat and r["lat_p50_ns"]:
            p50, p99 = float(r["lat_p50_ns"]), float(r["lat_p99_ns"])
            if not 0 < p50 <= p99:
                fail(f"{name}: {r['dataplane']} p50 {p50} p99 {p99}")
sane("throughput.csv", t)
# Every dataplane's DUT CPU time per packet: the ingress's napi threads
# (and an AF_XDP forwarder's threads), from schedstat, in every trial.
for r in t:
    for k in ("cpu_ns_per_pkt", "napi_cpu_ms"):
        if r.get(k, "") == "" or float(r[k]) <= 0:
            fail(f"throughput.csv: {r['dataplane']} {r['size']}: {k} {r.get(k)!r}")
z = rows("zeroloss.csv", ["dataplane", "size", "rate_pps", "rx_pps", "steps", "tolerance",
                          "search_hi_pps"])
for r in z:
    if not 0 <= float(r["rate_pps"]) <= float(r["search_hi_pps"]) * 1.001:
        fail(f"zeroloss: rate {r['rate_pps']} outside [0, {r['search_hi_pps']}]")
    if r["loss"] != "" and float(r["loss"]) > float(r["tolerance"]):
        fail(f"zeroloss: {r['dataplane']} loss {r['loss']} above the tolerance")
l = rows("latency.csv", base + ["rate", "offered_pps", "batch_mean"])
sane("latency.csv", l)
if {r["rate"] for r in l} != {"100", "10k", "max"}:
    fail(f"latency rates {sorted({r['rate'] for r in l})}")
for r in l:
    if r["rate"] != "max" and int(r["received"]) > 0 and not r["lat_p50_ns"]:
        fail("latency.csv: a point without latency")
sane("latency_chain.csv", rows("latency_chain.csv", base + ["rate"]))
b = rows("batch.csv", ["dataplane", "rate", "source", "batch", "polls"])
for r in b:
    if int(r["polls"]) <= 0 or not 0 <= int(r["batch"]) <= 512:
        fail(f"batch.csv: {r}")
# The NAPI histogram of an xnf point accounts for every packet it saw.
napi = [r for r in b if r["source"] == "napi"]
if not napi:
    fail("batch.csv: no NAPI histogram of an xnf dataplane")
ru = rows("rules.csv", base + ["rules"])
sane("rules.csv", ru, lat=False)
got = {(r["dataplane"], r["rules"]) for r in ru}
for dp in ("xnf-2nf-tailcall-lpm", "linux-nft"):
    for n in ("10", "1000"):
        if (dp, n) not in got:
            fail(f"rules.csv: no {dp} with {n} rules")
raw = sum(len(fs) for _, _, fs in os.walk(os.path.join(out, "raw")))
# Every run of the generator sent its own frames: none was passed because
# the DUT (Linux forwarding above all) wrote over its cookie.
for d, _, fs in os.walk(os.path.join(out, "raw")):
    for f in fs:
        rec = json.load(open(os.path.join(d, f)))
        g = (rec.get("gen") if isinstance(rec, dict) else None) or {}
        if "sent" in g and g.get("bad_cookie") != 0:
            fail(f"{d}/{f}: generator bad_cookie {g.get('bad_cookie')}")
if raw < len(t) + len(l):
    fail(f"only {raw} raw JSON files")
meta = json.load(open(os.path.join(out, "meta.json")))
for dp, p in meta["placement"].items():
    if not p.get("napi") or any(t["cpus"] != [p.get("napi_cpu", p["dut_cpu"])] for t in p["napi"]):
        fail(f"placement of {dp}: {p}")
if "worker-l3fwd-napi-other" in meta["dataplanes"]:
    sw = json.load(open(os.path.join(out, "model", "sweep.json")))
    if sw["nf"] != "l3fwd" or not sw["ring"] or not sw["batch"] or len(sw["points"]) < 3:
        fail(f"model/sweep.json: {str(sw)[:300]}")
    for p in sw["points"]:
        w = p["worker"]
        if p["sent"] <= 0 or w is None or w["rx_packets"] <= 0 or not w.get("batch_hist"):
            fail(f"model point {str(p)[:300]}")
        # the arrivals at the worker's ring: the ingress NAPI polls by size
        polls = (p.get("napi") or {}).get("polls") or []
        if len(polls) != 65 or sum(polls[1:]) <= 0:
            fail(f"model point without its NAPI polls: {str(p.get('napi'))[:300]}")
        # every poll with packets timed (the XDP path's service times)
        n = p["napi"]
        if (n.get("timed") or [])[1:] != polls[1:] or sum(n.get("ns") or []) <= 0:
            fail(f"model point without its NAPI poll times: {str(n)[:300]}")
# The XDP path's own sweep: its ingress polls with their times, the
# generator's flushes (the bursts that reach the ring), every frame sent
# in one flush.
if "xnf-1nf-model" in meta["dataplanes"]:
    sw = json.load(open(os.path.join(out, "model", "xdp", "sweep.json")))
    if sw["dataplane"] != "xnf-1nf-model" or sw["ring"] != 256 or len(sw["points"]) < 3:
        fail(f"model/xdp/sweep.json: {str(sw)[:300]}")
    for p in sw["points"]:
        n, f = p["napi"], (p.get("gen") or {}).get("flushes") or []
        polls = n.get("polls") or []
        if len(polls) != 65 or sum(polls[1:]) <= 0 or (n.get("timed") or [])[1:] != polls[1:]:
            fail(f"XDP model point without its timed polls: {str(n)[:300]}")
        if len(f) != 65 or sum(i * c for i, c in enumerate(f)) != p["sent"]:
            fail(f"XDP model point: flushes {f} do not carry the {p['sent']} frames sent")
        if not (p.get("napi_sched") or {}).get("run_ns"):
            fail(f"XDP model point without the napi thread's CPU time: {p.get('napi_sched')}")
        # Where perf recorded the napi thread: its polls with packets are
        # xnf_batch's (perf's window holds the trial's, a stray frame
        # outside it aside), unless its buffer filled (lost_polls, the
        # polls it missed, its record ending early).
        wk = p.get("napi_wake") or {}
        if "polls" in wk and wk.get("lost_polls") is None:
            fail(f"XDP model point without lost_polls: {str(wk)[:300]}")
        if wk.get("lost_polls") and sum(polls[1:]) - wk["lost_polls"] != \
                wk["polls"] - wk["polls_empty"]:
            fail(f"lost_polls {wk['lost_polls']} is not what perf missed")
        if "polls" in wk and not wk.get("lost_chunks") and not wk.get("lost_polls"):
            extra = wk["polls"] - wk["polls_empty"] - sum(polls[1:])
            if not 0 <= extra <= 10:
                fail(f"perf saw {wk['polls'] - wk['polls_empty']} polls with packets, "
                     f"xnf_batch {sum(polls[1:])}")
    if not os.path.exists(os.path.join(out, "model", "xdp", "validate.md")):
        fail("model/xdp/validate.md missing")
# The machine's own steadiness, after the model sweeps: a count per 100
# ms stretch on the generator's CPU and the DUT's, in both sweeps, read
# back by validate -j.
for sub, dp in (("", "worker-l3fwd-napi-other"), ("xdp", "xnf-1nf-model")):
    if dp not in meta["dataplanes"]:
        continue
    m = json.load(open(os.path.join(out, "model", sub, "sweep.json"))).get("machine") or {}
    roles = {c: v["role"] for c, v in (m.get("cpus") or {}).items()}
    if sorted(roles.values()) != ["dut_cpu", "gen_cpu"] or any(
            len(v["counts"]) < 10 or min(v["counts"]) < 0 or sum(v["counts"]) <= 0
            for v in m["cpus"].values()):
        fail(f"model/{sub}/sweep.json machine: {str(m)[:300]}")
    args = [os.environ["XNF"], "-j", "model", "validate",
            os.path.join(out, "model", sub, "sweep.json"),
            "--out", os.path.join(out, "model", sub, "validate-machine")]
    v = subprocess.run(args + (["--path", "xdp"] if sub else []), capture_output=True,
                       text=True, timeout=600)
    got = [c["cpu"] for c in (json.loads(v.stdout)["summary"].get("machine") or [])] \
        if v.returncode == 0 else None
    if got != sorted(int(c) for c in roles):
        fail(f"validate -j of model/{sub}: machine {got}: {v.stderr[:300]}")
rep = open(os.path.join(out, "report.md")).read()
for f in ("fig2_throughput_size.png", "fig5_latency_rate.png", "Targets",
          "DUT CPU per packet"):
    if f not in rep:
        fail(f"report.md does not mention {f}")
print("ok", len(t), "throughput rows,", len(l), "latency rows,", raw, "raw files")
EOF
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "bench: report.py --from redraws a recorded run's figures from its CSVs" {
	cp -r "$TB_TOP/docs/bench/." "$OUT/"
	rm -f "$OUT/fig6_latency_chain.png" "$OUT/fig2b_zeroloss.png"
	# A figure whose CSV was not recorded (docs/bench keeps no batch.csv)
	# is kept as it is, not replaced by an empty one.
	[ ! -e "$OUT/batch.csv" ]
	local before
	before=$(sha256sum <"$OUT/batch_loss_rate.png")

	run /usr/bin/python3 "$TB_TOP/tools/bench/report.py" --from "$OUT"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(sha256sum <"$OUT/batch_loss_rate.png")" = "$before" ]
	local f
	for f in fig2_throughput_size fig2b_zeroloss fig3_throughput_chain fig5_latency_rate \
		fig6_latency_chain rules_throughput; do
		[ "$(head -c 4 "$OUT/$f.png" | tail -c 3)" = PNG ]
	done
	# The report's text comes from the same CSVs: unchanged.
	cmp "$OUT/report.md" "$TB_TOP/docs/bench/report.md"

	run /usr/bin/python3 "$TB_TOP/tools/bench/report.py" --from
	[ "$status" -ne 0 ]
}

@test "bench: --vs-testpmd plans the worker, sleeping and busy-polling, and testpmd side by side, skips a missing testpmd" {
	"$BUILD/xnf" worker help >/dev/null 2>&1 || skip "xnf worker is not built"
	run /usr/bin/python3 "$TB_TOP/tools/bench/bench.py" --dry-run --vs-testpmd \
		--build "$BUILD" --out "$OUT" --testpmd xnf-no-such-testpmd
	echo "$output"
	[ "$status" -eq 0 ]
	# Named as not measured, with the reason; the worker's four stay.
	echo "$output" | grep -q '^not measured: testpmd: xnf-no-such-testpmd is not installed'
	echo "$output" | grep -q '^not measured: testpmd-napi-other: '
	echo "$output" | grep -q ': 4 dataplanes, 20 test beds, 20 trials;'
	echo "$output" | grep -q '^  worker-macswap-napi-other rules='
	[ "$(echo "$output" | grep -c '^  worker-macswap-bp-napi-other rules=10: 1 tasks')" -eq 5 ]

	# Present (any executable will do for the plan): 5 rounds of 6.
	run /usr/bin/python3 "$TB_TOP/tools/bench/bench.py" --dry-run --vs-testpmd \
		--build "$BUILD" --out "$OUT" --testpmd "$(command -v true)"
	echo "$output"
	[ "$status" -eq 0 ]
	! echo "$output" | grep -q '^not measured'
	echo "$output" | grep -q ': 6 dataplanes, 30 test beds, 30 trials;'
	[ "$(echo "$output" | grep -c '^  testpmd-napi-other rules=10: 1 tasks')" -eq 5 ]
	# The full run leaves the busy-poll workers out.
	run /usr/bin/python3 "$TB_TOP/tools/bench/bench.py" --dry-run --build "$BUILD" --out "$OUT"
	[ "$status" -eq 0 ]
	! echo "$output" | grep -q -- '-bp'
}

@test "bench: --vs-testpmd runs the worker in busy-poll mode and gives paired ratios with intervals" {
	"$BUILD/xnf" worker help >/dev/null 2>&1 || skip "xnf worker is not built"
	# Without testpmd (not in CI): the sleeping and the busy-polling
	# worker, both placements, two rounds.
	run timeout 300 /usr/bin/python3 "$TB_TOP/tools/bench/bench.py" --vs-testpmd \
		--build "$BUILD" --out "$OUT" --testpmd xnf-no-such-testpmd --repeat 2 --duration 0.3
	echo "$output" | tail -20
	[ "$status" -eq 0 ]
	# The busy-poll workers ran with the socket options read back and the
	# device's NAPI settings, the others without.
	jq -e '.placement | (.["worker-macswap-bp"].busy_poll.prefer == true) and
		(.["worker-macswap-bp-napi-other"].busy_poll |
		 .prefer == true and .napi_defer_hard_irqs > 0 and .gro_flush_timeout > 0) and
		(.["worker-macswap"].busy_poll == null)' "$OUT/meta.json"
	# Each round's dataplanes in a recorded order, each once.
	jq -e '.order | length == 2 and all(.[]; (. | sort) == (. | unique) and length == 4)' \
		"$OUT/vs_testpmd.json"
	# Per dataplane: both rounds measured, the interval around the median.
	jq -e '.dataplanes | length == 4 and all(.[];
		.pps_summary.n == 2 and .pps_summary.lo <= .pps_summary.median and
		.pps_summary.median <= .pps_summary.hi and .per_cpu_ms_summary.n == 2)' \
		"$OUT/vs_testpmd.json"
	# Busy-poll over sleeping, paired per round, in both placements and
	# both metrics; no target, no verdict (the targets are against testpmd).
	jq -e '[.ratios[] | select(.num | test("-bp"))] | length == 4 and all(.[];
		.n == 2 and (.ratios | length) == 2 and .lo <= .median and .median <= .hi and
		.target == null and .verdict == null)' "$OUT/vs_testpmd.json"
	# Every AF_XDP trial counts the frames busy polling took from NAPI.
	head -1 "$OUT/throughput.csv" | tr -d '\r' | tr , '\n' | grep -qx busy_poll_rx
	# A forwarder that never sleeps (busy-poll, its napi thread on the
	# other CPU) is charged the CPU time of the sending alone: at most
	# the trial's length, within the sampler's period at each end (the
	# setup and teardown around the generator once added 0.2-0.3 s).
	/usr/bin/python3 - "$OUT/throughput.csv" <<-'EOF'
		import csv, sys
		rows = [r for r in csv.DictReader(open(sys.argv[1]))
		        if r["dataplane"] == "worker-macswap-bp-napi-other"]
		assert len(rows) == 2, rows
		for r in rows:
		    fwd, dur = float(r["fwd_cpu_ms"]), float(r["duration_s"])
		    assert 0 < fwd <= dur * 1000 + 45, (fwd, dur)
	EOF
}

@test "bench: --vs-nft-ct runs xnf's stateful chain and Linux + nftables side by side at 1 and 65,536 flows" {
	# The full run plans neither: they are --vs-nft-ct's.
	run /usr/bin/python3 "$TB_TOP/tools/bench/bench.py" --dry-run --build "$BUILD" --out "$OUT"
	[ "$status" -eq 0 ]
	! echo "$output" | grep -q -- '-ct-'
	run /usr/bin/python3 "$TB_TOP/tools/bench/bench.py" --dry-run --vs-nft-ct \
		--build "$BUILD" --out "$OUT"
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q ': 5 dataplanes, 25 test beds, 25 trials;'
	[ "$(echo "$output" | grep -c '^  xnf-ct-65536flows rules=10: 1 tasks')" -eq 5 ]

	run timeout 300 /usr/bin/python3 "$TB_TOP/tools/bench/bench.py" --vs-nft-ct \
		--build "$BUILD" --out "$OUT" --repeat 1 --duration 0.3
	echo "$output" | tail -12
	[ "$status" -eq 0 ]
	# Both dataplanes forwarded through their stateful policy (a ratio
	# needs both rates), the DUT's CPU time per packet measured, and the
	# connections tracked: one, or (nearly: a flow whose frames the
	# veth's ring all dropped is not seen) all 65,536 source ports.
	jq -e 'map(select(.xnf)) | length == 2 and all(.[];
		.rounds == 1 and .rate_ratio_median > 0 and .cpu_ratio_median > 0 and
		.xnf_ns_per_pkt[0] > 0 and .linux_ns_per_pkt[0] > 0)' "$OUT/vs_nft_ct.json"
	jq -e 'map(select(.xnf == "xnf-ct-1flows"))[0] |
		.xnf_ct_entries == [1] and .linux_ct_entries == [1]' "$OUT/vs_nft_ct.json"
	jq -e 'map(select(.xnf == "xnf-ct-65536flows"))[0] |
		(.xnf_ct_entries[0] | . > 60000 and . <= 65536) and
		(.linux_ct_entries[0] | . > 60000 and . <= 65536)' "$OUT/vs_nft_ct.json"
	jq -e 'map(select(.ceiling == "redirect"))[0].ns_per_pkt[0] > 0' "$OUT/vs_nft_ct.json"
}

@test "bench-micro -N: the NAT group times packets that really leave translated" {
	[ -x "$BUILD/bench-micro" ] || skip "needs $BUILD/bench-micro (run make)"
	# bench-micro exits non-zero when a packet of a row does not leave
	# as the row claims: the translated connections' first packets and
	# replies, and the last packet of every timed run, are checked for
	# the translated addresses and ports with right checksums (and the
	# untranslated rows for the original ones), so a nat NF that
	# translated nothing would fail here instead of timing a no-op.
	run timeout 300 "$BUILD/bench-micro" -N -r 2000 -n 1
	echo "$output" | tail -30
	[ "$status" -eq 0 ]
}

# The minimal bpf_fib_lookup forwarder (bpf/fibfwd.bpf.c) is timed in the
# group of l3fwd in fib mode, on the same kernel routes: bench-micro checks
# its packet leaves redirected with the next hop's MAC and TTL 63 (once
# alone and after every timed run) and exits non-zero otherwise. No timing
# is asserted.
@test "bench-micro -o: l3fwd in fib mode is timed beside the minimal fib forwarder" {
	[ -x "$BUILD/bench-micro" ] || skip "needs $BUILD/bench-micro (run make)"
	run timeout 300 "$BUILD/bench-micro" -o "l3fwd (fib mode)" -r 2000 -n 2
	echo "$output" | tail -30
	[ "$status" -eq 0 ]
	# rows: LABEL... FORM VERDICT BASELINE MEASURED NET SPREAD
	echo "$output" | awk '/^  fibfwd \(minimal\) / && $(NF - 4) == "redirect" { f++ }
		/^  l3fwd \(fib mode\) / && $(NF - 4) == "redirect" { l++ }
		/^  firewall,l3fwd / { other++ }
		END { exit !(f == 1 && l == 8 && !other) }'
	# the paired comparison, one line per form, cache on and off
	[ "$(echo "$output" | grep -c '^  \(tail\|fused\)\( off\)\? ')" -eq 4 ]
}

# -H: the flow cache's hit forms alone, for short A/B runs of the hit path:
# the row's tail-called and fused forms with one flow, checked as always
# (bench-micro exits non-zero when a timed packet missed the cache more
# than once per NF), and none of the off or miss forms.
@test "bench-micro -H: only the forms with the flow cache hitting are timed" {
	[ -x "$BUILD/bench-micro" ] || skip "needs $BUILD/bench-micro (run make)"
	run timeout 300 "$BUILD/bench-micro" -H -o "firewall,l3fwd,l2fwd" -r 2000 -n 2
	echo "$output" | tail -20
	[ "$status" -eq 0 ]
	# rows: LABEL FORM... VERDICT BASELINE MEASURED NET SPREAD
	echo "$output" | awk '/^  firewall,l3fwd,l2fwd / && $(NF - 4) == "redirect" { n++; f[$2]++ }
		END { exit !(n == 2 && f["tail"] == 1 && f["fused"] == 1) }'
}

# The traffic mixes: the flow cache's hit rate, from its counters, for the
# 3-NF chain, l3fwd, the firewall and the stateful chain: one flow hits on
# every packet but the first, 65,536 flows in turn never come back while
# still in the cache's 4,096 entries per CPU, and the Zipf mix's popular
# flows do. The stateful chain (conntrack,nat,firewall,l3fwd, masquerade)
# has the mixes' connections made before the rounds, so its timed packets
# make none; its flood makes one with every packet (bench-micro exits
# non-zero unless every timed packet was redirected, hit `allow iif`, and
# under a mix left masqueraded with right checksums). Rates and counts
# only: no timing is asserted.
@test "bench-micro -M: the cache's hit rate is ~1 for one flow, ~0 uniform over 65,536, in between for Zipf; the stateful chain's connections are made before, its flood's by every packet" {
	[ -x "$BUILD/bench-micro" ] || skip "needs $BUILD/bench-micro (run make)"
	local chain rate k
	local ct="ct,nat,fw,l3 masq"
	run timeout 600 "$BUILD/bench-micro" -M -r 20000 -n 1
	echo "$output" | tail -36
	[ "$status" -eq 0 ]
	# rows: CHAIN... MIX... on|off VERDICT BASELINE MEASURED NET SPREAD
	# HITRATE NEWCONN (labels may have spaces); col CHAIN MIX CACHE N
	# prints the Nth field from the end
	col()
	{
		echo "$output" | awk -v c="$1" -v m="$2" -v k="$3" -v f="$4" \
			'index($0, "  " c " ") == 1 && index($0, m) && $(NF - 7) == k { print $(NF - f) }'
	}
	for chain in firewall,l3fwd,l2fwd l3fwd firewall "$ct"; do
		tb_expect "$chain: one flow, cache on" "$(col "$chain" "1 flow" on 1 | awk '{print ($1 >= 0.99)}')" -eq 1
		tb_expect "$chain: uniform, cache on" "$(col "$chain" uniform on 1 | awk '{print ($1 <= 0.01)}')" -eq 1
		rate=$(col "$chain" zipf on 1)
		tb_expect "$chain: zipf, cache on, between" "$(awk -v r="$rate" 'BEGIN {print (r >= 0.1 && r <= 0.9)}')" -eq 1
		tb_expect "$chain: cache off, no lookup" "$(col "$chain" zipf off 1)" = -
	done
	tb_expect "stateless rows: no connection" "$(col l3fwd zipf on 0)" = -
	tb_expect "flood, cache on: every lookup misses" "$(col "$ct" flood on 1 | awk '{print ($1 <= 0.01)}')" -eq 1
	tb_expect "flood, cache off: no lookup" "$(col "$ct" flood off 1)" = -
	for k in on off; do
		for mix in "1 flow" uniform zipf; do
			tb_expect "$mix, cache $k: no connection made" "$(col "$ct" "$mix" $k 0)" = 0.0000
		done
		tb_expect "flood, cache $k: a connection a packet" "$(col "$ct" flood $k 0)" = 1.0000
	done
}

@test "bench-micro -G: each target of issue 38 with a median inside its interval and the verdict the interval gives" {
	[ -x "$BUILD/bench-micro" ] || skip "needs $BUILD/bench-micro (run make)"
	local rows
	run timeout 600 "$BUILD/bench-micro" -G -r 20000 -n 5
	echo "$output" | tail -20
	[ "$status" -eq 0 ]
	# rows: WHAT MEDIAN [LO, HI] <= TARGET VERDICT -> MEDIAN LO HI TARGET VERDICT
	rows=$(echo "$output" | sed -n '/^Targets of issue 38/,$p' |
		sed -nE 's/^  (3-NF|l3fwd).* ([-0-9.]+)  \[ *([-0-9.]+), *([-0-9.]+)\]  <= ([-0-9.]+) +(met|not met|undecided)$/\2 \3 \4 \5 \6/p')
	echo "$rows"
	tb_expect "target rows" "$(echo "$rows" | grep -c .)" -eq 8
	tb_expect "each median inside its interval, each verdict the interval's" \
		"$(echo "$rows" | awk '{ v = $5 ($6 ? " " $6 : "");
			want = ($3 <= $4) ? "met" : ($2 > $4) ? "not met" : "undecided";
			bad += !($2 <= $1 && $1 <= $3 && v == want) } END { print bad + 0 }')" -eq 0
}

@test "bench: --vs-nft-masq runs xnf's and Linux's masquerade side by side at 1 and 65,536 flows" {
	# The full run plans neither: they are --vs-nft-masq's.
	run /usr/bin/python3 "$TB_TOP/tools/bench/bench.py" --dry-run --build "$BUILD" --out "$OUT"
	[ "$status" -eq 0 ]
	! echo "$output" | grep -q -- '-masq-'
	run /usr/bin/python3 "$TB_TOP/tools/bench/bench.py" --dry-run --vs-nft-masq \
		--build "$BUILD" --out "$OUT"
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q ': 5 dataplanes, 25 test beds, 25 trials;'
	[ "$(echo "$output" | grep -c '^  xnf-masq-65536flows rules=10: 1 tasks')" -eq 5 ]
	[ "$(echo "$output" | grep -c '^  linux-nft-masq-65536flows rules=10: 1 tasks')" -eq 5 ]

	run timeout 300 /usr/bin/python3 "$TB_TOP/tools/bench/bench.py" --vs-nft-masq \
		--build "$BUILD" --out "$OUT" --repeat 1 --duration 0.3
	echo "$output" | tail -12
	[ "$status" -eq 0 ]
	# Both dataplanes forwarded (a dataplane whose frames reached the
	# sink with an untranslated source is not measured at all: its smoke
	# trial captures them), with the DUT's CPU time per packet, and
	# translated every connection: one, or (nearly: a flow all of whose
	# frames the veth's ring dropped is never seen) all 65,536.
	jq -e 'map(select(.xnf)) | length == 2 and all(.[];
		.rounds == 1 and .rate_ratio_median > 0 and .cpu_ratio_median > 0 and
		.xnf_ns_per_pkt[0] > 0 and .linux_ns_per_pkt[0] > 0)' "$OUT/vs_nft_masq.json"
	jq -e 'map(select(.xnf == "xnf-masq-1flows"))[0] |
		.xnf_nat_translated == [1] and .linux_nat_translated == [1]' "$OUT/vs_nft_masq.json"
	jq -e 'map(select(.xnf == "xnf-masq-65536flows"))[0] |
		(.xnf_nat_translated[0] | . > 60000 and . <= 65536) and
		(.linux_nat_translated[0] | . > 60000 and . <= 65536)' "$OUT/vs_nft_masq.json"
	jq -e 'map(select(.ceiling == "redirect"))[0].ns_per_pkt[0] > 0' "$OUT/vs_nft_masq.json"
}

# The issue 38 test-bed targets: a few dataplanes, each on its own test bed
# kept for the whole run, two mixes (one flow; a Zipf mix), two rounds of
# short trials. Structure only (no timing): every dataplane x mix has a
# trial per round with its CPU per packet, the intervals contain their
# medians, every target has a verdict of the allowed set, the order is the
# seed's and recorded, and nothing is left behind.
@test "bench: --targets measures every dataplane x mix each round and gives each target a verdict" {
	run timeout 300 /usr/bin/python3 "$TB_TOP/tools/bench/bench.py" --targets --quick \
		--build "$BUILD" --out "$OUT" --rounds 2 --trial 0.2 --seed 7 \
		--only redirect,minfwd,xnf-3nf-tailcall-lpm,fibfwd,xnf-1nf-tailcall-fib \
		--mixes 1,zipf:1.0:1000000
	echo "$output" | tail -30
	[ "$status" -eq 0 ]

	local pid
	pid=$(jq -r .meta.pid "$OUT/targets.json")
	[ -n "$pid" ] && [ "$pid" != null ]
	! ip netns list | grep -q "^xnft-$pid-"
	! grep -q "xnf-targets-$pid-" /proc/mounts

	run /usr/bin/python3 - "$OUT/targets.json" <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))
def fail(msg):
    sys.exit(f"FAIL: {msg}")
dps = ["redirect", "minfwd", "xnf-3nf-tailcall-lpm", "fibfwd", "xnf-1nf-tailcall-fib"]
mixes = ["1", "zipf:1.0:1000000"]
if sorted(res["dataplanes"]) != sorted(dps) or [m["name"] for m in res["mixes"]] != mixes:
    fail(f"dataplanes {res['dataplanes']}, mixes {res['mixes']}")
if res["seed"] != 7 or res["rounds"] != 2 or len(res["order"]) != 2 * len(dps) * len(mixes):
    fail(f"seed {res['seed']}, rounds {res['rounds']}, order of {len(res['order'])}")
for r in range(2):
    cells = sorted((dp, m) for rr, dp, m in res["order"] if rr == r)
    if cells != sorted((dp, m) for dp in dps for m in mixes):
        fail(f"round {r} is not every dataplane x mix once: {cells}")
for dp in dps:
    for m in mixes:
        ts = [t for t in res["trials"] if t["dataplane"] == dp and t["mix"] == m]
        if sorted(t["round"] for t in ts) != [0, 1]:
            fail(f"{dp} {m}: trials of rounds {[t['round'] for t in ts]}")
        for t in ts:
            if not t["received"] > 0 or not t["cpu_ns_per_pkt"] > 0 or not t["napi_cpu_ms"] > 0:
                fail(f"{dp} {m}: {t}")
        for k in ("rx_pps", "cpu_ns_per_pkt"):
            c = res["cells"][dp][m][k]
            if c["n"] != 2 or not c["lo"] <= c["median"] <= c["hi"]:
                fail(f"{dp} {m} {k}: {c}")
for m in mixes:
    if res["ceiling"][m]["spread"] is None:
        fail(f"no ceiling spread at {m}")
got = {(t["what"], t["mix"]) for t in res["targets"]}
need = {(w, m) for w in ("3-NF chain (tail-called) / minfwd", "l3fwd fib mode / fibfwd")
        for m in mixes}
if got != need:
    fail(f"targets {sorted(got)}")
for t in res["targets"]:
    if t["verdict"] not in ("met", "not met", "undecided", "undecided (ceiling moved)"):
        fail(f"verdict {t}")
    if t["interval_verdict"] not in ("met", "not met", "undecided") or (
            t["verdict"] != t["interval_verdict"] and not res["ceiling"][t["mix"]]["moved"]):
        fail(f"interval verdict {t}")
    if t["n"] != 2 or not t["lo"] <= t["value"] <= t["hi"] or not t["value"] > 0:
        fail(f"target {t}")
print("ok", len(res["trials"]), "trials")
EOF
	echo "$output"
	[ "$status" -eq 0 ]
}
