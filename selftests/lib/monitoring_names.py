#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""monitoring_names.py METRICS DASHBOARD RULES: every metric name that an
expression of the Grafana dashboard (DASHBOARD: its panels' queries and
its variables' label_values()) or of the Prometheus rule file (RULES: its
rules' expr) names is one the exporter served in METRICS (its text, from
`xnf exporter` or `xnf stats -f prometheus`) with at least one sample: a
name of xnf's (xnf_...) as it is, a histogram's series by its _bucket,
_sum and _count. Prints each name that is not there and exits 1 if one
is not; prints how many names it checked otherwise.
"""
import json
import re
import sys

import yaml

NAME = re.compile(r'\bxnf_[a-z0-9_]+')
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{.*\})? \S+$')


def served(text):
    """The names with a sample line in the exposition text."""
    return {m.group(1) for line in text.splitlines()
            if (m := SAMPLE.match(line))}


def dashboard_exprs(dash):
    """The query strings of every panel (rows' nested panels too) and of
    every query variable."""
    out = []

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if k in ('expr', 'definition') and isinstance(v, str):
                    out.append(v)
                elif k == 'query' and isinstance(v, str):
                    out.append(v)
                else:
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(dash.get('panels', []))
    walk(dash.get('templating', {}))
    return out


def rule_exprs(rules):
    return [r['expr'] for g in rules['groups'] for r in g['rules']]


def main():
    have = served(open(sys.argv[1]).read())
    exprs = dashboard_exprs(json.load(open(sys.argv[2])))
    exprs += rule_exprs(yaml.safe_load(open(sys.argv[3])))
    names = {n for e in exprs for n in NAME.findall(e)}
    if not names:
        raise SystemExit('no metric name in the expressions: wrong files?')
    missing = sorted(n for n in names if n not in have)
    for n in missing:
        print(f'not served: {n}')
    print(f'{len(names)} names checked, {len(missing)} not served')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main())
