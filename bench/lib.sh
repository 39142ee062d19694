# lib.sh: what the scripts of bench/ share. Source it with $work set (a
# scratch directory).

# generate N DIR writes DIR/appsettings.json and DIR/agent/settings.json.
generate() {
	mkdir -p "$2/agent"
	awk -v n="$1" -v app="$2/appsettings.json" -v set="$2/agent/settings.json" 'BEGIN {
		printf "{\"Mcp\": {\"Servers\": {\n" > app
		printf "{\"theme\": \"dark\", \"mcpServers\": {\n" > set
		for (i = 0; i < n; i++) {
			if (i % 2 == 0) {
				printf "%s\"host-%06d\": {\"Command\": \"npx\", \"Args\": [\"-y\", \"@scope/server-%d@1.2.3\", \"--root\", \"${workspace}/data\"], \"Cwd\": \"${workspace}\", \"Env\": {\"LOG_LEVEL\": \"info\", \"REGION\": \"eu-west-1\"}, \"ToolPrefix\": \"h%d_\", \"Enabled\": true, \"Parallel\": false, \"StartupTimeoutSeconds\": 30, \"CallTimeoutSeconds\": 120, \"IdleTimeoutSeconds\": 600, \"StderrLevel\": \"Warning\", \"PromptSection\": \"Use these tools for project %d.\"}", (i ? ",\n" : ""), i, i, i, i > app
			} else {
				printf "%s\"user-%06d\": {\"command\": \"node\", \"args\": [\"/opt/mcp/server-%d.js\", \"--stdio\", \"--workspace\", \"${workspace}\"], \"cwd\": \"${workspace}/tmp\", \"env\": {\"DEBUG\": null, \"HOME_DIR\": \"${workspace}\"}, \"toolPrefix\": \"u%d-\", \"enabled\": true, \"parallel\": true, \"startupTimeoutSeconds\": 45, \"callTimeoutSeconds\": 300, \"idleTimeoutSeconds\": 0, \"stderrLevel\": \"error\", \"promptSection\": null}", (i > 1 ? ",\n" : ""), i, i, i > set
			}
		}
		printf "\n}}}\n" > app
		printf "\n}}\n" > set
	}'
}

# measure CMD... prints "cpu-seconds max-rss-kB" of one run; the command must
# succeed (the generated deployment is valid), or the figures mean nothing.
measure() {
	if ! /usr/bin/time -o "$work/time" -f '%U %S %M' "$@" >/dev/null 2>"$work/stderr"; then
		echo "failed: $*" >&2
		head -n 20 "$work/stderr" >&2
		exit 1
	fi
	awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$work/time"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# figures FILE prints the median CPU seconds and max RSS (kB) of FILE's runs.
figures() { echo "$(cut -d' ' -f1 "$1" | median) $(cut -d' ' -f2 "$1" | median)"; }
