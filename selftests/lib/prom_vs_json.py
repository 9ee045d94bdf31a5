#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""prom_vs_json.py METRICS JSON [CT_JSON]: every counter of `xnf -j stats`
(JSON) and of `xnf -j ct stats` (CT_JSON) that the Prometheus text
(METRICS, from `xnf stats -f prometheus` or the exporter) carries has the
same value there, and each is there; the firewall's rules come in JSON's
order (by prio). Prints one
line per difference and exits 1 if there is any; prints how many values
it compared.
"""
import json
import re
import sys

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    out = {}
    for line in text.splitlines():
        if not line or line.startswith('#'):
            continue
        m = LINE.match(line)
        if not m:
            raise SystemExit(f'not a sample line: {line!r}')
        labels = frozenset(LABEL.findall(m.group(2) or ''))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def main():
    text = open(sys.argv[1]).read()
    metrics = parse(text)
    stats = json.load(open(sys.argv[2]))
    bad = []
    n = 0

    def check(name, labels, want):
        nonlocal n
        key = (name, frozenset(labels.items()))
        got = metrics.get(key)
        n += 1
        if got is None:
            bad.append(f'missing {name}{dict(labels)} (JSON: {want})')
        elif got != want:
            bad.append(f'{name}{dict(labels)} = {got}, JSON says {want}')

    verdicts = {'in': 'received', 'pass': 'passed', 'drop': 'dropped',
                'redirect': 'redirected'}
    for d in stats['devices']:
        dev = {'interface': d['dev']}
        for nf in d['nfs']:
            for key, word in verdicts.items():
                check(f'xnf_nf_{word}_packets_total',
                      {**dev, 'nf': nf['nf']}, nf[key])
                check(f'xnf_nf_{word}_bytes_total',
                      {**dev, 'nf': nf['nf']}, nf[key + '_bytes'])
            if nf['nf'] == 'chain':
                for c in nf['percpu']:
                    check('xnf_cpu_received_packets_total',
                          {**dev, 'cpu': str(c['cpu'])}, c['in'])
        for reason, v in d['drop_reasons'].items():
            check('xnf_dropped_packets_total', {**dev, 'reason': reason}, v)
        for reason, v in d['pass_reasons'].items():
            check('xnf_kernel_passed_packets_total',
                  {**dev, 'reason': reason}, v)
        for reason, v in d['drop_reason_bytes'].items():
            check('xnf_dropped_bytes_total', {**dev, 'reason': reason}, v)
        for reason, v in d['pass_reason_bytes'].items():
            check('xnf_kernel_passed_bytes_total',
                  {**dev, 'reason': reason}, v)
        if d['xmit']['recorded']:
            for key, name in (('sent', 'xnf_xmit_sent_packets_total'),
                              ('drops', 'xnf_xmit_dropped_packets_total'),
                              ('redirect_err', 'xnf_redirect_errors_total')):
                check(name, dev, d['xmit'][key])
        for slot, v in enumerate(d['tail_miss']):
            check('xnf_tail_call_misses_total', {**dev, 'slot': str(slot)}, v)
        for nf in ('firewall', 'l3fwd', 'l2fwd'):
            check('xnf_flow_cache_hits_total', {**dev, 'nf': nf},
                  d['flow_cache'][nf]['hit'])
            check('xnf_flow_cache_misses_total', {**dev, 'nf': nf},
                  d['flow_cache'][nf]['miss'])
        if d['batch']['recorded']:
            polls = d['batch']['polls']
            check('xnf_napi_batch_size_packets_count', dev, sum(polls))
            check('xnf_napi_batch_size_packets_sum', dev,
                  sum(i * p for i, p in enumerate(polls)))
            check('xnf_napi_batch_size_packets_bucket', {**dev, 'le': '63'},
                  sum(polls[:64]))
        for w in d.get('workers', []):
            wl = {**dev, 'queue': str(w['queue'])}
            check('xnf_worker_received_packets_total', wl, w['rx_packets'])
            check('xnf_worker_transmitted_packets_total', wl,
                  w['tx_packets'])
            check('xnf_worker_polls_total', wl, w['polls'])
            check('xnf_worker_empty_polls_total', wl, w['empty_polls'])
            check('xnf_worker_dropped_packets_total',
                  {**wl, 'reason': 'tx_full'}, w['drop']['tx_full'])
            for key in ('busy', 'idle'):
                name = f'xnf_worker_{key}_seconds_total'
                got = metrics.get((name, frozenset(wl.items())))
                n += 1
                if got is None or round(got * 1e9) != w[f'{key}_ns']:
                    bad.append(f'{name}{wl} = {got}, JSON says '
                               f'{w[key + "_ns"]} ns')
            hist = w['batch_hist']
            check('xnf_worker_batch_size_packets_count', wl,
                  sum(b['batches'] for b in hist))
            check('xnf_worker_batch_size_packets_sum', wl,
                  sum(b['size'] * b['batches'] for b in hist))
            check('xnf_worker_batch_size_packets_bucket', {**wl, 'le': '0'},
                  sum(b['batches'] for b in hist if b['size'] == 0))
    for r in stats['fw_hits']:
        prio = str(r['prio'])
        for name, key in (('packets', 'packets'), ('bytes', 'bytes')):
            hits = [v for (m, lab), v in metrics.items()
                    if m == f'xnf_fw_rule_matched_{name}_total'
                    and ('prio', prio) in lab]
            n += 1
            if hits != [r[key]]:
                bad.append(f'rule prio {prio} {name}: {hits}, '
                           f'JSON says {r[key]}')
        # The packet log: lines only for a rule that logs.
        for name, key in (('logged', 'logged'),
                          ('log_suppressed', 'suppressed')):
            lines = [v for (m, lab), v in metrics.items()
                     if m == f'xnf_fw_rule_{name}_packets_total'
                     and ('prio', prio) in lab]
            want = [r['log'][key]] if r.get('log') else []
            n += 1
            if lines != want:
                bad.append(f'rule prio {prio} {name}: {lines}, '
                           f'JSON says {want}')
    for r in stats.get('log_reasons', []):
        check('xnf_reason_logged_packets_total', {'reason': r['reason']},
              r['logged'])
        check('xnf_reason_log_suppressed_packets_total',
              {'reason': r['reason']}, r['suppressed'])
    n += 1
    nreasons = len([1 for (m, _) in metrics
                    if m == 'xnf_reason_logged_packets_total'])
    if nreasons != len(stats.get('log_reasons', [])):
        bad.append(f'{nreasons} reasons logged, JSON says '
                   f'{len(stats.get("log_reasons", []))}')
    # The rules in one order: JSON's, by prio.
    order = [int(p) for p in re.findall(
        r'^xnf_fw_rule_matched_packets_total\{prio="(\d+)"', text, re.M)]
    n += 1
    if order != [r['prio'] for r in stats['fw_hits']]:
        bad.append(f'rules in the order {order}, JSON says '
                   f'{[r["prio"] for r in stats["fw_hits"]]}')
    check('xnf_fw_rules', {}, len(stats['fw_hits']))
    policy = {'policy': stats['fw_default']}
    check('xnf_fw_default_matched_packets_total', policy,
          stats['fw_default_packets'])
    check('xnf_fw_default_matched_bytes_total', policy,
          stats['fw_default_bytes'])
    if len(sys.argv) > 3:
        ct = json.load(open(sys.argv[3]))
        # The table's gauges, and its counters (all but dead, which is
        # in the entries' arithmetic only).
        for key in ('entries', 'max', 'aliases'):
            check(f'xnf_ct_{key}', {}, ct[key])
        for key in ('created', 'expired', 'deleted', 'flushed', 'evicted',
                    'insert_failed', 'invalid', 'related', 'searched',
                    'found', 'nat_created', 'nat_retries', 'nat_no_port',
                    'nat_no_addr', 'nat_clash'):
            check(f'xnf_ct_{key}_total', {}, ct[key])
    for b in bad:
        print(b)
    print(f'{n} values compared, {len(bad)} differ')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
