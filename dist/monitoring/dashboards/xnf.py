#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""xnf.py: writes the Grafana dashboard xnf.json (Grafana 9 and 10,
schemaVersion 38) on stdout, the source of that file as a mixin's jsonnet
would be:

    python3 dist/monitoring/dashboards/xnf.py >dist/monitoring/dashboards/xnf.json

Change this and run it again; selftests/monitoring.bats checks that the
two agree and that every metric a query names is one the exporter
serves. The rows are in the order an operator on call reads them:
overview, drops, NFs and CPUs, firewall, flow cache, connection tracking
and NAT, route sync, AF_XDP workers, exporter, trace and packet log.
Panels are placed left to right, 24 columns a line, a row header where a
row starts.
"""
import json

DS = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'instance=~"$instance"'
ISEL = 'instance=~"$instance",interface=~"$interface"'
RI = "[$__rate_interval]"

panels = []
pid = [0]
y = [0]
x = [0]
rowh = [0]


def nid():
    pid[0] += 1
    return pid[0]


def row(title):
    if x[0]:
        y[0] += rowh[0]
        x[0] = 0
    panels.append({"type": "row", "title": title, "collapsed": False,
                   "id": nid(), "gridPos": {"h": 1, "w": 24, "x": 0, "y": y[0]},
                   "panels": []})
    y[0] += 1
    rowh[0] = 0


def place(w, h):
    if x[0] + w > 24:
        y[0] += rowh[0]
        x[0] = 0
        rowh[0] = 0
    g = {"h": h, "w": w, "x": x[0], "y": y[0]}
    x[0] += w
    rowh[0] = max(rowh[0], h)
    return g


def targets(qs):
    out = []
    for i, (expr, legend) in enumerate(qs):
        t = {"datasource": DS, "expr": expr, "legendFormat": legend,
             "refId": chr(ord("A") + i)}
        out.append(t)
    return out


def ts(title, qs, unit="pps", w=12, h=8, desc="", stack=False, extra=None):
    p = {"type": "timeseries", "title": title, "id": nid(), "datasource": DS,
         "description": desc, "gridPos": place(w, h), "targets": targets(qs),
         "fieldConfig": {"defaults": {"unit": unit, "min": 0,
                                      "custom": {"fillOpacity": 10,
                                                 "showPoints": "never",
                                                 "stacking": {"mode": "normal" if stack else "none", "group": "A"}}},
                         "overrides": []},
         "options": {"legend": {"displayMode": "table", "placement": "bottom",
                                "calcs": ["mean", "max", "lastNotNull"]},
                     "tooltip": {"mode": "multi", "sort": "desc"}}}
    if extra:
        p.update(extra)
    panels.append(p)


def stat(title, qs, unit="none", w=4, h=4, desc="", mappings=None, thresholds=None):
    d = {"unit": unit}
    if mappings:
        d["mappings"] = mappings
    if thresholds:
        d["thresholds"] = {"mode": "absolute", "steps": thresholds}
        d["color"] = {"mode": "thresholds"}
    panels.append({"type": "stat", "title": title, "id": nid(), "datasource": DS,
                   "description": desc, "gridPos": place(w, h), "targets": targets(qs),
                   "fieldConfig": {"defaults": d, "overrides": []},
                   "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                               "colorMode": "background", "graphMode": "area", "textMode": "auto",
                               "justifyMode": "auto", "orientation": "auto"}})


def table(title, qs, w=12, h=8, desc="", unit="pps"):
    t = targets(qs)
    for q in t:
        q["format"] = "table"
        q["instant"] = True
    panels.append({"type": "table", "title": title, "id": nid(), "datasource": DS,
                   "description": desc, "gridPos": place(w, h), "targets": t,
                   "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                   "options": {"showHeader": True, "sortBy": [{"displayName": "Value", "desc": True}]},
                   "transformations": [{"id": "organize", "options": {"excludeByName": {"Time": True}}}]})


def heatmap(title, expr, w=12, h=8, desc=""):
    panels.append({"type": "heatmap", "title": title, "id": nid(), "datasource": DS,
                   "description": desc, "gridPos": place(w, h),
                   "targets": [{"datasource": DS, "expr": expr, "format": "heatmap",
                                "legendFormat": "{{le}}", "refId": "A"}],
                   "options": {"calculate": False, "yAxis": {"unit": "none"},
                               "cellGap": 1, "color": {"mode": "scheme", "scheme": "Oranges"},
                               "tooltip": {"show": True, "yHistogram": True}},
                   "fieldConfig": {"defaults": {}, "overrides": []}})


UPMAP = [{"type": "value", "options": {"0": {"text": "down", "color": "red"},
                                       "1": {"text": "up", "color": "green"}}}]
RED0 = [{"color": "green", "value": None}, {"color": "red", "value": 1e-9}]

# ---------------------------------------------------------------- overview
row("Overview")
stat("Instance", [(f"xnf_up{{{SEL}}}", "{{instance}}")], mappings=UPMAP,
     thresholds=[{"color": "red", "value": None}, {"color": "green", "value": 1}],
     desc="xnf_up: 1 when the exporter could read the xnf instance, 0 when there is none.")
stat("Forwarded", [(f'sum(rate(xnf_nf_redirected_packets_total{{{ISEL},nf="chain"}}{RI}))', "")],
     unit="pps", desc="Packets the chains redirected to an egress port: what XDP forwarded.")
stat("Passed to the kernel", [(f'sum(rate(xnf_nf_passed_packets_total{{{ISEL},nf="chain"}}{RI}))', "")],
     unit="pps", desc="Packets the chains left to the kernel's stack.")
stat("Dropped", [(f'sum(rate(xnf_nf_dropped_packets_total{{{ISEL},nf="chain"}}{RI}))', "")],
     unit="pps", desc="Packets the chains dropped, for any reason (policy included).")
stat("Lost after redirect", [(f'sum(rate(xnf_redirect_errors_total{{{ISEL}}}{RI})) + sum(rate(xnf_xmit_dropped_packets_total{{{ISEL}}}{RI}))', "")],
     unit="pps", thresholds=RED0,
     desc="Frames xnf redirected that the egress did not send: redirect errors and the driver's transmit drops. In no drop reason.")
stat("Attached interfaces", [(f"count(xnf_interface_info{{{ISEL}}})", "")],
     desc="Interfaces xnf is attached to (xnf_interface_info).")
ts("Packets by verdict", [
    (f'sum by (interface) (rate(xnf_nf_received_packets_total{{{ISEL},nf="chain"}}{RI}))', "{{interface}} received"),
    (f'sum by (interface) (rate(xnf_nf_redirected_packets_total{{{ISEL},nf="chain"}}{RI}))', "{{interface}} forwarded"),
    (f'sum by (interface) (rate(xnf_nf_passed_packets_total{{{ISEL},nf="chain"}}{RI}))', "{{interface}} passed"),
    (f'sum by (interface) (rate(xnf_nf_dropped_packets_total{{{ISEL},nf="chain"}}{RI}))', "{{interface}} dropped"),
], desc="Each interface's chain: what entered it and what it did (forwarded: redirected to an egress port).")
ts("Throughput by verdict", [
    (f'8 * sum by (interface) (rate(xnf_nf_received_bytes_total{{{ISEL},nf="chain"}}{RI}))', "{{interface}} received"),
    (f'8 * sum by (interface) (rate(xnf_nf_redirected_bytes_total{{{ISEL},nf="chain"}}{RI}))', "{{interface}} forwarded"),
    (f'8 * sum by (interface) (rate(xnf_nf_passed_bytes_total{{{ISEL},nf="chain"}}{RI}))', "{{interface}} passed"),
    (f'8 * sum by (interface) (rate(xnf_nf_dropped_bytes_total{{{ISEL},nf="chain"}}{RI}))', "{{interface}} dropped"),
], unit="bps")

# ---------------------------------------------------------------- drops
row("Drops and passes")
ts("Dropped by reason", [
    (f"sum by (reason) (rate(xnf_dropped_packets_total{{{ISEL}}}{RI})) > 0", "{{reason}}")],
    desc="fw_deny (a firewall rule or the default policy) and blackhole are policy; the others are packets xnf could not forward.")
ts("Dropped by interface", [
    (f"sum by (interface) (rate(xnf_dropped_packets_total{{{ISEL}}}{RI})) > 0", "{{interface}}")])
ts("Passed to the kernel by reason", [
    (f"sum by (reason) (rate(xnf_kernel_passed_packets_total{{{ISEL}}}{RI})) > 0", "{{reason}}")],
    desc="Why packets went to the kernel's stack: no_route (the kernel answers ICMP unreachable), local (the router's own), not_ip (ARP...), no_neigh (the kernel resolves it), ttl_expired, frag_needed...")
ts("Dropped bytes by reason", [
    (f"8 * sum by (reason) (rate(xnf_dropped_bytes_total{{{ISEL}}}{RI})) > 0", "{{reason}}"),
    (f"8 * sum by (reason) (rate(xnf_kernel_passed_bytes_total{{{ISEL}}}{RI})) > 0", "passed {{reason}}")], unit="bps")
ts("Losses after redirect, by egress", [
    (f"sum by (interface) (rate(xnf_redirect_errors_total{{{ISEL}}}{RI}))", "{{interface}} redirect errors"),
    (f"sum by (interface) (rate(xnf_xmit_dropped_packets_total{{{ISEL}}}{RI}))", "{{interface}} xmit drops")],
    desc="Frames lost after the XDP verdict: the redirect failed (xdp:xdp_redirect_err) or the egress driver refused them (xdp:xdp_devmap_xmit). Alert XnfLossesAfterRedirect.")
ts("Sent by egress", [
    (f"sum by (interface) (rate(xnf_xmit_sent_packets_total{{{ISEL}}}{RI}))", "{{interface}}")],
    desc="Redirected frames each egress driver took.")
ts("Tail-call misses", [
    (f"sum by (interface, slot) (rate(xnf_tail_call_misses_total{{{ISEL}}}{RI}))", "{{interface}} slot {{slot}}")],
    desc="A chain slot without a program: the chain fails closed and drops (reason tail_call). Alert XnfTailCallMisses.")

# ---------------------------------------------------------------- NFs, CPUs
row("NFs and CPUs")
ts("Received by NF", [
    (f'sum by (interface, nf) (rate(xnf_nf_received_packets_total{{{ISEL},nf!="chain"}}{RI}))', "{{interface}} {{nf}}")],
    desc="Packets that entered each NF of the chains.")
ts("Verdicts by NF", [
    (f'sum by (nf) (rate(xnf_nf_redirected_packets_total{{{ISEL},nf!="chain"}}{RI})) > 0', "{{nf}} redirected"),
    (f'sum by (nf) (rate(xnf_nf_passed_packets_total{{{ISEL},nf!="chain"}}{RI})) > 0', "{{nf}} passed"),
    (f'sum by (nf) (rate(xnf_nf_dropped_packets_total{{{ISEL},nf!="chain"}}{RI})) > 0', "{{nf}} dropped")],
    desc="What each NF decided: redirected, passed to the kernel, dropped (the rest went on to the next NF).")
ts("Received by CPU", [
    (f"sum by (cpu) (rate(xnf_cpu_received_packets_total{{{ISEL}}}{RI}))", "cpu {{cpu}}")],
    stack=True, desc="Packets the chains received, by the CPU that ran them: RSS spread and hot CPUs.")
ts("NAPI poll time", [
    (f"sum by (interface) (rate(xnf_napi_poll_seconds_total{{{ISEL}}}{RI})) / sum by (interface) (rate(xnf_napi_timed_polls_total{{{ISEL}}}{RI}))", "{{interface}} per poll"),
    ], unit="s", desc="Average time of a NAPI poll that ran xnf, from its first packet to its end.")
ts("NAPI batch size", [
    (f"histogram_quantile(0.5, sum by (interface, le) (rate(xnf_napi_batch_size_packets_bucket{{{ISEL}}}{RI})))", "{{interface}} p50"),
    (f"histogram_quantile(0.99, sum by (interface, le) (rate(xnf_napi_batch_size_packets_bucket{{{ISEL}}}{RI})))", "{{interface}} p99"),
    (f"sum by (interface) (rate(xnf_napi_batch_size_packets_sum{{{ISEL}}}{RI})) / sum by (interface) (rate(xnf_napi_batch_size_packets_count{{{ISEL}}}{RI}))", "{{interface}} mean")],
    unit="none", desc="Packets per NAPI poll: 64 is NAPI's budget, a poll that had more waiting. Batches near 64 mean the CPU is saturated.")
heatmap("NAPI batch size distribution",
        f"sum by (le) (rate(xnf_napi_batch_size_packets_bucket{{{ISEL}}}{RI}))")

# ---------------------------------------------------------------- firewall
row("Firewall")
table("Top rules", [
    (f"topk(10, sum by (prio, rule) (rate(xnf_fw_rule_matched_packets_total{{{SEL}}}{RI})))", "")],
    desc="The ten rules that match most, over the dashboard's interval.")
ts("Rule hits", [
    (f"topk(10, sum by (prio, rule) (rate(xnf_fw_rule_matched_packets_total{{{SEL}}}{RI}))) > 0", "{{prio}}: {{rule}}")])
ts("Default policy hits", [
    (f"sum by (policy) (rate(xnf_fw_default_matched_packets_total{{{SEL}}}{RI}))", "default {{policy}}")],
    desc="Packets no rule matched: the default policy decided.")
stat("Rules", [(f"sum(xnf_fw_rules{{{SEL}}})", "")], desc="Rules of the active rule set.")

# ---------------------------------------------------------------- flow cache
row("Flow cache")
ts("Flow-cache hit rate by NF", [
    (f"sum by (nf) (rate(xnf_flow_cache_hits_total{{{ISEL}}}{RI})) / (sum by (nf) (rate(xnf_flow_cache_hits_total{{{ISEL}}}{RI})) + sum by (nf) (rate(xnf_flow_cache_misses_total{{{ISEL}}}{RI})))", "{{nf}}")],
    unit="percentunit", desc="Lookups each caching NF found in the flow cache.")
ts("Flow-cache lookups by NF", [
    (f"sum by (nf) (rate(xnf_flow_cache_hits_total{{{ISEL}}}{RI}))", "{{nf}} hits"),
    (f"sum by (nf) (rate(xnf_flow_cache_misses_total{{{ISEL}}}{RI}))", "{{nf}} misses")])

# ---------------------------------------------------------------- conntrack
row("Connection tracking and NAT")
ts("Connection table", [
    (f"sum by (instance) (xnf_ct_entries{{{SEL}}})", "{{instance}} entries"),
    (f"sum by (instance) (xnf_ct_aliases{{{SEL}}})", "{{instance}} aliases"),
    (f"sum by (instance) (xnf_ct_max{{{SEL}}})", "{{instance}} max")],
    unit="short", desc="Live connections, the second entries of translated ones (aliases) and the table's size (ct_max). Alert XnfConntrackTableNearlyFull at 90%.")
ts("Connection table fill", [
    (f"(xnf_ct_entries{{{SEL}}} + xnf_ct_aliases{{{SEL}}}) / xnf_ct_max{{{SEL}}}", "{{instance}}")],
    unit="percentunit", extra={"fieldConfig": {"defaults": {"unit": "percentunit", "min": 0, "max": 1,
        "thresholds": {"mode": "absolute", "steps": [{"color": "green", "value": None}, {"color": "red", "value": 0.9}]},
        "custom": {"thresholdsStyle": {"mode": "line"}, "showPoints": "never"}}, "overrides": []}})
ts("Connections", [
    (f"sum(rate(xnf_ct_created_total{{{SEL}}}{RI}))", "created"),
    (f"sum(rate(xnf_ct_expired_total{{{SEL}}}{RI}))", "expired"),
    (f"sum(rate(xnf_ct_deleted_total{{{SEL}}}{RI}))", "deleted"),
    (f"sum(rate(xnf_ct_flushed_total{{{SEL}}}{RI}))", "flushed"),
    (f"sum(rate(xnf_ct_evicted_total{{{SEL}}}{RI}))", "evicted")],
    unit="ops", desc="Connections entered and left: evicted ones were taken by the full table (alert XnfConntrackEvicting).")
ts("Conntrack problems", [
    (f"sum(rate(xnf_ct_insert_failed_total{{{SEL}}}{RI}))", "insert failed"),
    (f"sum(rate(xnf_ct_invalid_total{{{SEL}}}{RI}))", "invalid"),
    (f"sum(rate(xnf_ct_related_total{{{SEL}}}{RI}))", "related ICMP")], unit="pps")
ts("Conntrack lookups", [
    (f"sum(rate(xnf_ct_searched_total{{{SEL}}}{RI}))", "searched"),
    (f"sum(rate(xnf_ct_found_total{{{SEL}}}{RI}))", "found")], unit="ops")
ts("NAT", [
    (f"sum(rate(xnf_ct_nat_created_total{{{SEL}}}{RI}))", "translated connections"),
    (f"sum(rate(xnf_ct_nat_retries_total{{{SEL}}}{RI}))", "port retries"),
    (f"sum(rate(xnf_ct_nat_no_port_total{{{SEL}}}{RI}))", "no free port"),
    (f"sum(rate(xnf_ct_nat_no_addr_total{{{SEL}}}{RI}))", "no address"),
    (f"sum(rate(xnf_ct_nat_clash_total{{{SEL}}}{RI}))", "clash")],
    unit="ops", desc="Translations made and refused: no free port (alert XnfNatPortExhaustion), no address on the egress (XnfNatNoAddress), another CPU's clash.")

# ---------------------------------------------------------------- route sync
row("Route sync")
stat("Route sync", [(f"xnf_route_sync_running{{{SEL}}}", "table {{table}}")], mappings=UPMAP,
     thresholds=[{"color": "red", "value": None}, {"color": "green", "value": 1}],
     desc="Whether the route sync that owns xnf's route tables runs (no value: no sync owns them). Alert XnfRouteSyncStopped.")
stat("Route sync uptime", [(f"time() - xnf_route_sync_start_time_seconds{{{SEL}}}", "table {{table}}")], unit="s")
stat("Since the last route change", [(f"time() - xnf_route_sync_last_change_timestamp_seconds{{{SEL}}}", "table {{table}}")],
     unit="s", desc="Time since the route sync last changed xnf's tables (a batch of routes, a next hop after its neighbour): how long the routes have been stable.")
ts("Route sync changes", [
    (f"changes(xnf_route_sync_last_change_timestamp_seconds{{{SEL}}}[$__interval])", "table {{table}}")],
    unit="short", w=12, desc="Times the route sync changed the tables (at most one per scrape interval counted): churn, and whether the sync converged (no changes).")

# ---------------------------------------------------------------- workers
row("AF_XDP workers")
ts("Workers up", [(f"xnf_worker_up{{{ISEL}}}", "{{interface}} queue {{queue}}")], unit="none",
   extra={"fieldConfig": {"defaults": {"unit": "none", "min": 0, "max": 1, "mappings": UPMAP,
                                       "custom": {"showPoints": "never", "lineInterpolation": "stepAfter"}}, "overrides": []}})
ts("Worker packets", [
    (f"sum by (interface, queue) (rate(xnf_worker_received_packets_total{{{ISEL}}}{RI}))", "{{interface}}/{{queue}} received"),
    (f"sum by (interface, queue) (rate(xnf_worker_transmitted_packets_total{{{ISEL}}}{RI}))", "{{interface}}/{{queue}} transmitted")])
ts("Worker drops", [
    (f"sum by (interface, queue, reason) (rate(xnf_worker_dropped_packets_total{{{ISEL}}}{RI})) > 0", "{{interface}}/{{queue}} {{reason}}"),
    (f"sum by (interface, queue, reason) (rate(xnf_worker_nf_dropped_packets_total{{{ISEL}}}{RI})) > 0", "{{interface}}/{{queue}} NF {{reason}}")])
ts("Worker ring problems", [
    (f"sum by (interface, queue) (rate(xnf_worker_fill_short_total{{{ISEL}}}{RI}))", "{{interface}}/{{queue}} fill short"),
    (f"sum by (interface, queue) (rate(xnf_worker_xsk_rx_dropped_total{{{ISEL}}}{RI}))", "{{interface}}/{{queue}} rx dropped"),
    (f"sum by (interface, queue) (rate(xnf_worker_xsk_rx_ring_full_total{{{ISEL}}}{RI}))", "{{interface}}/{{queue}} rx ring full"),
    (f"sum by (interface, queue) (rate(xnf_worker_xsk_rx_fill_ring_empty_descs_total{{{ISEL}}}{RI}))", "{{interface}}/{{queue}} fill ring empty"),
    (f"sum by (interface, queue) (rate(xnf_worker_xsk_tx_ring_empty_descs_total{{{ISEL}}}{RI}))", "{{interface}}/{{queue}} tx ring empty"),
    (f"sum by (interface, queue) (rate(xnf_worker_xsk_rx_invalid_descs_total{{{ISEL}}}{RI}) + rate(xnf_worker_xsk_tx_invalid_descs_total{{{ISEL}}}{RI}))", "{{interface}}/{{queue}} invalid descs")],
    unit="ops", desc="The kernel's XDP socket statistics and the worker's own: frames lost because a ring was full or the fill ring empty.")
ts("Worker busy", [
    (f"sum by (interface, queue) (rate(xnf_worker_busy_seconds_total{{{ISEL}}}{RI})) / (sum by (interface, queue) (rate(xnf_worker_busy_seconds_total{{{ISEL}}}{RI})) + sum by (interface, queue) (rate(xnf_worker_idle_seconds_total{{{ISEL}}}{RI})))", "{{interface}}/{{queue}}")],
    unit="percentunit", desc="Share of a worker's time in reads that returned packets and their work (the rest: empty reads and waiting).")
ts("Worker reads", [
    (f"sum by (interface, queue) (rate(xnf_worker_polls_total{{{ISEL}}}{RI}))", "{{interface}}/{{queue}} reads"),
    (f"sum by (interface, queue) (rate(xnf_worker_empty_polls_total{{{ISEL}}}{RI}))", "{{interface}}/{{queue}} empty"),
    (f"histogram_quantile(0.99, sum by (interface, queue, le) (rate(xnf_worker_batch_size_packets_bucket{{{ISEL}}}{RI})))", "{{interface}}/{{queue}} p99 batch")],
    unit="short")
ts("Worker UMEM frames", [
    (f"sum by (interface, queue, place) (xnf_worker_frames{{{ISEL}}})", "{{interface}}/{{queue}} {{place}}")],
    unit="short", stack=True)

# ---------------------------------------------------------------- exporter
row("Exporter")
ts("Scrape duration", [(f"xnf_exporter_scrape_duration_seconds{{{SEL}}}", "{{instance}}")], unit="s")

row("Tracing and drop logs")
ts("Traced packets", [
    (f"sum by (instance) (rate(xnf_trace_packets_total{{{SEL}}}{RI}))", "{{instance}} traced"),
    (f"sum by (instance) (rate(xnf_trace_lost_events_total{{{SEL}}}{RI}))", "{{instance}} events lost")],
    desc="Packets an armed `xnf trace` matched, and trace records the ring buffer had no room for (its reader fell behind): records lost, never packets.")
ts("Logged by rule", [
    (f"sum by (prio) (rate(xnf_fw_rule_logged_packets_total{{{SEL}}}{RI})) > 0", "prio {{prio}} logged"),
    (f"sum by (prio) (rate(xnf_fw_rule_log_suppressed_packets_total{{{SEL}}}{RI})) > 0", "prio {{prio}} suppressed")],
    desc="Packets a `log` rule logged, and those its rate limit kept out of the log.")
ts("Logged by drop reason", [
    (f"sum by (reason) (rate(xnf_reason_logged_packets_total{{{SEL}}}{RI})) > 0", "{{reason}} logged"),
    (f"sum by (reason) (rate(xnf_reason_log_suppressed_packets_total{{{SEL}}}{RI})) > 0", "{{reason}} suppressed")],
    w=24)

dash = {
    "__inputs": [],
    "annotations": {"list": [{"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
                              "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
                              "name": "Annotations & Alerts", "type": "dashboard"}]},
    "description": "xnf, the XDP dataplane: forwarding, drops, NFs, firewall, conntrack and NAT, route sync, AF_XDP workers (dist/monitoring, docs/monitoring.md)",
    "editable": True,
    "graphTooltip": 1,
    "id": None,
    "links": [],
    "panels": panels,
    "refresh": "30s",
    "schemaVersion": 38,
    "tags": ["xnf", "xdp"],
    "templating": {"list": [
        {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
         "current": {}, "hide": 0, "refresh": 1, "regex": "", "options": []},
        {"name": "instance", "label": "Instance", "type": "query", "datasource": DS,
         "query": {"query": "label_values(xnf_up, instance)", "refId": "instance"},
         "definition": "label_values(xnf_up, instance)",
         "refresh": 2, "multi": True, "includeAll": True, "current": {}, "sort": 1, "hide": 0, "options": []},
        {"name": "interface", "label": "Interface", "type": "query", "datasource": DS,
         "query": {"query": 'label_values(xnf_interface_info{instance=~"$instance"}, interface)', "refId": "interface"},
         "definition": 'label_values(xnf_interface_info{instance=~"$instance"}, interface)',
         "refresh": 2, "multi": True, "includeAll": True, "allValue": ".*", "current": {}, "sort": 1, "hide": 0, "options": []},
    ]},
    "time": {"from": "now-1h", "to": "now"},
    "timepicker": {},
    "timezone": "",
    "title": "xnf",
    "uid": "xnf-dataplane",
    "version": 1,
    "weekStart": "",
}
print(json.dumps(dash, indent=2))
