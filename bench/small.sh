#!/usr/bin/env bash
# small.sh compares the CPU time and peak memory of `mcpc validate` with
# those of three peers on the same input, from a small deployment to a large
# one:
#   - cue vet, on bench/cuevet.cue (the constraints of schema/server.cue) or,
#     for CraftBot's catalog, bench/cuevet-craftbot.cue (schema/craftbot.cue);
#   - a Go JSON Schema validator (santhosh-tekuri/jsonschema, bench/peers/
#     jsonschema) with mcpc's own exported schemas (`mcpc schema KIND`);
#   - the floor (bench/peers/floor): reading the files and decoding them with
#     encoding/json into an any, the least any validator does.
# N servers are generated as in bench/validate.sh (half in appsettings.json,
# half in settings.json); "catalog" is CraftBot's shipped catalog (157
# servers, app/config/mcp_config.json of a CraftBot checkout), validated with
# --profile craftbot.
#
# usage: bench/small.sh [-r ROUNDS] [-s SMALL_ROUNDS] [-b OLD_MCPC] [-c CRAFTBOT] [SIZE ...]
#        (default: -r 5 -s 61, sizes 10 catalog 1000 10000 50000)
#
# -b measures another mcpc binary too (one built from an earlier commit), in
#    the same rounds, for a before/after comparison.
# -c is a CraftBot checkout (a work tree or a bare repository; default: the
#    mirror /work/.mirror/CraftOS-dev+CraftBot/repo); without one the
#    catalog row is left out.
# -s is the number of rounds of the sizes under 1,000 and of the catalog,
#    whose runs take milliseconds; -r that of the others.
#
# Each round runs every tool once, one after the other (interleaved, so that
# the machine's load falls on all of them alike). CPU is user + system time,
# max RSS the peak resident set, both of the kernel's rusage of the process
# (what /usr/bin/time prints, read to the microsecond by bench/peers/rusage:
# /usr/bin/time's hundredths are too coarse for a 10-server run). A ratio is
# the median over the rounds of that round's ratio; a time or a size, the
# median of the rounds. It prints Markdown tables (docs/performance.md).
# cue: go install cuelang.org/go/cmd/cue@v0.17.1
set -euo pipefail

rounds=5
small=61
old=""
craftbot=/work/.mirror/CraftOS-dev+CraftBot/repo
while [[ ${1:-} == -* ]]; do
	case $1 in
	-r) rounds=$2 ;;
	-s) small=$2 ;;
	-b) old=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
	-c) craftbot=$2 ;;
	*)
		echo "usage: $0 [-r ROUNDS] [-s SMALL_ROUNDS] [-b OLD_MCPC] [-c CRAFTBOT] [SIZE ...]" >&2
		exit 2
		;;
	esac
	shift 2
done
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(10 catalog 1000 10000 50000)

root=$(cd "$(dirname "$0")/.." && pwd)
cue=$(command -v cue || echo "$(go env GOPATH)/bin/cue")
if [[ ! -x $cue ]]; then
	echo "cue not found: go install cuelang.org/go/cmd/cue@v0.17.1" >&2
	exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/mcpc" ./cmd/mcpc)
(cd "$root/bench/peers" && go build -o "$work/" ./...)
for kind in appsettings settings mcp-config; do
	"$work/mcpc" schema "$kind" >"$work/$kind.schema.json"
done

# generate: bench/lib.sh.
. "$root/bench/lib.sh"

# run TOOL CMD... appends "cpu-seconds max-rss-kB" of one run to
# $work/TOOL.txt; the command must succeed (every input here is valid), or
# the figures mean nothing.
run() {
	local tool=$1
	shift
	if ! "$work/rusage" -e "$work/stderr" "$@" >>"$work/$tool.txt"; then
		echo "failed: $*" >&2
		head -n 20 "$work/stderr" >&2
		exit 1
	fi
}

# ratio A B COLUMN prints the median over the rounds of A's figure over B's
# (column 1: CPU, 2: max RSS).
ratio() {
	paste -d' ' "$work/$1.txt" "$work/$2.txt" | awk -v c="$3" '{ printf "%.6f\n", $c / $(c + 2) }' | median
}

# med TOOL COLUMN prints the median of TOOL's figure.
med() { cut -d' ' -f"$2" "$work/$1.txt" | median; }

tools=(mcpc)
[[ -z $old ]] || tools+=(old)

peers="| servers | input | rounds | floor CPU | floor max RSS | cue vet CPU | JSON Schema CPU |"
peers_rule="|---:|---:|---:|---:|---:|---:|---:|"
header="| servers | mcpc CPU | mcpc max RSS | CPU / cue vet | CPU / JSON Schema | CPU / floor | max RSS / floor |"
rule="|---:|---:|---:|---:|---:|---:|---:|"
if [[ -n $old ]]; then
	header+=" before: CPU | before: max RSS | before: CPU / cue vet | before: CPU / JSON Schema | before: CPU / floor | before: max RSS / floor |"
	rule+="---:|---:|---:|---:|---:|---:|"
fi
peer_rows=()
rows=()
for size in "${sizes[@]}"; do
	dir="$work/in-$size"
	mkdir -p "$dir"
	if [[ $size == catalog ]]; then
		if [[ -d $craftbot/app/config ]]; then
			cp "$craftbot/app/config/mcp_config.json" "$dir/mcp_config.json"
		elif git -C "$craftbot" cat-file -e HEAD:app/config/mcp_config.json 2>/dev/null; then
			git -C "$craftbot" show HEAD:app/config/mcp_config.json >"$dir/mcp_config.json"
		else
			echo "no CraftBot checkout at $craftbot (-c): the catalog row is left out" >&2
			continue
		fi
		files=("$dir/mcp_config.json")
		n=$(grep -c '"name"' "$dir/mcp_config.json" || true)
		label="$n (catalog)"
		mcpc_args=(validate --clean-env --profile craftbot --config "$dir/mcp_config.json")
		cue_args=(vet "$root/bench/cuevet-craftbot.cue" "$dir/mcp_config.json")
		js_args=("$work/mcp-config.schema.json" "$dir/mcp_config.json")
		r=$small
	else
		generate "$size" "$dir"
		files=("$dir/appsettings.json" "$dir/agent/settings.json")
		label=$size
		mcpc_args=(validate --clean-env --appsettings "$dir/appsettings.json" --agent-dir "$dir/agent")
		cue_args=(vet "$root/bench/cuevet.cue" "${files[@]}")
		js_args=("$work/appsettings.schema.json" "$dir/appsettings.json" "$work/settings.schema.json" "$dir/agent/settings.json")
		r=$rounds
		((size >= 1000)) || r=$small
	fi
	bytes=$(cat "${files[@]}" | wc -c)
	for t in mcpc old cue js floor; do : >"$work/$t.txt"; done
	for ((i = 0; i < r; i++)); do
		run mcpc "$work/mcpc" "${mcpc_args[@]}"
		[[ -z $old ]] || run old "$old" "${mcpc_args[@]}"
		run cue "$cue" "${cue_args[@]}"
		run js "$work/jsonschema" "${js_args[@]}"
		run floor "$work/floor" "${files[@]}"
	done
	peer_rows+=("$(awk -v n="$label" -v b="$bytes" -v r="$r" -v fc="$(med floor 1)" -v fm="$(med floor 2)" -v cc="$(med cue 1)" -v jc="$(med js 1)" 'BEGIN {
		printf "| %s | %.2f MB | %d | %.1f ms | %.1f MB | %.1f ms | %.1f ms |", n, b / 1e6, r, fc * 1000, fm / 1024, cc * 1000, jc * 1000
	}')")
	row="| $label |"
	for t in "${tools[@]}"; do
		row+=$(awk -v c="$(med "$t" 1)" -v m="$(med "$t" 2)" -v rc="$(ratio "$t" cue 1)" -v rj="$(ratio "$t" js 1)" -v rf="$(ratio "$t" floor 1)" -v rm="$(ratio "$t" floor 2)" 'BEGIN {
			printf " %.1f ms | %.1f MB | %.2f | %.2f | %.2f | %.2f |", c * 1000, m / 1024, rc, rj, rf, rm
		}')
	done
	rows+=("$row")
done
echo "$peers"
echo "$peers_rule"
printf '%s\n' "${peer_rows[@]}"
echo
echo "$header"
echo "$rule"
printf '%s\n' "${rows[@]}"
