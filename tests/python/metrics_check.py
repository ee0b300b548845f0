"""metrics_check.py -- reads a cudarem server's /metrics with prometheus_client's
own parser and checks what an operator's dashboards rely on.

usage: metrics_check.py URL USER

Checks: the text parses; every family cudarem documents is there with its type;
the device has its DCGM names and labels, its memory total positive and used +
free = total; a session of USER is listed with calls and bytes in and out, and
holds device memory; the call-time histogram's buckets grow with their bounds and
end in +Inf equal to its count; another path is 404. Prints "PASS metrics_check" or raises.
"""
import sys
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

EXPECTED = {
    "DCGM_FI_DEV_FB_TOTAL": "gauge", "DCGM_FI_DEV_FB_USED": "gauge", "DCGM_FI_DEV_FB_FREE": "gauge",
    "DCGM_FI_DEV_GPU_UTIL": "gauge", "DCGM_FI_DEV_MEM_COPY_UTIL": "gauge",
    "cudarem_device_sessions": "gauge", "cudarem_sessions": "gauge",
    "cudarem_session_calls": "counter", "cudarem_session_bytes_in": "counter",
    "cudarem_session_bytes_out": "counter", "cudarem_session_memory_used_bytes": "gauge",
    "cudarem_session_kernel_seconds": "counter", "cudarem_session_start_time_seconds": "gauge",
    "cudarem_sessions_admitted": "counter", "cudarem_sessions_refused": "counter",
    "cudarem_auth_failures": "counter", "cudarem_sessions_ended_by_admin": "counter",
    "cudarem_server_start_time_seconds": "gauge", "cudarem_server_info": "gauge",
    "cudarem_call_duration_seconds": "histogram",
}


def main():
    url, user = sys.argv[1], sys.argv[2]
    with urllib.request.urlopen(url, timeout=20) as r:
        ctype = r.headers.get("Content-Type", "")
        text = r.read().decode("utf-8")
    assert ctype.startswith("text/plain") and "version=0.0.4" in ctype, ctype
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    for name, kind in EXPECTED.items():
        assert name in fams, "missing family %s (have %s)" % (name, sorted(fams))
        assert fams[name].type == kind, "%s is %s, not %s" % (name, fams[name].type, kind)

    def one(name, **labels):
        got = [s for s in fams[name].samples if all(s.labels.get(k) == v for k, v in labels.items())]
        assert len(got) == 1, "%s%s: %d samples" % (name, labels, len(got))
        return got[0]

    dev = one("DCGM_FI_DEV_FB_TOTAL", gpu="0")
    assert dev.value > 0 and dev.labels["modelName"] and "Hostname" in dev.labels, dev
    used, free = one("DCGM_FI_DEV_FB_USED", gpu="0").value, one("DCGM_FI_DEV_FB_FREE", gpu="0").value
    assert used >= 1 and abs(used + free - dev.value) < 1e-6, (used, free, dev.value)

    calls = one("cudarem_session_calls", user=user)
    assert calls.name == "cudarem_session_calls_total" and calls.value > 0, calls
    session = calls.labels["session"]
    assert one("cudarem_session_bytes_in", session=session).value > 0
    assert one("cudarem_session_bytes_out", session=session).value > 0
    assert one("cudarem_session_memory_used_bytes", session=session).value >= 1 << 20
    assert one("cudarem_sessions").value >= 1
    assert one("cudarem_sessions_admitted").value >= 1
    assert one("cudarem_server_info").labels["backend"] == "emu"

    hist = fams["cudarem_call_duration_seconds"].samples
    buckets = [s for s in hist if s.name.endswith("_bucket")]
    bounds = [float(s.labels["le"]) for s in buckets]
    counts = [s.value for s in buckets]
    assert bounds == sorted(bounds) and bounds[-1] == float("inf"), bounds
    assert counts == sorted(counts), counts
    count = [s.value for s in hist if s.name.endswith("_count")][0]
    total = [s.value for s in hist if s.name.endswith("_sum")][0]
    assert counts[-1] == count > 0 and total > 0, (counts, count, total)
    try:
        urllib.request.urlopen(url.replace("/metrics", "/elsewhere"), timeout=20)
        raise AssertionError("a path other than /metrics was served")
    except urllib.error.HTTPError as e:
        assert e.code == 404, e.code
    print("PASS metrics_check")


if __name__ == "__main__":
    main()
