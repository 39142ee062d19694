#!/usr/bin/env bash
# lint.sh compares the CPU time and peak memory of `mcpc lint` with those of
# `mcpc validate` on the same deployments: bench/validate.sh's generated
# volcanic deployment of N servers (half npx with a pinned package, half node
# with idleTimeoutSeconds 0, so that the strict pack reports on every second
# server), a generated CraftBot catalog of 157 entries, and 20 deployments of
# 10 servers under one directory (lint DIR/...).
#
# usage: bench/lint.sh [-r RUNS] [-b OLD_MCPC] [N ...]     (default: -r 5 10 157 1000 10000 50000)
#
# For each size: validate; lint with the baseline pack (no mcpc.cue: the
# sources given as flags, as validate gets them); lint with baseline and strict
# (an mcpc.cue beside the sources naming both packs). -b measures another
# mcpc binary (say, one built from main) in the same rounds, against its own
# validate. Each round runs every command once, alternating; a figure is the
# median of the per-round ratios lint / validate of user + system CPU and of
# maximum resident set size (/usr/bin/time). lint exits 1 on the strict
# pack's findings; any other failure stops the script. Sizes up to 1000 run
# three times as many rounds (their runs take milliseconds). It prints a
# Markdown table (docs/performance.md). Needs python3 (for wait4).
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
[[ ${#sizes[@]} -gt 0 ]] || sizes=(10 157 1000 10000 50000)

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/mcpc" ./cmd/mcpc)

# generate and median: bench/lib.sh.
. "$root/bench/lib.sh"

# run CMD... prints "cpu-seconds max-rss-kB" of one run, which must exit 0
# or 1 (findings): the child's own rusage (wait4), to the microsecond
# (/usr/bin/time prints hundredths, too coarse for a 10-server run).
run() {
	local rc=0
	python3 -c '
import os, subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "w"))
_, status, ru = os.wait4(p.pid, 0)
print("%.4f %d" % (ru.ru_utime + ru.ru_stime, ru.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))' "$work/stderr" "$@" >"$work/time" || rc=$?
	if ((rc > 1)); then
		echo "failed ($rc): $*" >&2
		head -n 20 "$work/stderr" >&2
		exit 1
	fi
	cat "$work/time"
}

# craftbot N FILE writes a CraftBot catalog of N entries: npx with a pinned
# package, uvx, docker, a few disabled.
craftbot() {
	awk -v n="$1" 'BEGIN {
		printf "{\n  \"auto_connect\": true,\n  \"mcp_servers\": [\n"
		for (i = 0; i < n; i++) {
			if (i % 3 == 0) { cmd = "npx"; args = sprintf("\"-y\", \"@scope/server-%d@1.2.3\"", i) }
			else if (i % 3 == 1) { cmd = "uvx"; args = sprintf("\"mcp-server-%d==0.4.1\"", i) }
			else { cmd = "docker"; args = sprintf("\"run\", \"-i\", \"--rm\", \"ghcr.io/org/server-%d:1.0\"", i) }
			printf "    {\"name\": \"server-%d\", \"description\": \"Server %d of the catalog\", \"transport\": \"stdio\", \"command\": \"%s\", \"args\": [%s], \"env\": {\"LOG_LEVEL\": \"info\"}, \"enabled\": %s}%s\n", i, i, cmd, args, (i % 10 == 9 ? "false" : "true"), (i < n - 1 ? "," : "")
		}
		printf "  ]\n}\n"
	}' >"$2"
}

# setup NAME writes a case's deployments under $work/NAME and sets src, the
# source flags of validate and of lint with the baseline pack.
setup() {
	local name=$1 dir=$work/$1
	case $name in
	craftbot157)
		mkdir -p "$dir"
		craftbot 157 "$dir/mcp_config.json"
		src=(--profile craftbot --clean-env --config "$dir/mcp_config.json")
		printf 'profile: "craftbot"\nsources: {config: "mcp_config.json", cleanEnv: true}\npolicies: packs: ["baseline", "strict"]\n' >"$dir/mcpc.cue"
		;;
	tree20)
		for ((d = 0; d < 20; d++)); do
			generate 10 "$dir/base/d$d"
			printf 'profile: "volcanic"\nsources: {appsettings: ["appsettings.json"], agentDir: "agent", cleanEnv: true}\n' >"$dir/base/d$d/mcpc.cue"
		done
		cp -r "$dir/base" "$dir/strict"
		for f in "$dir"/strict/d*/mcpc.cue; do echo 'policies: packs: ["baseline", "strict"]' >>"$f"; done
		;;
	*)
		generate "$name" "$dir"
		src=(--clean-env --appsettings "$dir/appsettings.json" --agent-dir "$dir/agent")
		printf 'profile: "volcanic"\nsources: {appsettings: ["appsettings.json"], agentDir: "agent", cleanEnv: true}\npolicies: packs: ["baseline", "strict"]\n' >"$dir/mcpc.cue"
		;;
	esac
}

# round BIN NAME LABEL appends one round's figures of BIN, "cpu rss" of
# validate, lint and lint with strict, to $work/NAME.LABEL.
round() {
	local bin=$1 name=$2 label=$3 dir=$work/$2 v b s
	if [[ $name == tree20 ]]; then
		# validate has no DIR/...: the 20 deployments one after another.
		v=$(for ((d = 0; d < 20; d++)); do (cd "$dir/base/d$d" && run "$bin" validate --clean-env --appsettings appsettings.json --agent-dir agent); done |
			awk '{ c += $1; if ($2 > m) m = $2 } END { printf "%.3f %d", c, m }')
		b=$(cd "$dir/base" && run "$bin" lint ./...)
		s=$(cd "$dir/strict" && run "$bin" lint ./...)
	else
		v=$(run "$bin" validate "${src[@]}")
		b=$(run "$bin" lint "${src[@]}")
		s=$(cd "$dir" && run "$bin" lint .)
	fi
	echo "$v $b $s" >>"$work/$name.$label"
}

# ratios FILE prints the medians of the per-round ratios: baseline CPU, RSS,
# strict CPU, RSS; then the medians of validate's CPU and RSS and of each
# lint's.
ratios() {
	local f=$1
	echo "$(awk '{ print $3 / $1 }' "$f" | median) $(awk '{ print $4 / $2 }' "$f" | median)" \
		"$(awk '{ print $5 / $1 }' "$f" | median) $(awk '{ print $6 / $2 }' "$f" | median)" \
		"$(cut -d' ' -f1 "$f" | median) $(cut -d' ' -f2 "$f" | median)" \
		"$(cut -d' ' -f3 "$f" | median) $(cut -d' ' -f4 "$f" | median)" \
		"$(cut -d' ' -f5 "$f" | median) $(cut -d' ' -f6 "$f" | median)"
}

header="| servers | validate CPU, max RSS | lint (baseline) CPU, max RSS | lint / validate: CPU, RSS | lint (baseline + strict) CPU, max RSS | lint+strict / validate: CPU, RSS |"
rule="|---|---:|---:|---:|---:|---:|"
if [[ -n $old ]]; then
	header+=" before: lint / validate CPU, RSS | before: lint+strict / validate CPU, RSS | before: lint, lint+strict CPU, max RSS |"
	rule+="---:|---:|---:|"
fi
echo "$header"
echo "$rule"
for n in "${sizes[@]}"; do
	cases=("$n")
	if [[ $n == 157 ]]; then cases=(157 craftbot157); fi
	if [[ $n == 10 ]]; then cases=(10 tree20); fi
	for name in "${cases[@]}"; do
		setup "$name"
		rounds=$runs
		if [[ $name != [0-9]* || $name -le 1000 ]]; then rounds=$((runs * 3)); fi # short runs vary more
		for ((r = 0; r < rounds; r++)); do
			round "$work/mcpc" "$name" new
			if [[ -n $old ]]; then round "$old" "$name" old; fi
		done
		label=$name
		case $name in
		tree20) label="20 × 10 (lint ./...; validate: 20 runs)" ;;
		craftbot157) label="157 (CraftBot catalog)" ;;
		esac
		row=$(ratios "$work/$name.new" | awk -v l="$label" '{
			printf "| %s | %.3f s, %d MB | %.3f s, %d MB | %.2f, %.2f | %.3f s, %d MB | %.2f, %.2f |", l, $5, $6 / 1024, $7, $8 / 1024, $1, $2, $9, $10 / 1024, $3, $4
		}')
		if [[ -n $old ]]; then
			row+=$(ratios "$work/$name.old" | awk '{
				printf " %.2f, %.2f | %.2f, %.2f | %.3f s, %.3f s, %d MB, %d MB |", $1, $2, $3, $4, $7, $9, $8 / 1024, $10 / 1024
			}')
		fi
		echo "$row"
	done
done
