package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	ucli "github.com/urfave/cli/v2"
)

func versionCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "version",
		Usage: "print mcpc's version, module version, VCS revision and Go version",
		UsageText: `mcpc version

Example (a binary built from a clone with go build or go install records its revision):
   go install ./cmd/mcpc && mcpc version`,
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return usageError("version takes no arguments (got %q)", c.Args().First())
			}
			info, _ := debug.ReadBuildInfo()
			return printVersion(c.App.Writer, info)
		},
	}
}

// buildVersion is what a binary knows about how it was built.
type buildVersion struct {
	module, moduleVersion string
	revision, time        string
	modified              bool
	goVersion, platform   string
}

// versionOf reads info (nil when the binary has none). `go build` and
// `go install` in a clone record the VCS revision and a pseudo-version;
// `go install module@version` records the version; `go run` and test
// binaries record neither, which is shown as such rather than guessed.
func versionOf(info *debug.BuildInfo) buildVersion {
	v := buildVersion{goVersion: runtime.Version(), platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info == nil {
		return v
	}
	v.module, v.moduleVersion = info.Main.Path, info.Main.Version
	if info.GoVersion != "" {
		v.goVersion = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.revision = s.Value
		case "vcs.time":
			v.time = s.Value
		case "vcs.modified":
			v.modified = s.Value == "true"
		}
	}
	return v
}

func printVersion(w io.Writer, info *debug.BuildInfo) error {
	v := versionOf(info)
	module := "unknown (the binary holds no build information)"
	if v.module != "" {
		// (devel) is Go's word for a build from a working tree without a
		// version: go run, go test.
		module = v.module + " " + v.moduleVersion
	}
	revision := "unknown (go run and go test record none; go build and go install in a git clone do)"
	if v.revision != "" {
		revision = v.revision
		if v.time != "" {
			revision += " " + v.time
		}
		if v.modified {
			revision += " (with uncommitted changes)"
		}
	}
	_, err := fmt.Fprintf(w, "mcpc %s\nmodule:   %s\nrevision: %s\ngo:       %s %s\n",
		Version, module, revision, v.goVersion, v.platform)
	return err
}
