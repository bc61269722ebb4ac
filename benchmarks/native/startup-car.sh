#!/usr/bin/env bash
# The start of the car's candec (go build -tags car) against a Go hello world built the same way,
# and against the developer's build: `candec version` and a decode of a one-frame capture, each
# under `perf stat -r RUNS` (mean task-clock, page faults and wall time), with the ratio to the
# hello world. Also the size of each binary, as built and stripped (-ldflags='-s -w').
# See "The car's build" in README.md in this directory.
#
#   startup-car.sh [-n RUNS]
#
# Needs perf (perf stat; Debian: linux-perf); builds the programs from the module it sits in.
set -euo pipefail

runs=50
if [[ ${1:-} == -n ]]; then
    runs=$2
    shift 2
fi
if [[ $# -ne 0 ]] || ! [[ $runs =~ ^[1-9][0-9]*$ ]]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
command -v perf > /dev/null || { echo "startup-car.sh: no perf (Debian: apt-get install linux-perf)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d -t candec-startup-car.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The programs, each built as `go build` builds, and stripped.
mkdir "$work/hello"
cat > "$work/hello/main.go" << 'GO'
package main

import "fmt"

func main() { fmt.Println("hello") }
GO
printf 'module hello\n\ngo 1.22\n' > "$work/hello/go.mod"
(cd "$work/hello" && go build -o "$work/hello.bin" . && go build -ldflags='-s -w' -o "$work/hello.stripped" .)
(cd "$root" &&
    go build -tags car -o "$work/car.bin" ./cmd/candec &&
    go build -tags car -ldflags='-s -w' -o "$work/car.stripped" ./cmd/candec &&
    go build -o "$work/dev.bin" ./cmd/candec &&
    go build -ldflags='-s -w' -o "$work/dev.stripped" ./cmd/candec)
head -n 1 "$root/testdata/idle.log" > "$work/one.log"
dbc=$root/testdata/yukart.dbc

# perfstat NAME CMD...: perf stat -r runs of CMD (output thrown away); prints
# "faults task-clock-ms wall-ms".
perfstat() {
    local out=$work/perf.txt
    shift
    perf stat -r "$runs" -o "$out" -e task-clock,page-faults "$@" > /dev/null
    awk '/task-clock/ {tc = $1} /page-faults/ {pf = $1} /seconds time elapsed/ {w = $1 * 1000}
         END {gsub(",", "", pf); printf "%s %.2f %.2f\n", pf, tc, w}' "$out"
}

echo "perf stat -r $runs, $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| program | page faults | task-clock ms | wall ms | task-clock / hello | wall / hello |"
echo "|---|---:|---:|---:|---:|---:|"
read -r hf ht hw < <(perfstat hello "$work/hello.bin")
row() {
    local name=$1 f t w
    read -r f t w < <(perfstat "$@")
    awk -v n="$name" -v f="$f" -v t="$t" -v w="$w" -v ht="$ht" -v hw="$hw" \
        'BEGIN {printf "| %s | %s | %s | %s | %.1f× | %.1f× |\n", n, f, t, w, t / ht, w / hw}'
}
printf '| Go hello world | %s | %s | %s | 1.0× | 1.0× |\n' "$hf" "$ht" "$hw"
row "car: candec version" "$work/car.bin" version
row "car: candec decode, one frame" "$work/car.bin" decode --dbc "$dbc" "$work/one.log"
row "developer's: candec version" "$work/dev.bin" version
row "developer's: candec decode, one frame" "$work/dev.bin" decode --dbc "$dbc" "$work/one.log"

echo
echo "| binary | size | stripped |"
echo "|---|---:|---:|"
for b in hello car dev; do
    printf '| %s | %s | %s |\n' "$b" "$(stat -c %s "$work/$b.bin" | numfmt --to=iec)" "$(stat -c %s "$work/$b.stripped" | numfmt --to=iec)"
done
