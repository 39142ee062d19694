#!/usr/bin/env bash
# compare.sh compares the CPU time and peak memory of `mcpc validate` and
# `mcpc plan -o FILE` of this tree with those of another mcpc binary (say,
# one built from an earlier commit, or with a change undone), on the
# deployment bench/validate.sh generates: N servers, half in the host's
# appsettings.json, half in the agent's settings.json. The two binaries'
# plans must be byte for byte the same, or the script stops.
#
# usage: bench/compare.sh -b OTHER_MCPC [-r RUNS] [N ...]     (default: -r 11 10000 50000)
#
# Both are measured as whole processes with /usr/bin/time (user + system
# CPU, maximum resident set size); each figure is the median of RUNS runs,
# the two binaries alternating. It prints a Markdown table
# (docs/performance.md).
set -euo pipefail

runs=11
other=""
while [[ ${1:-} == -* ]]; do
	case $1 in
	-r) runs=$2 ;;
	-b) other=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
	*)
		echo "usage: $0 -b OTHER_MCPC [-r RUNS] [N ...]" >&2
		exit 2
		;;
	esac
	shift 2
done
if [[ -z $other ]]; then
	echo "usage: $0 -b OTHER_MCPC [-r RUNS] [N ...]" >&2
	exit 2
fi
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(10000 50000)

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/mcpc" ./cmd/mcpc)
. "$root/bench/lib.sh"

echo "| servers | command | CPU | max RSS | other: CPU | other: max RSS | CPU / other |"
echo "|---:|---|---:|---:|---:|---:|---:|"
for n in "${sizes[@]}"; do
	dir="$work/n$n"
	generate "$n" "$dir"
	inputs=(--clean-env --appsettings "$dir/appsettings.json" --agent-dir "$dir/agent")
	for cmd in validate plan; do
		: >"$work/this.txt"
		: >"$work/other.txt"
		this=("$work/mcpc" "$cmd" "${inputs[@]}")
		that=("$other" "$cmd" "${inputs[@]}")
		if [[ $cmd == plan ]]; then
			this+=(-o "$work/this.json")
			that+=(-o "$work/other.json")
		fi
		for ((r = 0; r < runs; r++)); do
			measure "${this[@]}" >>"$work/this.txt"
			measure "${that[@]}" >>"$work/other.txt"
		done
		if [[ $cmd == plan ]] && ! cmp -s "$work/this.json" "$work/other.json"; then
			echo "the two plans of $n servers differ" >&2
			exit 1
		fi
		label="mcpc $cmd"
		[[ $cmd == plan ]] && label="mcpc plan -o ($(awk -v b="$(wc -c <"$work/this.json")" 'BEGIN { printf "%.1f MB", b / 1e6 }'))"
		awk -v n="$n" -v c="$label" -v t="$(figures "$work/this.txt")" -v o="$(figures "$work/other.txt")" 'BEGIN {
			split(t, tt, " "); split(o, oo, " ")
			printf "| %d | %s | %.3f s | %d MB | %.3f s | %d MB | %.2f |\n", n, c, tt[1], tt[2] / 1024, oo[1], oo[2] / 1024, tt[1] / oo[1]
		}'
	done
done
