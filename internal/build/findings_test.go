package build

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/progress"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/verify"
)

// TestCheckFailuresGathered: image a breaks its contract on both
// platforms, image b has none to break. Every unit is checked (no
// "stopped:"), the error carries a's report with both platforms, b's units
// end done or held back (never uploaded after a's failure is known), and
// the run fails.
func TestCheckFailuresGathered(t *testing.T) {
	plan, err := recipe.PackagePlan(recipe.Package{Dir: module(t), Main: "./cmd/hello", Base: "scratch", Platforms: platforms(t, "linux/amd64,linux/arm64")})
	require.NoError(t, err)
	b := plan.Images[0]
	b.Name, b.Contract = "b", ""
	plan.Images[0].Name, plan.Images[0].Contract = "a", "helper"
	plan.Images = append(plan.Images, b)
	opts := options(t)
	var mu sync.Mutex
	handed := map[string]bool{}
	opts.OnImage = func(_ context.Context, name string, p v1.Platform, _ v1.Image) error {
		mu.Lock()
		defer mu.Unlock()
		handed[name+" "+platform.Format(p)] = true
		return nil
	}
	events := &recorded{}
	opts.Progress = events
	_, err = Build(context.Background(), plan, opts)
	require.Error(t, err)

	failures := failedChecks(err)
	require.Len(t, failures, 1, err.Error())
	assert.Equal(t, "image a", failures[0].Name)
	var got []string
	for _, p := range failures[0].Report.Platforms {
		got = append(got, p.Platform)
	}
	assert.Equal(t, []string{"linux/amd64", "linux/arm64"}, got, "both platforms' checks, in platform order")
	assert.Contains(t, err.Error(), "docs/gitlab-image-contract.md")

	final := map[string]progress.Event{}
	checking := map[string]int{}
	for _, e := range events.all() {
		if e.Kind == progress.KindStage {
			final[e.Image+" "+e.Platform] = e
			if e.Stage == progress.Checking {
				checking[e.Image+" "+e.Platform]++
			}
		}
	}
	require.Len(t, final, 4)
	for unit, n := range checking {
		assert.Equal(t, 1, n, "%s is checked once: a failed unit is not assembled again", unit)
	}
	for unit, e := range final {
		assert.NotContains(t, e.Message, "stopped:", unit)
		if strings.HasPrefix(unit, "a ") {
			assert.Equal(t, progress.Failed, e.Stage, unit)
			assert.Contains(t, e.Message, "failed verification", unit)
			assert.False(t, handed[unit], "%s failed its checks: nothing handed on", unit)
			continue
		}
		if e.Stage == progress.Failed {
			assert.Equal(t, errHeldBack.Error(), e.Message, unit)
			assert.False(t, handed[unit], "%s was held back: nothing handed on", unit)
		} else {
			assert.Equal(t, progress.Done, e.Stage, unit)
		}
	}
}

// TestGatherStopsOnInterrupt: a failed check after an interrupt (or any
// other failure that cancelled the run) is not gathered; the run stops.
func TestGatherStopsOnInterrupt(t *testing.T) {
	f := newCheckFindings([][]unit{{{}}})
	fe := &verify.FailedError{Name: "image a", Report: &verify.Report{Platforms: []verify.PlatformReport{{Platform: "linux/amd64"}}}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, f.gather(ctx, 0, 0, fe))
	assert.False(t, f.gather(context.Background(), 0, 0, errors.New("registry gone")))
	assert.False(t, f.failed())
	assert.True(t, f.gather(context.Background(), 0, 0, fe))
	assert.True(t, f.failed())
}

// failedChecks are the *verify.FailedError err carries, in order (as
// release.CheckFailures finds them for the command).
func failedChecks(err error) []*verify.FailedError {
	if fe, ok := err.(*verify.FailedError); ok {
		return []*verify.FailedError{fe}
	}
	var out []*verify.FailedError
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, c := range u.Unwrap() {
			out = append(out, failedChecks(c)...)
		}
	case interface{ Unwrap() error }:
		out = failedChecks(u.Unwrap())
	}
	return out
}
