#!/usr/bin/env bash
# The start of the car's candec against a Go hello world built the same way: the car's binary
# (go build ./cmd/candec-car, /usr/bin/candec in the .deb) and the developer's (./cmd/candec):
# `candec version` and a decode of a one-frame capture, each under `perf stat -r RUNS` (mean
# task-clock, page faults and wall time), with the ratio to the hello world; and the car's
# `watch -h`. Also the size of each binary, as built and stripped (-ldflags='-s -w'). With
# -k ROUNDS, each program gets ROUNDS `perf stat -r RUNS`, the rounds interleaved, and the table the
# median of their means: on a busy machine, load that comes and goes then weighs on every program
# alike. See "The car's binary" in README.md in this directory.
#
#   startup-car.sh [-n RUNS] [-k ROUNDS]
#
# Needs perf (perf stat; Debian: linux-perf); builds the programs from the module it sits in.
set -euo pipefail

runs=50
rounds=1
while [[ ${1:-} == -n || ${1:-} == -k ]] && [[ $# -ge 2 ]]; do
    case $1 in
    -n) runs=$2 ;;
    -k) rounds=$2 ;;
    esac
    shift 2
done
if [[ $# -ne 0 ]] || ! [[ $runs =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ ]]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
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
    go build -o "$work/car.bin" ./cmd/candec-car &&
    go build -ldflags='-s -w' -o "$work/car.stripped" ./cmd/candec-car &&
    go build -o "$work/dev.bin" ./cmd/candec &&
    go build -ldflags='-s -w' -o "$work/dev.stripped" ./cmd/candec)
head -n 1 "$root/testdata/idle.log" > "$work/one.log"
dbc=$root/testdata/yukart.dbc

# perfstat CMD...: perf stat -r runs of CMD (output thrown away); prints
# "faults task-clock-ms wall-ms".
perfstat() {
    local out=$work/perf.txt
    perf stat -r "$runs" -o "$out" -e task-clock,page-faults "$@" > /dev/null
    awk '/task-clock/ {tc = $1} /page-faults/ {pf = $1} /seconds time elapsed/ {w = $1 * 1000}
         END {gsub(",", "", pf); printf "%s %.2f %.2f\n", pf, tc, w}' "$out"
}

# The rows: a name, then the command.
names=() cmds=()
add() {
    names+=("$1")
    shift
    cmds+=("$(printf '%q ' "$@")")
}
add "Go hello world" "$work/hello.bin"
add "car: candec version" "$work/car.bin" version
add "car: candec decode, one frame" "$work/car.bin" decode --dbc "$dbc" "$work/one.log"
add "car: candec watch -h" "$work/car.bin" watch -h
add "developer's: candec version" "$work/dev.bin" version
add "developer's: candec decode, one frame" "$work/dev.bin" decode --dbc "$dbc" "$work/one.log"

# Each round runs every row once; row i's results go to $work/row.i.
load=$(cut -d' ' -f1 /proc/loadavg)
for ((r = 0; r < rounds; r++)); do
    for i in "${!names[@]}"; do
        eval "perfstat ${cmds[i]}" >> "$work/row.$i"
    done
done
echo "perf stat -r $runs, $rounds round(s) interleaved (median of the rounds' means), $(nproc) CPUs, load average $load at the start, $(cut -d' ' -f1 /proc/loadavg) at the end"
echo

# median FILE COLUMN: the median of a column of numbers.
median() {
    sort -n -k "$2,$2" "$1" | awk -v c="$2" '{v[NR] = $c} END {printf "%s", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
echo "| program | page faults | task-clock ms | wall ms | task-clock / hello | wall / hello |"
echo "|---|---:|---:|---:|---:|---:|"
ht=$(median "$work/row.0" 2) hw=$(median "$work/row.0" 3)
for i in "${!names[@]}"; do
    awk -v n="${names[i]}" -v f="$(median "$work/row.$i" 1)" -v t="$(median "$work/row.$i" 2)" -v w="$(median "$work/row.$i" 3)" -v ht="$ht" -v hw="$hw" \
        'BEGIN {printf "| %s | %d | %.2f | %.2f | %.1f× | %.1f× |\n", n, f, t, w, t / ht, w / hw}'
done

echo
echo "| binary | size | stripped |"
echo "|---|---:|---:|"
for b in hello car dev; do
    printf '| %s | %s | %s |\n' "$b" "$(stat -c %s "$work/$b.bin" | numfmt --to=iec)" "$(stat -c %s "$work/$b.stripped" | numfmt --to=iec)"
done
