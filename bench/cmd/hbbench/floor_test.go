package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeGo puts a go command on PATH that records its platform and
// arguments in a marker file in dir and fails for GOARCH=arm64.
func fakeGo(t *testing.T) string {
	dir := t.TempDir()
	script := "#!/bin/sh\necho \"$GOOS/$GOARCH $*\" > \"$MARKS/$GOARCH\"\necho \"fake go for $GOARCH\"\n[ \"$GOARCH\" != arm64 ]\n"
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

func writeSpec(t *testing.T, dir string, platforms ...string) (string, floorSpec) {
	cfg := &config{jobs: 2, platforms: platforms}
	w := &workload{Dir: dir, Pkg: "./cmd/x", Bin: "x"}
	spec, err := floorSpecOf(cfg, w, filepath.Join(dir, "out"), "-X main.v=1", filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range spec.Builds {
		spec.Builds[i].Env = append(spec.Builds[i].Env, "MARKS="+dir)
	}
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, spec
}

func TestFloorChildRunsEveryBuild(t *testing.T) {
	dir := fakeGo(t)
	path, spec := writeSpec(t, dir, "linux/amd64", "linux/arm/v7")
	var out bytes.Buffer
	if err := floorChild(context.Background(), path, &out); err != nil {
		t.Fatalf("floorChild: %v\n%s", err, &out)
	}
	for _, arch := range []string{"amd64", "arm"} {
		mark, err := os.ReadFile(filepath.Join(dir, arch))
		if err != nil {
			t.Fatalf("go build for %s did not run: %v", arch, err)
		}
		want := "linux/" + arch + " build -o " + filepath.Join(dir, "out", "x-linux-"+arch)
		if !strings.HasPrefix(string(mark), want) {
			t.Errorf("go build for %s: got %q, want it to start with %q", arch, mark, want)
		}
	}
	if !strings.Contains(out.String(), "GOOS/GOARCH for linux/arm/v7 go build") || !strings.Contains(out.String(), "fake go for arm") {
		t.Errorf("output lacks a build's log:\n%s", &out)
	}
	data, err := os.ReadFile(spec.Result)
	if err != nil {
		t.Fatalf("no result: %v", err)
	}
	var res floorResult
	if err := json.Unmarshal(data, &res); err != nil || res.GoCPU < 0 {
		t.Errorf("result %q: %v", data, err)
	}
}

func TestFloorChildFails(t *testing.T) {
	dir := fakeGo(t)
	path, spec := writeSpec(t, dir, "linux/amd64", "linux/arm64")
	var out bytes.Buffer
	err := floorChild(context.Background(), path, &out)
	if err == nil || !strings.Contains(err.Error(), "go build for linux/arm64") {
		t.Fatalf("got %v, want the arm64 build's error", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "amd64")); err != nil {
		t.Errorf("the amd64 build did not run beside the failing one: %v", err)
	}
	if _, err := os.Stat(spec.Result); err == nil {
		t.Errorf("a failed floor wrote a result")
	}
}

func TestFloorChildBadSpec(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(path, []byte(`{"Dir":"/","Jobs":0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := floorChild(context.Background(), path, &bytes.Buffer{}); err == nil {
		t.Fatal("a spec without jobs or builds was accepted")
	}
}

func TestWithGoCPU(t *testing.T) {
	s := sample{CPU: 300 * time.Millisecond, ChildCPU: 2 * time.Second, Series: []cpuPoint{{}, {}}}
	got := withGoCPU(s, 2200*time.Millisecond)
	if got.ChildCPU != 2200*time.Millisecond || got.CPU != 100*time.Millisecond {
		t.Errorf("got CPU %s + %s, want 0.1s + 2.2s", got.CPU, got.ChildCPU)
	}
	if got.Series[1].Ticks[cpuSelf] != 10 {
		t.Errorf("last point's own ticks %d, want 10", got.Series[1].Ticks[cpuSelf])
	}
	if got := withGoCPU(s, time.Hour); got.CPU != 0 || got.ChildCPU != 2300*time.Millisecond {
		t.Errorf("more go CPU than wait4's total: got %s + %s", got.CPU, got.ChildCPU)
	}
}

// TestMain lets the test binary be a floor child, as hbbench is: floorBuild
// starts os.Executable() with -floor-child SPEC.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "-"+floorChildFlag {
		os.Exit(floorChildMain(os.Args[2]))
	}
	os.Exit(m.Run())
}

// floorBench is a bench enough for floorBuild: no registry, an idle proxy.
func floorBench(t *testing.T, platforms ...string) (*bench, *workload) {
	dir := fakeGo(t)
	t.Setenv("MARKS", dir)
	log, err := os.Create(filepath.Join(dir, "bench.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	cfg := &config{jobs: 2, platforms: platforms, timeout: time.Minute, warmTimeout: time.Minute, procEvery: 20 * time.Millisecond}
	b := &bench{cfg: cfg, work: dir, log: log, proxy: &countingProxy{}}
	return b, &workload{Dir: dir, Pkg: "./cmd/x", Bin: "x", Key: "t"}
}

func TestFloorBuildReexecs(t *testing.T) {
	b, w := floorBench(t, "linux/amd64", "linux/ppc64le")
	s, err := b.floorBuild(context.Background(), w, filepath.Join(b.work, "out"), "-X main.v=1", false)
	if err != nil {
		t.Fatalf("floorBuild: %v", err)
	}
	for _, arch := range []string{"amd64", "ppc64le"} {
		if _, err := os.Stat(filepath.Join(b.work, arch)); err != nil {
			t.Errorf("go build for %s did not run: %v", arch, err)
		}
	}
	if s.Wall <= 0 || len(s.Series) == 0 {
		t.Errorf("the floor was not timed like helperbuild: wall %s, %d CPU points", s.Wall, len(s.Series))
	}
	log, _ := os.ReadFile(b.log.Name())
	if !strings.Contains(string(log), "-"+floorChildFlag) || !strings.Contains(string(log), "GOOS/GOARCH for linux/ppc64le go build") {
		t.Errorf("bench.log lacks the child's command or a build's log:\n%s", log)
	}
}

func TestFloorBuildFails(t *testing.T) {
	b, w := floorBench(t, "linux/amd64", "linux/arm64")
	_, err := b.floorBuild(context.Background(), w, filepath.Join(b.work, "out"), "-X main.v=1", false)
	if err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("got %v, want the floor child's exit status 1", err)
	}
	log, _ := os.ReadFile(b.log.Name())
	if !strings.Contains(string(log), "go build for linux/arm64") {
		t.Errorf("bench.log lacks the failed build's error:\n%s", log)
	}
}
