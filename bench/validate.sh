#!/usr/bin/env bash
# validate.sh compares the CPU time and peak memory of `mcpc validate` with
# those of `cue vet` on the same generated deployment: N servers, half in the
# host's appsettings.json (PascalCase), half in the agent's settings.json
# (camelCase), one server per line; cue vet checks the same files against
# bench/cuevet.cue, the same constraints as mcpc's schema/server.cue.
#
# usage: bench/validate.sh [-r RUNS] [-b OLD_MCPC] [N ...]     (default: -r 5 10000 50000)
#
# -b measures another mcpc binary too (say, one built from an earlier
# commit), in the same runs, for a before/after comparison.
#
# Both are measured as whole processes with /usr/bin/time (user + system CPU,
# maximum resident set size); each figure is the median of RUNS runs, the
# two tools alternating. It prints a Markdown table (docs/performance.md).
# cue: go install cuelang.org/go/cmd/cue@v0.17.1
set -euo pipefail

runs=5
old=""
while [[ ${1:-} == -* ]]; do
	case $1 in
	-r) runs=$2 ;;
	-b) old=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
	*)
		echo "usage: $0 [-r RUNS] [-b OLD_MCPC] [N ...]" >&2
		exit 2
		;;
	esac
	shift 2
done
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(10000 50000)

root=$(cd "$(dirname "$0")/.." && pwd)
cue=$(command -v cue || echo "$(go env GOPATH)/bin/cue")
if [[ ! -x $cue ]]; then
	echo "cue not found: go install cuelang.org/go/cmd/cue@v0.17.1" >&2
	exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/mcpc" ./cmd/mcpc)

# generate, measure, median and figures: bench/lib.sh.
. "$root/bench/lib.sh"

header="| servers | input | cue vet CPU | cue vet max RSS | mcpc validate CPU | mcpc max RSS | CPU mcpc / cue vet |"
rule="|---:|---:|---:|---:|---:|---:|---:|"
if [[ -n $old ]]; then
	header+=" before: mcpc CPU | before: max RSS | before: CPU / cue vet |"
	rule+="---:|---:|---:|"
fi
echo "$header"
echo "$rule"
for n in "${sizes[@]}"; do
	dir="$work/n$n"
	generate "$n" "$dir"
	bytes=$(cat "$dir/appsettings.json" "$dir/agent/settings.json" | wc -c)
	: >"$work/cue.txt"
	: >"$work/mcpc.txt"
	: >"$work/old.txt"
	args=(validate --clean-env --appsettings "$dir/appsettings.json" --agent-dir "$dir/agent")
	for ((r = 0; r < runs; r++)); do
		measure "$cue" vet "$root/bench/cuevet.cue" "$dir/appsettings.json" "$dir/agent/settings.json" >>"$work/cue.txt"
		measure "$work/mcpc" "${args[@]}" >>"$work/mcpc.txt"
		if [[ -n $old ]]; then measure "$old" "${args[@]}" >>"$work/old.txt"; fi
	done
	row=$(awk -v n="$n" -v b="$bytes" -v c="$(figures "$work/cue.txt")" -v m="$(figures "$work/mcpc.txt")" 'BEGIN {
		split(c, cc, " "); split(m, mm, " ")
		printf "| %d | %.1f MB | %.2f s | %d MB | %.2f s | %d MB | %.2f |", n, b / 1e6, cc[1], cc[2] / 1024, mm[1], mm[2] / 1024, mm[1] / cc[1]
	}')
	if [[ -n $old ]]; then
		row+=$(awk -v c="$(figures "$work/cue.txt")" -v o="$(figures "$work/old.txt")" 'BEGIN {
			split(c, cc, " "); split(o, oo, " ")
			printf " %.2f s | %d MB | %.2f |", oo[1], oo[2] / 1024, oo[1] / cc[1]
		}')
	fi
	echo "$row"
done
