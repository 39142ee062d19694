#!/usr/bin/env bash
# runtime.sh measures what `mcpc run` and `mcpc tools` cost against a peer
# doing the same work in the same run (issue 13), with the Go benchmarks of
# cmd/mcpc/cli/perf_bench_test.go, and prints a Markdown table
# (docs/performance.md):
#
#   - cold start: from the start of the client's server process to the
#     first echo answered, `mcpc run --stdio` and `mcpc run --http` (first
#     chat) in front of @modelcontextprotocol/server-everything, each also
#     with --start-early, against server-everything started directly
#     (BenchmarkColdStart; mcpc / peer is the median of each run's ratio);
#   - `mcpc tools` on 20 server-everything entries against a plain go-sdk
#     client that starts the 20, lists their tools and closes them, all at
#     once (BenchmarkTools20);
#   - the CPU time an `mcpc run --http` process spends per proxied call
#     against an `mcpc run --stdio` process, to the same Go test server,
#     and the median latency of those calls (BenchmarkGatewayCPUPerCall).
#
# usage: bench/runtime.sh [-r RUNS] [-b OLD_MCPC]     (default: -r 10)
#
# RUNS is the benchmarks' iteration count (-benchtime RUNSx): cold starts of
# each kind, `mcpc tools` runs (half as many), batches of 100 calls per
# path. Each figure is the median (cold start, tools) or the total over the
# runs (CPU). -b measures another mcpc binary too, say one built from an
# earlier commit, in the same runs: the "before" columns.
# Needs `npm ci` (server-everything) and Linux (/proc for the CPU times).
set -euo pipefail

runs=10
old=""
while [[ ${1:-} == -* ]]; do
	case $1 in
	-r) runs=$2 ;;
	-b) old=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
	*)
		echo "usage: $0 [-r RUNS] [-b OLD_MCPC]" >&2
		exit 2
		;;
	esac
	shift 2
done

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go test -c -o "$work/cli.test" ./cmd/mcpc/cli)

# bench NAME TIMES prints the metrics of one benchmark as "unit value" lines.
bench() {
	(cd "$root/cmd/mcpc/cli" && MCPC_REQUIRE_NPM=1 MCPC_BENCH_OLD="$old" "$work/cli.test" \
		-test.run XXX -test.bench "^Benchmark$1\$" -test.benchtime "$2x") >"$work/$1.txt" 2>&1 || {
		cat "$work/$1.txt" >&2
		exit 1
	}
	awk '/^Benchmark/ { for (i = 5; i < NF; i += 2) print $(i + 1), $i }' "$work/$1.txt"
}

bench ColdStart "$runs" >"$work/cold"
bench Tools20 "$(((runs + 1) / 2))" >"$work/tools"
bench GatewayCPUPerCall "$runs" >"$work/cpu"

# row FILE LABEL MCPC PEER RATIO TARGET UNIT [OLD OLDRATIO] prints one line.
row() {
	awk -v label="$2" -v m="$3" -v p="$4" -v r="$5" -v target="$6" -v unit="$7" -v o="${8:-}" -v or="${9:-}" -v before="$old" '
		{ v[$1] = $2 }
		END {
			line = sprintf("| %s | %.0f %s | %.0f %s | %.2f | %s |", label, v[m], unit, v[p], unit, v[r], target)
			if (before != "") line = line (o == "" ? " — | — |" : sprintf(" %.0f %s | %.2f |", v[o], unit, v[or]))
			print line
		}' "$1"
}

header="| what | mcpc | peer in the same run | mcpc / peer | target |"
rule="|---|---:|---:|---:|---:|"
if [[ -n $old ]]; then
	header+=" before: mcpc | before: mcpc / peer |"
	rule+="---:|---:|"
fi
echo "$header"
echo "$rule"
row "$work/cold" 'cold start to the first `echo`, `mcpc run --stdio` (peer: server-everything started directly)' \
	stdio-ms direct-ms stdio/direct-per-run '≤ 1.3' ms old-stdio-ms old-stdio/direct
row "$work/cold" 'the same via `mcpc run --http`, first chat' \
	http-ms direct-ms http/direct-per-run '≤ 1.3' ms old-http-ms old-http/direct
row "$work/cold" 'cold start, `mcpc run --stdio --start-early` (opt-in: the chat'"'"'s process starts at initialize)' \
	early-stdio-ms direct-ms early-stdio/direct-per-run '≤ 1.15' ms
row "$work/cold" 'the same via `mcpc run --http --start-early`, first chat' \
	early-http-ms direct-ms early-http/direct-per-run '≤ 1.15' ms
row "$work/tools" '`mcpc tools`, 20 servers (peer: a plain client listing all 20 at once)' \
	mcpc-tools-ms plain-client-ms mcpc/plain '≤ 1.05' ms old-mcpc-tools-ms old-mcpc/plain
row "$work/cpu" 'gateway CPU per proxied call over HTTP (peer: the same over stdio)' \
	http-cpu-µs/call stdio-cpu-µs/call http/stdio '≤ 1.5' µs old-http-cpu-µs/call old-http/stdio
row "$work/cpu" 'p50 latency of a proxied call over HTTP, as the client sees it (peer: the same over stdio)' \
	http-p50-µs stdio-p50-µs http/stdio-p50 '—' µs old-http-p50-µs old-http/stdio-p50
