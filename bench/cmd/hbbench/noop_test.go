package main

import (
	"testing"
	"time"
)

// TestBootstrapMedian: the interval holds the median, is the same on every
// call (fixed seed), shrinks to a point for equal differences and widens
// with their spread.
func TestBootstrapMedian(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		d := make([]time.Duration, len(v))
		for i, x := range v {
			d[i] = time.Duration(x) * time.Millisecond
		}
		return d
	}
	d := ms(90, 120, 100, 110, 95, 300, 105, 80, 115, 100)
	med := medianDur(d)
	if med != 102500*time.Microsecond {
		t.Fatalf("median = %v, want 102.5ms", med)
	}
	lo, hi := bootstrapMedian(d)
	if lo > med || hi < med || lo < 80*time.Millisecond || hi > 300*time.Millisecond {
		t.Errorf("interval %v..%v does not hold the median %v within the data", lo, hi, med)
	}
	if lo2, hi2 := bootstrapMedian(d); lo2 != lo || hi2 != hi {
		t.Errorf("second call %v..%v, first %v..%v: want the same (fixed seed)", lo2, hi2, lo, hi)
	}
	if lo, hi := bootstrapMedian(ms(7, 7, 7, 7)); lo != 7*time.Millisecond || hi != 7*time.Millisecond {
		t.Errorf("equal differences: %v..%v, want 7ms..7ms", lo, hi)
	}
	wide := ms(-400, 500, -300, 600, 0, 50, -200, 450, 100, -350)
	wlo, whi := bootstrapMedian(wide)
	if whi-wlo <= hi-lo {
		t.Errorf("spread data interval %v..%v not wider than %v..%v", wlo, whi, lo, hi)
	}
	if lo, hi := bootstrapMedian(nil); lo != 0 || hi != 0 {
		t.Errorf("no data: %v..%v, want 0..0", lo, hi)
	}
}

// TestPairDiffs: each pair's helperbuild no-op minus its own floor no-op,
// not the difference of the two medians.
func TestPairDiffs(t *testing.T) {
	pairs := []noopPair{
		{floor: sample{Wall: time.Second}, hb: sample{Wall: 1100 * time.Millisecond}},
		{floor: sample{Wall: 2 * time.Second}, hb: sample{Wall: 2050 * time.Millisecond}},
		{floor: sample{Wall: 1500 * time.Millisecond}, hb: sample{Wall: 1400 * time.Millisecond}},
	}
	d := pairDiffs(pairs)
	want := []time.Duration{100 * time.Millisecond, 50 * time.Millisecond, -100 * time.Millisecond}
	for i := range want {
		if d[i] != want[i] {
			t.Errorf("pair %d: %v, want %v", i, d[i], want[i])
		}
	}
	if m := medianDur(d); m != 50*time.Millisecond {
		t.Errorf("median %v, want 50ms", m)
	}
}
