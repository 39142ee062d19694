#!/usr/bin/env bash
# run.sh runs CraftBot's own MCP loader, client and action adapter side by
# side with mcpc's craftbot profile on the cases of this directory and the
# catalog the checkout ships, and prints per case MATCH or MISMATCH and a
# summary (README.md). Run it from the repository root:
#
#   bench/craftbot-host/run.sh [CRAFTBOT_CHECKOUT] [-v] [--out DIR]
#
# CRAFTBOT_CHECKOUT is a CraftBot work tree, or a bare git repository whose
# HEAD is exported (agent_core and app/config only) to a temporary
# directory; default: /work/.mirror/CraftOS-dev+CraftBot/repo. Exit status:
# 0 all match, 1 a mismatch, 2 the harness failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
src=/work/.mirror/CraftOS-dev+CraftBot/repo
if [[ $# -gt 0 && $1 != -* ]]; then
	src=$1
	shift
fi

py=${PYTHON:-python3}
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
	echo "run.sh: $py is older than 3.11, which CraftBot targets" >&2
	exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ -d $src/agent_core ]]; then
	checkout=$src
elif git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null 2>&1; then
	checkout=$work/craftbot
	mkdir -p "$checkout"
	# A mirror may lack blobs outside these paths; git names them on stderr.
	git --git-dir="$src" archive HEAD agent_core app/config 2>"$work/archive.log" | tar -x -C "$checkout"
	echo "CraftBot $(git --git-dir="$src" log -1 --format='%h %cs' HEAD) exported from $src"
else
	echo "run.sh: $src is neither a CraftBot checkout nor a git repository" >&2
	exit 2
fi
for f in agent_core/core/impl/mcp/config.py agent_core/core/impl/mcp/adapter.py agent_core/core/action_framework/registry.py; do
	[[ -f $checkout/$f ]] || {
		echo "run.sh: $checkout has no $f" >&2
		exit 2
	}
done

(cd "$root" && go build -o "$work/mcpc" ./cmd/mcpc)
echo "mcpc built from $(cd "$root" && git rev-parse --short HEAD)$(cd "$root" && git diff --quiet HEAD -- . || echo ' (with uncommitted changes)')"
echo

"$py" "$here/compare.py" --checkout "$checkout" --mcpc "$work/mcpc" "$@"
