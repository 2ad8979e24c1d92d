package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// noopPair is one pair of no-ops, timed one right after the other: go's
// own no-op build (the floor's) and helperbuild's unchanged re-push.
type noopPair struct {
	floor, hb sample
}

// noopPairs measures the no-op alone in mode m, after the rounds: one
// untimed floor build and push give both sides a last build of their own
// (the busy mode's -X differs from the idle one's, and both share the
// floor's and helperbuild's output directories), then n pairs of the
// floor's no-op and helperbuild's, the two swapping places every other
// pair. A no-op takes about a second, so many pairs cost little, and the
// median of their differences settles what a few rounds of the whole
// release, each a minute apart, cannot (issue 41: the busy no-op).
func (b *bench) noopPairs(ctx context.Context, what string, m *modeSteps, n int) error {
	if n == 0 || m.hbNoop == nil {
		return nil
	}
	for _, s := range []*step{m.floorFull, m.hbPush} {
		if _, err := s.run(true); err != nil {
			return fmt.Errorf("%s: no-op pairs: %s: %w", what, s.name, err)
		}
	}
	for k := range n {
		order := []*step{m.floorNoop, m.hbNoop}
		if k%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		var p noopPair
		for _, s := range order {
			if err := ctx.Err(); err != nil {
				return err
			}
			x, err := s.run(false)
			if err != nil {
				return fmt.Errorf("%s: no-op pair %d/%d: %s: %w", what, k+1, n, s.name, err)
			}
			if s == m.floorNoop {
				p.floor = x
			} else {
				p.hb = x
			}
		}
		b.progress("%s no-op pair %d/%d: %s: floor %s, helperbuild %s (%+.3f s)", what, k+1, n, m.floorNoop.name,
			fmtDur(p.floor.Wall), fmtDur(p.hb.Wall), (p.hb.Wall - p.floor.Wall).Seconds())
		m.pairs = append(m.pairs, p)
	}
	return nil
}

// pairDiffs is each pair's helperbuild no-op minus its floor no-op.
func pairDiffs(pairs []noopPair) []time.Duration {
	d := make([]time.Duration, len(pairs))
	for i, p := range pairs {
		d[i] = p.hb.Wall - p.floor.Wall
	}
	return d
}

// medianDur is the median of d (0 for none); d is not changed.
func medianDur(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// bootstrapMedian is a 90 % percentile bootstrap interval of the median
// of d: the 5th and 95th percentiles of the medians of 2000 resamples
// drawn with replacement, from a fixed seed, so one report always gives
// the same interval for the same numbers.
func bootstrapMedian(d []time.Duration) (lo, hi time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	const resamples = 2000
	rng := rand.New(rand.NewPCG(41, 41))
	meds := make([]time.Duration, resamples)
	re := make([]time.Duration, len(d))
	for i := range meds {
		for j := range re {
			re[j] = d[rng.IntN(len(d))]
		}
		meds[i] = medianDur(re)
	}
	slices.Sort(meds)
	return meds[resamples*5/100], meds[resamples*95/100-1]
}

// noopPairsRow reports the no-op pairs of each mode measured: the median
// of the paired differences, its interval and what the re-pushes sent.
// The target is judged on the median, as every other row's; the interval
// says whether the verdict would hold on another day of the same machine.
func (b *bench) noopPairsRow(title string, idle, busy *modeSteps) {
	judge := func(m *modeSteps) (string, string) {
		d := pairDiffs(m.pairs)
		med := medianDur(d)
		lo, hi := bootstrapMedian(d)
		var up int64
		for _, p := range m.pairs {
			up = max(up, p.hb.Up.BlobBytes)
		}
		return fmt.Sprintf("%+.3f s vs floor no-op (90 %% interval %+.3f to %+.3f s; floor no-op %s), at most %s uploaded",
				med.Seconds(), lo.Seconds(), hi.Seconds(), fmtDur(medianDur(floorWalls(m.pairs))), fmtBytes(up)),
			verdict(med.Seconds() <= noopLimit && up == 0)
	}
	if len(idle.pairs) == 0 {
		return
	}
	r := b.add(row{Workload: title, Step: fmt.Sprintf("no-op alone: %d pairs of go's no-op and helperbuild's, one after the other", len(idle.pairs)),
		Samples: hbSamples(idle.pairs), Target: fmt.Sprintf("≤ +%.2f s, 0 B uploaded", noopLimit)})
	r.Compare, r.OK = judge(idle)
	if busy != nil && len(busy.pairs) > 0 {
		r.Busy = hbSamples(busy.pairs)
		var ok string
		r.BusyCompare, ok = judge(busy)
		r.OK += "; busy " + ok
	}
}

// hbSamples are the pairs' helperbuild no-ops.
func hbSamples(pairs []noopPair) []sample {
	s := make([]sample, len(pairs))
	for i, p := range pairs {
		s[i] = p.hb
	}
	return s
}

// floorWalls are the pairs' floor no-op times.
func floorWalls(pairs []noopPair) []time.Duration {
	d := make([]time.Duration, len(pairs))
	for i, p := range pairs {
		d[i] = p.floor.Wall
	}
	return d
}
