#!/usr/bin/env bash
# Times `candec decode` against dbcppp-decode (a native C++ decoder on dbcppp 3.x) on the RAV4 log,
# after checking that both write the same values. See README.md in this directory.
#
#   compare.sh [-n ROUNDS] CANDEC DBCPPP_DECODE REALDATA_DIR
#
# REALDATA_DIR holds logs/rav4_2017_highway_1min.log and dbc/ (the project's real-data folder).
# DBCPPP_CLI=path/to/dbcppp adds dbcppp's own command-line decoder to the timing.
# KEEP=1 keeps the work directory (inputs, outputs) and prints where it is.
set -euo pipefail

rounds=7
if [[ ${1:-} == -n ]]; then
    rounds=$2
    shift 2
fi
if [[ $# -ne 3 ]]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
    echo "compare.sh: -n $rounds: want a number of rounds of 1 or more" >&2
    exit 2
fi
for exe in "$1" "$2" ${DBCPPP_CLI:+"$DBCPPP_CLI"}; do
    [[ -f $exe && -x $exe ]] || { echo "compare.sh: $exe: no such program" >&2; exit 2; }
done
candec=$(realpath "$1")
native=$(realpath "$2")
data=$(realpath "$3")
cli=${DBCPPP_CLI:+$(realpath "$DBCPPP_CLI")}
here=$(cd "$(dirname "$0")" && pwd)
log=$data/logs/rav4_2017_highway_1min.log
pt_dbc=$data/dbc/toyota_new_mc_pt_generated.dbc
adas_dbc=$data/dbc/toyota_adas.dbc
for f in "$log" "$pt_dbc" "$adas_dbc"; do
    [[ -f $f ]] || { echo "compare.sh: missing $f" >&2; exit 1; }
done

work=$(mktemp -d -t candec-native.XXXXXX)
if [[ -z ${KEEP:-} ]]; then
    trap 'rm -rf "$work"' EXIT
else
    echo "work directory: $work"
fi

# Inputs. dbcppp reads a DBC's statements only in the specification's order, which opendbc's
# generated PT file does not follow: dbcppp gets the same statements put in order.
grep ' can0 ' "$log" > "$work/a.log"
head -1 "$work/a.log" > "$work/s.log"
for _ in 1 2 3 4 5 6 7 8 9 10; do cat "$work/a.log"; done > "$work/b.log"
grep -E ' can[01] ' "$log" > "$work/c.log"
python3 "$here/dbc_order.py" "$pt_dbc" "$work/pt.dbc"
python3 "$here/dbc_order.py" "$adas_dbc" "$work/adas.dbc"
# dbcppp's tool reads candump's default format ("  can0  123   [3]  11 22 33") on stdin.
to_candump() {
    awk '{ split($3, a, "#"); n = length(a[2]) / 2; s = sprintf("  %s  %s   [%d] ", $2, a[1], n);
           for (i = 0; i < n; i++) s = s " " substr(a[2], 2 * i + 1, 2); print s }' "$1"
}
if [[ -n $cli ]]; then
    for c in s a b c; do to_candump "$work/$c.log" > "$work/$c.candump"; done
fi

candec_dbc_a=(--dbc "can0=$pt_dbc")
candec_dbc_c=(--dbc "can0=$pt_dbc" --dbc "can1=$adas_dbc")
native_dbc_a=(--dbc "can0=$work/pt.dbc")
native_dbc_c=(--dbc "can0=$work/pt.dbc" --dbc "can1=$work/adas.dbc")

# Agreement: the same lines, every value equal (byte for byte, or else to 1e-9 relative).
echo "## Agreement"
echo
declare -A lines frames
for c in a b c; do
    if [[ $c == c ]]; then cd=("${candec_dbc_c[@]}"); nd=("${native_dbc_c[@]}"); else cd=("${candec_dbc_a[@]}"); nd=("${native_dbc_a[@]}"); fi
    frames[$c]=$(wc -l < "$work/$c.log")
    for fmt in json csv; do
        "$candec" decode --format "$fmt" "${cd[@]}" "$work/$c.log" > "$work/$c.candec.$fmt" 2> /dev/null
        "$native" --format "$fmt" "${nd[@]}" "$work/$c.log" > "$work/$c.native.$fmt"
        if cmp -s "$work/$c.candec.$fmt" "$work/$c.native.$fmt"; then
            verdict="byte-identical"
        elif [[ $fmt == json ]] && python3 "$here/agree.py" "$work/$c.candec.$fmt" "$work/$c.native.$fmt" > "$work/$c.agree"; then
            verdict="values agree ($(tail -1 "$work/$c.agree"))"
        else
            verdict="DIFFERENT"
            [[ -f $work/$c.agree ]] && cat "$work/$c.agree"
        fi
        echo "- ($c) $fmt: $(wc -l < "$work/$c.candec.$fmt") lines from candec, $(wc -l < "$work/$c.native.$fmt") from dbcppp-decode: $verdict"
    done
    lines[$c]=$(wc -l < "$work/$c.candec.json")
    rm -f "$work/$c.candec.csv" "$work/$c.native.csv"
done
echo

# Timing: whole processes, output to /dev/null, the commands of a case interleaved round by round.
# Each command is run by this shell itself (eval), so no extra shell is timed with it.
names=() cmds=() cases=()
add() { cases+=("$1"); names+=("$2"); shift 2; local q; printf -v q '%q ' "$@"; cmds+=("$q"); }
for c in s a b c; do
    if [[ $c == c ]]; then cd=("${candec_dbc_c[@]}"); nd=("${native_dbc_c[@]}"); else cd=("${candec_dbc_a[@]}"); nd=("${native_dbc_a[@]}"); fi
    add "$c" "candec decode (JSON)" "$candec" decode "${cd[@]}" "$work/$c.log"
    add "$c" "candec decode --format csv" "$candec" decode --format csv "${cd[@]}" "$work/$c.log"
    add "$c" "candec decode --format parquet" "$candec" decode --format parquet -o /dev/null "${cd[@]}" "$work/$c.log"
    add "$c" "dbcppp-decode (JSON)" "$native" "${nd[@]}" "$work/$c.log"
    add "$c" "dbcppp-decode --format csv" "$native" --format csv "${nd[@]}" "$work/$c.log"
    add "$c" "dbcppp-decode --format none" "$native" --format none "${nd[@]}" "$work/$c.log"
    if [[ -n $cli ]]; then
        if [[ $c == c ]]; then buses=("--bus=can0:$work/pt.dbc" "--bus=can1:$work/adas.dbc"); else buses=("--bus=can0:$work/pt.dbc"); fi
        add "$c" "dbcppp decode (its CLI)" "$cli" decode "${buses[@]}"
        printf -v q '< %q' "$work/$c.candump"
        cmds[-1]+=$q
    fi
    add "$c" "cat" cat "$work/$c.log"
done

declare -A samples
for ((r = 0; r < rounds; r++)); do
    for i in "${!cmds[@]}"; do
        start=$EPOCHREALTIME
        eval "${cmds[$i]}" > /dev/null 2>&1
        stop=$EPOCHREALTIME
        samples[$i]+="$(( (${stop/./} - ${start/./}) )) "
    done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

frames[s]=1
lines[s]=$(wc -l < <("$candec" decode "${candec_dbc_a[@]}" "$work/s.log" 2> /dev/null))
declare -A med
for i in "${!cmds[@]}"; do
    med[${cases[$i]}|${names[$i]}]=$(echo "${samples[$i]}" | median)
done
order=()
for i in "${!cmds[@]}"; do [[ ${cases[$i]} == a ]] && order+=("${names[$i]}"); done

echo "## Timing (median of $rounds interleaved runs, whole process, output to /dev/null)"
echo
declare -A title=([a]="(a) can0 powertrain alone" [b]="(b) can0 powertrain ten times over" [c]="(c) can0 powertrain + can1 radar")
for c in a b c; do
    echo "### ${title[$c]}: ${frames[$c]} frames, ${lines[$c]} value lines"
    echo
    echo "| command | median ms | ns/frame | ns/line | vs candec JSON |"
    echo "|---|---:|---:|---:|---:|"
    base=${med[$c|${order[0]}]}
    for n in "${order[@]}"; do
        awk -v n="$n" -v us="${med[$c|$n]}" -v f="${frames[$c]}" -v l="${lines[$c]}" -v b="$base" \
            'BEGIN { printf "| %s | %.1f | %.0f | %.0f | %.2fx |\n", n, us / 1000, us * 1000 / f, us * 1000 / l, us / b }'
    done
    echo
done
echo "ns/line divides by the value lines of the JSON output for every row (dbcppp's CLI writes one line per frame instead)."
echo
echo "### Fixed and marginal cost"
echo
echo "Start: the process on a capture of one frame (start-up, DBC load, one frame). Marginal: what each"
echo "further frame costs, from (b) − (a): $(( frames[b] - frames[a] )) frames, $(( lines[b] - lines[a] )) value lines more."
echo
echo "| command | start ms | marginal ns/frame | marginal ns/line |"
echo "|---|---:|---:|---:|"
for n in "${order[@]}"; do
    awk -v n="$n" -v s="${med[s|$n]}" -v a="${med[a|$n]}" -v b="${med[b|$n]}" -v df=$(( frames[b] - frames[a] )) -v dl=$(( lines[b] - lines[a] )) \
        'BEGIN { printf "| %s | %.1f | %.0f | %.0f |\n", n, s / 1000, (b - a) * 1000 / df, (b - a) * 1000 / dl }'
done
