#!/usr/bin/env bash
# Takes candec's start apart: what a minor page fault costs on this machine, and the page faults
# and time of programs that do nothing but link one of candec's packages or dependencies.
# See "Start-up" in README.md in this directory.
#
#   startup.sh [-n RUNS] CANDEC DBCPPP_DECODE REALDATA_DIR
#
# REALDATA_DIR is as for compare.sh: the start of a decode is timed on the first frame of the RAV4
# log's powertrain bus with its DBC.
#
# Needs perf (perf stat) and a C compiler; builds the Go programs from the module it sits in.
set -euo pipefail

runs=20
if [[ ${1:-} == -n ]]; then
    runs=$2
    shift 2
fi
if [[ $# -ne 3 ]]; then
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
if ! [[ $runs =~ ^[1-9][0-9]*$ ]]; then
    echo "startup.sh: -n $runs: want a number of runs of 1 or more" >&2
    exit 2
fi
for exe in "$1" "$2"; do
    [[ -f $exe && -x $exe ]] || { echo "startup.sh: $exe: no such program" >&2; exit 2; }
done
[[ -f $3/logs/rav4_2017_highway_1min.log ]] || { echo "startup.sh: $3: no logs/rav4_2017_highway_1min.log" >&2; exit 2; }
candec=$(realpath "$1")
native=$(realpath "$2")
data=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d -t candec-startup.XXXXXX)
gen=$(mktemp -d "$root/.startup.XXXXXX") # inside the module, so that its packages resolve
trap 'rm -rf "$work" "$gen"' EXIT

# A minor fault on fresh anonymous memory, timed in C.
cat > "$work/touch.c" << 'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    char *p = mmap(0, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) p[i * 4096] = 1;
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.2f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / n);
    return 0;
}
EOF
cc -O2 -o "$work/touch" "$work/touch.c"
costs=()
for _ in 1 2 3 4 5; do costs+=("$("$work/touch" 20000)"); done
echo "minor page fault, 20,000 fresh pages, 5 runs: $(printf '%s ' "${costs[@]}")µs a fault"
echo

# One program per import: main does nothing but print.
build() { # name import-path
    mkdir -p "$gen/$1"
    printf 'package main\n\nimport (\n\t"os"\n\n\t_ "%s"\n)\n\nfunc main() { os.Stdout.WriteString("hi\\n") }\n' "$2" > "$gen/$1/main.go"
    (cd "$root" && go build -o "$work/$1" "./$(basename "$gen")/$1")
}
mkdir -p "$gen/hello"
printf 'package main\n\nimport "os"\n\nfunc main() { os.Stdout.WriteString("hi\\n") }\n' > "$gen/hello/main.go"
(cd "$root" && go build -o "$work/hello" "./$(basename "$gen")/hello")
build decoder github.com/yukart/candec/decoder
build pipeline github.com/yukart/candec/pipeline
build parquet-go github.com/parquet-go/parquet-go
build lake github.com/yukart/candec/internal/fleet/lake
build decodejob github.com/yukart/candec/internal/cmdkit/decodejob
build plot gonum.org/v1/plot
build broker github.com/yukart/candec/internal/lab/broker
build prometheus github.com/prometheus/client_golang/prometheus

row() { # label command...
    local out
    out=$(perf stat -r "$runs" -x, -e page-faults,task-clock "${@:2}" 2>&1 > /dev/null)
    local faults cpu
    faults=$(awk -F, '$3 == "page-faults" {printf "%.0f", $1}' <<< "$out")
    cpu=$(awk -F, '$3 == "task-clock" {printf "%.1f", $1}' <<< "$out")
    local wall
    wall=$(python3 - "${@:2}" << 'EOF'
import statistics, subprocess, sys, time
ts = []
for _ in range(int(__import__("os").environ["RUNS"])):
    t = time.perf_counter()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ts.append(time.perf_counter() - t)
print(f"{statistics.median(ts) * 1000:.1f}")
EOF
)
    printf '| %s | %s | %s | %s |\n' "$1" "$faults" "$cpu" "$wall"
}
export RUNS=$runs
echo "| program | page faults | task-clock ms | median wall ms |"
echo "|---|---:|---:|---:|"
row "Go hello-world" "$work/hello"
for p in decoder pipeline prometheus parquet-go lake decodejob plot broker; do
    row "links only $p" "$work/$p"
done
row "candec version" "$candec" version
pt_dbc=$data/dbc/toyota_new_mc_pt_generated.dbc
grep -m1 ' can0 ' "$data/logs/rav4_2017_highway_1min.log" > "$work/one.log"
python3 "$here/dbc_order.py" "$pt_dbc" "$work/pt.dbc"
row "candec decode, one frame" "$candec" decode --dbc "can0=$pt_dbc" "$work/one.log"
row "dbcppp-decode, one frame" "$native" --dbc "can0=$work/pt.dbc" "$work/one.log"
