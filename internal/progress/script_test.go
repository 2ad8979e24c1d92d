package progress

import (
	"crypto/sha256"
	"fmt"
	"time"
)

// clock is a fake clock the tests move by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newClock() *clock { return &clock{t: time.Unix(1764612000, 0).UTC()} }

var (
	scriptImages    = []string{"gitlab-runner-helper", "gitlab-runner"}
	scriptPlatforms = []string{"linux/amd64", "linux/arm64", "linux/arm/v7", "linux/ppc64le", "linux/s390x"}
)

// digestOf is a made-up digest for an image and platform.
func digestOf(image, platform string) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(image+" "+platform)))
}

// step is one moment of a scripted push: events sent at one instant.
type step func(s Sink)

// pushScript is the events of a push of two images × five platforms, as
// release and the command send them, in one order the release may take,
// with the clock moved between moments. stopAt > 0 ends it early (mid-run)
// after that many moments.
func pushScript(c *clock, s Sink, stopAt int) {
	moments := []step{
		func(s Sink) {
			s.Event(Event{Kind: KindStart, Message: "helperbuild push", Images: scriptImages, Platforms: scriptPlatforms,
				Binaries: []string{"./apps/gitlab-runner-helper", "."}, Destination: "localhost:5000/group/<image>"})
			s.Event(Event{Kind: KindPhaseStart, Phase: "resolve", Message: "resolve: base images and registry access"})
		},
		func(s Sink) {
			s.Event(Event{Kind: KindPhaseEnd, Phase: "resolve", Message: "0 base images pinned, 5 platforms"})
			for _, img := range scriptImages {
				for _, p := range scriptPlatforms {
					s.Event(Event{Kind: KindStage, Image: img, Platform: p, Stage: Waiting})
				}
			}
			s.Event(Event{Kind: KindPhaseStart, Phase: "build", Message: "build: compile, write layers, check"})
		},
	}
	for k, p := range scriptPlatforms {
		moments = append(moments, func(s Sink) {
			for _, img := range scriptImages {
				s.Event(Event{Kind: KindStage, Image: img, Platform: p, Stage: Compiling})
			}
		})
		if k == 1 {
			moments = append(moments, func(s Sink) {
				s.Event(Event{Kind: KindRetry, Level: "WARN", Message: "retrying request", Fields: []Field{
					{Key: "method", Value: "PATCH"}, {Key: "url", Value: "http://localhost:5000/v2/group/gitlab-runner/blobs/uploads/1"},
					{Key: "reason", Value: "503 Service Unavailable"}, {Key: "attempt", Value: "1/5"}, {Key: "wait", Value: "1s"}}})
			})
		}
	}
	// Platforms move through their stages in a pipeline: while one
	// uploads, the next writes its layers and the rest still compile.
	stages := []func(s Sink, p string){
		func(s Sink, p string) {
			// The first platform's binaries came whole from go's cache, one of the last's.
			s.Event(Event{Kind: KindCompiled, Platform: p, Count: 2, UpToDate: map[string]int{scriptPlatforms[0]: 2, scriptPlatforms[len(scriptPlatforms)-1]: 1}[p]})
			for _, img := range scriptImages {
				s.Event(Event{Kind: KindStage, Image: img, Platform: p, Stage: Waiting})
				s.Event(Event{Kind: KindStage, Image: img, Platform: p, Stage: Writing, Count: 1, Of: 2})
			}
		},
		func(s Sink, p string) {
			for _, img := range scriptImages {
				s.Event(Event{Kind: KindStage, Image: img, Platform: p, Stage: Checking})
				s.Event(Event{Kind: KindStage, Image: img, Platform: p, Stage: Uploading, Total: 780_000})
				s.Event(Event{Kind: KindBytes, Image: img, Platform: p, Bytes: 262_144})
			}
		},
		func(s Sink, p string) {
			for _, img := range scriptImages {
				s.Event(Event{Kind: KindStage, Image: img, Platform: p, Stage: Done, Digest: digestOf(img, p),
					Total: 781_234, Count: 1, Of: 2, Upload: true, Bytes: 780_000})
			}
		},
	}
	for m := 0; m < len(scriptPlatforms)+len(stages)-1; m++ {
		moments = append(moments, func(s Sink) {
			for k, p := range scriptPlatforms {
				if n := m - k; n >= 0 && n < len(stages) {
					stages[n](s, p)
				}
			}
		})
	}
	moments = append(moments,
		func(s Sink) {
			s.Event(Event{Kind: KindPhaseEnd, Phase: "build", Message: "10 binaries, 2 images built and checked"})
			s.Event(Event{Kind: KindPhaseStart, Phase: "publish", Message: "publish: manifests by digest, checked, then tags"})
		},
		func(s Sink) {
			s.Event(Event{Kind: KindPhaseEnd, Phase: "publish", Message: "2 indexes, 10 manifests"})
		})
	for n, m := range moments {
		if stopAt > 0 && n == stopAt {
			return
		}
		m(s)
		c.advance(700 * time.Millisecond)
	}
}
