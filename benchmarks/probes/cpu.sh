#!/usr/bin/env bash
# Measures the decoder's CPU and system calls per envelope in one bench scenario, beside the bench's
# own figures. See README.md in this directory.
#
#   cpu.sh [-s SECONDS] CANDEC SCENARIO
#
# Runs `CANDEC bench --profile SCENARIO --no-results`, finds the decoder it starts, and after the
# warm-up measures it twice for SECONDS each (default 8): first its CPU alone (/proc/PID/stat, no
# tracer attached), then its system calls (strace -c -f). Envelopes come from the decoder's own
# candec_envelopes_published_total. PERF=1 adds a perf profile of a third window (perf record -g).
# KEEP=1 keeps the work directory (bench output, strace and perf files) and prints where it is.
set -euo pipefail

secs=8
if [[ ${1:-} == -s ]]; then
    secs=$2
    shift 2
fi
if [[ $# -ne 2 ]]; then
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
if ! [[ $secs =~ ^[1-9][0-9]*$ ]]; then
    echo "cpu.sh: -s $secs: want a whole number of seconds, 1 or more" >&2
    exit 2
fi
[[ -f $1 && -x $1 ]] || { echo "cpu.sh: $1: no such program" >&2; exit 2; }
for tool in strace curl; do
    command -v "$tool" >/dev/null || { echo "cpu.sh: $tool not found on PATH" >&2; exit 2; }
done
candec=$(realpath "$1")
scenario=$2
work=$(mktemp -d -t candec-probe.XXXXXX)
if [[ -n ${KEEP:-} ]]; then
    echo "cpu.sh: work directory $work" >&2
else
    trap 'rm -rf "$work"' EXIT
fi

windows=2
[[ -n ${PERF:-} ]] && windows=3
warmup=3
duration=$((windows * secs + 4))
"$candec" bench --profile "$scenario" --no-results --duration "${duration}s" --warmup "${warmup}s" \
    >"$work/bench.out" 2>&1 &
bench=$!

# The decoder is the bench's child started as `candec run … --client-id …-decoder`.
decoder=
for _ in $(seq 600); do
    for c in $(cat /proc/"$bench"/task/*/children 2>/dev/null); do
        if tr '\0' ' ' </proc/"$c"/cmdline 2>/dev/null | grep -q -- ' run .*-decoder'; then
            decoder=$c
        fi
    done
    [[ -n $decoder ]] && break
    kill -0 "$bench" 2>/dev/null || break
    sleep 0.1
done
if [[ -z $decoder ]]; then
    echo "cpu.sh: the bench started no decoder" >&2
    cat "$work/bench.out" >&2
    exit 1
fi
metrics=$(tr '\0' '\n' </proc/"$decoder"/cmdline | grep -A1 -- '^--metrics-addr$' | tail -1)
hz=$(getconf CLK_TCK)

# ticks prints the decoder's utime+stime in clock ticks.
ticks() { awk '{print $14 + $15}' /proc/"$decoder"/stat; }
# published prints the decoder's envelopes published so far: signal envelopes and window messages.
published() {
    curl -s "http://$metrics/metrics" | awk '
        /^candec_envelopes_published_total/ { if ($0 ~ /kind="window"/) w += $NF; else e += $NF }
        END { printf "%d %d\n", e, w }'
}

# Wait for the bench's readiness gate and warm-up: envelopes flowing, then the warm-up.
until [[ $(published | awk '{print $1 + $2}') -gt 0 ]]; do
    kill -0 "$bench" 2>/dev/null || { cat "$work/bench.out" >&2; exit 1; }
    sleep 0.2
done
sleep $((warmup + 1))

read -r e0 w0 < <(published)
t0=$(ticks)
sleep "$secs"
t1=$(ticks)
read -r e1 w1 < <(published)

read -r e2 w2 < <(published)
timeout -s INT "$((secs))" strace -c -f -q -o "$work/strace.txt" -p "$decoder" || true
read -r e3 w3 < <(published)

if [[ -n ${PERF:-} ]]; then
    perf record -q -g -o "$work/perf.data" -p "$decoder" -- sleep "$secs" >/dev/null 2>&1 || true
    perf report -i "$work/perf.data" --no-children --stdio --sort symbol 2>/dev/null |
        grep -E '^ +[0-9]' | head -40 >"$work/perf.txt" || true
fi
wait "$bench" || true

calls=$(awk '$NF == "total" {print $4}' "$work/strace.txt")
awk -v s="$secs" -v hz="$hz" -v t="$((t1 - t0))" -v e="$((e1 - e0))" -v w="$((w1 - w0))" \
    -v c="${calls:-0}" -v se="$((e3 - e2))" -v sw="$((w3 - w2))" -v name="$scenario" 'BEGIN {
    cpu = t / hz; n = e + w; sn = se + sw
    printf "%s: %.0f envelopes/s (%.0f window messages/s), decoder CPU %.1f %% of a core, %.1f µs/envelope\n",
        name, e / s, w / s, 100 * cpu / s, n ? 1e6 * cpu / n : 0
    printf "%s: %d system calls for %d envelopes under strace: %.2f system calls/envelope\n",
        name, c, sn, sn ? c / sn : 0
}'
echo "system calls (strace -c -f, top 8):"
awk '/^-/ {n++; next} n == 1 && NF >= 5 {print "  " $NF, $4}' "$work/strace.txt" | sort -k2 -nr | head -8
echo "bench (its own figures over the whole run):"
result=$(grep '^{"scenario"' "$work/bench.out" | tail -1)
if [[ -z $result ]]; then
    tail -5 "$work/bench.out" | sed 's/^/  /'
else
    for field in '"cpu_pct":{[^}]*}' '"latency_ms":{"raw":{[^}]*},"envelopes":{[^}]*}' '"raw_lost":[0-9]*' \
        '"envelopes_lost":[0-9]*' '"envelopes_per_s":[0-9.]*' '"broker_us_per_message":[0-9.]*' '"warnings":\[[^]]*\]'; do
        grep -o "$field" <<<"$result" | sed 's/^/  /' || true
    done
fi
if [[ -n ${PERF:-} ]]; then
    echo "perf (self, top 40):"
    sed 's/^/  /' "$work/perf.txt"
fi
