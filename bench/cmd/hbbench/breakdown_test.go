package main

import (
	"testing"
	"time"
)

// A run's phases come from the times of its events, relative to the start.
func TestBreakdownOf(t *testing.T) {
	start := time.Unix(1700000000, 0)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	ev := func(ms int, e event) event { e.Time = at(ms); return e }
	attested := event{Kind: "log", Message: "attested"}
	attested.Fields = append(attested.Fields, struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}{"platform", "linux/amd64"}, struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}{"sbom", "4ms"})
	s := sample{Start: start, Wall: 2000 * time.Millisecond, Events: []event{
		ev(30, event{Kind: "start"}),
		ev(90, event{Kind: "phase-end", Phase: "resolve", Duration: 50 * time.Millisecond}),
		ev(100, event{Kind: "stage", Platform: "linux/amd64", Stage: "compiling"}),
		ev(1500, event{Kind: "compiled", Platform: "linux/amd64", Duration: 1400 * time.Millisecond}),
		ev(1510, event{Kind: "stage", Platform: "linux/amd64", Stage: "writing layer"}),
		ev(1700, event{Kind: "stage", Platform: "linux/amd64", Stage: "checking"}),
		ev(1710, attested),
		ev(1720, event{Kind: "stage", Platform: "linux/amd64", Stage: "uploading"}),
		ev(1800, event{Kind: "stage", Platform: "linux/amd64", Stage: "done"}),
		ev(1810, event{Kind: "phase-end", Phase: "build"}),
		ev(1820, event{Kind: "phase-start", Phase: "publish"}),
		ev(1850, event{Kind: "log", Message: "pushed"}),
		ev(1870, event{Kind: "log", Message: "manifests checked"}),
		ev(1900, event{Kind: "log", Message: "tagged"}),
		ev(1910, event{Kind: "phase-end", Phase: "publish"}),
	}}
	bd, ok := breakdownOf(s)
	if !ok {
		t.Fatal("no breakdown")
	}
	ms := time.Millisecond
	for name, want := range map[string]time.Duration{
		"process start → first event": 30 * ms, "resolve (base images, registry access)": 50 * ms,
		"start → first compile": 100 * ms, "first compile → last link": 1400 * ms,
		"last link → every platform done": 300 * ms, "index check": 10 * ms,
		"publish: manifests by digest": 30 * ms, "publish: manifest checks": 20 * ms, "publish: tags": 30 * ms,
		"publish end → exit": 90 * ms, "last link → exit": 500 * ms,
	} {
		if got := bd.run[name]; got != want {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]time.Duration{
		"compile": 1400 * ms, "link wait": 10 * ms, "layer": 190 * ms,
		"check (+ attestations when inline)": 20 * ms, "SBOM": 4 * ms, "upload": 80 * ms,
	} {
		if got := bd.platform["linux/amd64"][name]; got != want {
			t.Errorf("linux/amd64 %s: got %v, want %v", name, got, want)
		}
	}
	if _, ok := bd.platform["linux/amd64"]["provenance"]; ok {
		t.Error("provenance: no event gave it a time")
	}
}
