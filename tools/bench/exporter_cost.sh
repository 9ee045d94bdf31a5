#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# exporter_cost.sh [SCRAPES]: what one scrape of `xnf exporter` costs with
# 10 attached interfaces and 100 firewall rules, on the test bed of the
# traffic tests (testbed/testbed.bash) with 8 more veths in the DUT.
# Prints the exporter's CPU time per scrape (from /proc/PID/stat over
# SCRAPES scrapes), the time it measures itself reading and formatting
# (xnf_exporter_scrape_duration_seconds: median and 90th percentile), the
# time a client waits (urllib, median), and the size of the answer.
# Needs root; removes everything it made, even when interrupted.
set -euo pipefail

N=${1:-200}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
XNF=${XNF:-$TOP/build/xnf}
# shellcheck source-path=SCRIPTDIR/../.. source=testbed/testbed.bash
source "$TOP/testbed/testbed.bash"
trap tb_teardown EXIT
PORT=10076

tb_testbed_up firewall,l3fwd,l2fwd
for i in 0 1 2 3; do
	ip -n "$TB_DUT" link add "e$i" type veth peer name "f$i"
	ip -n "$TB_DUT" link set "e$i" up
	ip -n "$TB_DUT" link set "f$i" up
	tb_xnf attach "e$i" chain firewall,l3fwd,l2fwd
	tb_xnf attach "f$i" chain firewall,l3fwd,l2fwd
done
for ((i = 1; i <= 100; i++)); do
	echo "fw add prio $i drop proto udp dport $((20000 + i))"
done >"$TB_TMP/rules"
tb_xnf -b "$TB_TMP/rules"
tb_ping_ok "$TB_SRC" $TB_SINK4 20

tb_bg "$TB_DUT" env XNF_PIN_ROOT="$XNF_PIN_ROOT" timeout 600 "$XNF" exporter 2>/dev/null
tb_until "the exporter" tb_dut curl -sf -o /dev/null "http://127.0.0.1:$PORT/"
# tb_bg's pid is timeout's; the exporter is its child.
pid=$(pgrep -P "$TB_BG_PID" -x xnf)

ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
t0=$(ticks)
tb_dut /usr/bin/python3 - "$PORT" "$N" <<'PY'
import statistics, sys, time, urllib.request
port, n = sys.argv[1], int(sys.argv[2])
waits, self_s = [], []
for _ in range(n):
    t = time.monotonic()
    body = urllib.request.urlopen(f'http://127.0.0.1:{port}/metrics',
                                  timeout=20).read().decode()
    waits.append(time.monotonic() - t)
    for line in body.splitlines():
        if line.startswith('xnf_exporter_scrape_duration_seconds '):
            self_s.append(float(line.split()[1]))
lines = [l for l in body.splitlines() if l and not l.startswith('#')]
ifaces = {l.split('interface="')[1].split('"')[0]
          for l in lines if l.startswith('xnf_interface_info')}
rules = [l for l in lines if l.startswith('xnf_fw_rule_matched_packets_total')]
q = statistics.quantiles(self_s, n=10)
print(f'scrapes {n}; interfaces {len(ifaces)}, rules {len(rules)}; '
      f'answer {len(body)} bytes, {len(lines)} samples')
print(f'read+format (xnf_exporter_scrape_duration_seconds): '
      f'median {statistics.median(self_s) * 1e3:.2f} ms, '
      f'p90 {q[8] * 1e3:.2f} ms')
print(f'client wait (urllib, incl. connect): '
      f'median {statistics.median(waits) * 1e3:.2f} ms')
PY
t1=$(ticks)
echo "exporter CPU: $(awk -v d=$((t1 - t0)) -v hz="$hz" -v n="$N" \
	'BEGIN { printf "%.2f ms per scrape (%d ticks of 1/%d s over %d scrapes)", d * 1000 / hz / n, d, hz, n }')"
echo "CPUs: $(nproc)"
s=$(date +%s%N)
tb_xnf stats -f prometheus >/dev/null
echo "xnf stats -f prometheus (a process, its start included): $((($(date +%s%N) - s) / 1000000)) ms"
