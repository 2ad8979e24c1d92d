//go:build unix

package crossbuild_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/crossbuild"
)

func TestBuildCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(t.TempDir(), "hello")
	err := crossbuild.Build(ctx, []crossbuild.Target{{Platform: mustParse(t, "linux/amd64"), Main: ".", Output: out}},
		crossbuild.Options{Go: "/nonexistent/go", Env: os.Environ(), Jobs: 1})
	assert.ErrorIs(t, err, context.Canceled)
	assert.NoFileExists(t, out)
}

func TestBuildCancelledBetweenTargets(t *testing.T) {
	dir := writeModule(t, map[string]string{"main.go": helloMain})
	out := t.TempDir()
	targets := []crossbuild.Target{
		{Platform: mustParse(t, "linux/amd64"), Main: ".", Output: filepath.Join(out, "first")},
		{Platform: mustParse(t, "linux/arm64"), Main: ".", Output: filepath.Join(out, "second")},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var afterCalls []int
	err := crossbuild.Build(ctx, targets, crossbuild.Options{
		Dir: dir, Env: os.Environ(), Jobs: 1,
		After: func(_ context.Context, i int, _ crossbuild.Result) error {
			afterCalls = append(afterCalls, i) // Jobs: 1, so no concurrent calls
			cancel()
			return nil
		},
	})
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotContains(t, err.Error(), "exit status")
	assert.Equal(t, []int{0}, afterCalls)
	assert.FileExists(t, targets[0].Output)
	assert.NoFileExists(t, targets[1].Output)
}

// TestBuildCancelledWhileCompiling uses a fake go command that reports it
// started through a FIFO, leaves a child holding its output, and then blocks
// forever; cancelling must kill both and return the context's error.
func TestBuildCancelledWhileCompiling(t *testing.T) {
	tmp := t.TempDir()
	started, hold := filepath.Join(tmp, "started"), filepath.Join(tmp, "hold")
	require.NoError(t, syscall.Mkfifo(started, 0o600))
	require.NoError(t, syscall.Mkfifo(hold, 0o600))
	fakeGo := filepath.Join(tmp, "go")
	require.NoError(t, os.WriteFile(fakeGo, []byte(`#!/bin/sh
read never < "$HOLD" &
echo started > "$STARTED"
read never < "$HOLD"
`), 0o755))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- crossbuild.Build(ctx, []crossbuild.Target{
			{Platform: mustParse(t, "linux/arm64"), Main: ".", Output: filepath.Join(tmp, "out", "hello")},
		}, crossbuild.Options{
			Go: fakeGo, Env: append(os.Environ(), "STARTED="+started, "HOLD="+hold), Jobs: 1,
		})
	}()

	f, err := os.Open(started) // blocks until the fake go command writes
	require.NoError(t, err)
	line, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	require.NoError(t, err)
	require.Equal(t, "started\n", line)

	cancel()
	err = <-done
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotContains(t, err.Error(), "signal")
	assert.DirExists(t, filepath.Join(tmp, "out"), "output directory is created")
}
