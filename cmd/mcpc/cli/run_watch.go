package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/watch"
	"github.com/mcpc-dev/mcpc/plan"
	"github.com/mcpc-dev/mcpc/report"
	"github.com/mcpc-dev/mcpc/runtime"
)

// mcpc run --watch: the gateway takes the --plan file again whenever it
// changes (`mcpc plan -o` writes it atomically, an editor by rename; the
// watcher sees both), and applies the difference to the running host
// (runtime.Host.Apply). A plan that is not valid, or that the host cannot
// take, is logged with its diagnostics and the running plan stays.

// testHookReloaded, when set, is called after each reload of the plan
// with whether it changed what runs (tests count reloads through it).
var testHookReloaded func(applied bool, err error)

// startPlanWatch watches planFile for mcpc run --watch. The watcher ends
// with ctx or Close, which waits for a reload in progress.
func startPlanWatch(ctx context.Context, c *ucli.Context, planFile string, host *runtime.Host, logw *lockedWriter) (*watch.Watcher, error) {
	out := diagFlags(c)
	out.color = nil // log lines: never colored
	w, err := watch.Start(ctx, watch.Options{
		Files: []string{planFile},
		Reload: func(ctx context.Context) error {
			applied, err := reloadPlan(ctx, planFile, host, out, logw)
			if testHookReloaded != nil {
				testHookReloaded(applied, err)
			}
			return err
		},
		OnError: func(err error) {
			logw.printf("mcpc: error: %s\n", host.Redact(err.Error()))
		},
	})
	if err != nil {
		return nil, usageError("--watch: %v", err)
	}
	logw.printf("mcpc: watching %s: a change is applied to the running gateway\n", planFile)
	return w, nil
}

// reloadPlan reads planFile again and applies it to host. It reports
// whether anything that runs changed; an error means the running plan
// stays (its diagnostics are logged already).
func reloadPlan(ctx context.Context, planFile string, host *runtime.Host, out diagOutput, logw *lockedWriter) (bool, error) {
	const kept = "the running plan stays"
	data, err := inputfile.ReadText(planFile)
	if err != nil {
		return false, fmt.Errorf("reload: cannot read --plan %s: %v; %s", planFile, unwrapPath(err), kept)
	}
	p, ds := plan.Read(planFile, data)
	if p == nil {
		var b bytes.Buffer
		if err := printDiagnostics(&b, out, ds, sourcesOf().withFile(planFile, data), host.Redact); err != nil {
			return false, err
		}
		logw.printf("%s", b.String())
		return false, fmt.Errorf("reload: %s is not a valid plan (%s); %s", planFile, report.Summary(ds), kept)
	}
	res, err := host.Apply(ctx, p)
	if err != nil && (errors.Is(err, runtime.ErrHostClosed) || ctx.Err() != nil) {
		return false, nil // shutting down
	}
	if err != nil {
		return false, fmt.Errorf("reload: %s: %s; %s", planFile, host.Redact(err.Error()), kept)
	}
	if !res.Changed() {
		logw.printf("mcpc: reload: %s changed, nothing to do for the running servers\n", planFile)
	}
	return res.Changed(), nil
}
