#!/usr/bin/env bash
# gateway.sh measures the gateway against its peers in the same runs
# (issue 32, target 4), with the Go benchmarks of
# cmd/mcpc/cli/gateway_bench_test.go, and prints Markdown tables
# (docs/performance.md):
#
#   - over Streamable HTTP, `mcpc run --http` against mcp-proxy and
#     supergateway (npm, pinned in npm/peers/package.json), each in front of
#     the Go test server's echo over stdio, driven by the go-sdk's client:
#     the gateway process's CPU per proxied call (/proc/PID/stat,
#     utime+stime), its peak RSS (VmHWM), p50 latency and calls per second
#     with 1 client and with 50 at once (BenchmarkGatewayPeers);
#   - over stdio, a warm call through `mcpc run --stdio` against the same
#     call made to the server directly: p10, p50 and p90 of each, and the
#     gateway's CPU per call (BenchmarkStdioCall).
#
# usage: bench/gateway.sh [-r ROUNDS] [-b OLD_MCPC]     (default: -r 10)
#
# ROUNDS is the number of rounds (-benchtime ROUNDSx); in each the
# gateways take turns. Ratios are medians of the rounds' ratios. -b
# measures another mcpc binary over stdio too, say one built from an
# earlier commit, in the same rounds: the "before" column and row.
# Installs the peers if they are missing (npm ci --prefix npm/peers);
# needs Linux (/proc).
set -euo pipefail

rounds=10
old=""
while [[ ${1:-} == -* ]]; do
	case $1 in
	-r) rounds=$2 ;;
	-b) old=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
	*)
		echo "usage: $0 [-r ROUNDS] [-b OLD_MCPC]" >&2
		exit 2
		;;
	esac
	shift 2
done

root=$(cd "$(dirname "$0")/.." && pwd)
if [[ ! -x $root/npm/peers/node_modules/.bin/mcp-proxy || ! -x $root/npm/peers/node_modules/.bin/supergateway ]]; then
	npm ci --prefix "$root/npm/peers" --no-audit --no-fund >&2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go test -c -o "$work/cli.test" ./cmd/mcpc/cli)

# bench NAME prints the metrics of one benchmark as "unit value" lines.
bench() {
	(cd "$root/cmd/mcpc/cli" && MCPC_REQUIRE_NPM=1 MCPC_BENCH_OLD="$old" MCPC_BENCH_PEERS="$root/npm/peers/node_modules/.bin" \
		"$work/cli.test" -test.run XXX -test.bench "^Benchmark$1\$" -test.benchtime "${rounds}x") >"$work/$1.txt" 2>&1 || {
		cat "$work/$1.txt" >&2
		exit 1
	}
	grep -A 100 -- '--- BENCH' "$work/$1.txt" >&2 || true # the figures of each round
	awk '/^Benchmark/ { for (i = 3; i < NF; i += 2) print $(i + 1), $i }' "$work/$1.txt"
}

bench GatewayPeers >"$work/peers"
bench StdioCall >"$work/stdio"

header="| what | mcpc | mcp-proxy | supergateway | mcpc / mcp-proxy | mcpc / supergateway | target |"
rule="|---|---:|---:|---:|---:|---:|---:|"
if [[ -n $old ]]; then
	header+=" before: mcpc |"
	rule+="---:|"
fi
echo "$header"
echo "$rule"
# peer LABEL METRIC RATIO FORMAT TARGET prints one row of the peers' table.
peer() {
	awk -v label="$1" -v m="$2" -v r="$3" -v f="$4" -v target="$5" -v before="$old" '
		{ v[$1] = $2 }
		END {
			line = sprintf("| %s | " f " | " f " | " f " | %.2f | %.2f | %s |", label,
				v["mcpc-" m], v["mcp-proxy-" m], v["supergateway-" m], v["mcpc/mcp-proxy-" r], v["mcpc/supergateway-" r], target)
			if (before != "") line = line sprintf(" " f " |", v["old-" m])
			print line
		}' "$work/peers"
}
peer 'gateway CPU per proxied call, 1 client (µs)' 'cpu-µs/call' cpu '%.0f' '≤ 0.5'
peer 'gateway CPU per proxied call, 50 clients at once (µs)' 'cpu50-µs/call' cpu50 '%.0f' '≤ 0.5'
peer 'p50 latency of a call, 1 client (µs)' 'p50-µs' p50 '%.0f' '—'
peer 'calls per second, 1 client' 'calls/s' 'calls/s' '%.0f' '—'
peer 'calls per second, 50 clients' 'calls50/s' 'calls50/s' '%.0f' '—'
peer 'peak RSS of the gateway process (MB)' 'maxrss-MB' maxrss '%.1f' '—'

echo
echo "| path | p10 | p50 | p90 | p50 / direct | gateway CPU per call | target |"
echo "|---|---:|---:|---:|---:|---:|---:|"
awk -v before="$old" '
	{ v[$1] = $2 }
	END {
		printf "| direct to the server | %.0f µs | %.0f µs | %.0f µs | 1 | — | |\n", v["direct-p10-µs"], v["direct-p50-µs"], v["direct-p90-µs"]
		printf "| through `mcpc run --stdio` | %.0f µs | %.0f µs | %.0f µs | %.2f | %.0f µs | ≤ 1.5 |\n", v["mcpc-p10-µs"], v["mcpc-p50-µs"], v["mcpc-p90-µs"], v["mcpc/direct-p50"], v["mcpc-cpu-µs/call"]
		if (before != "")
			printf "| before: through `mcpc run --stdio` | %.0f µs | %.0f µs | %.0f µs | %.2f | %.0f µs | |\n", v["old-p10-µs"], v["old-p50-µs"], v["old-p90-µs"], v["old/direct-p50"], v["old-cpu-µs/call"]
	}' "$work/stdio"
