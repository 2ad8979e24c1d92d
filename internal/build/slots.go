package build

import "sync"

// slots is the release's CPU schedule, kept apart from what is scheduled:
// the compiles get the job slots first, layer work beside them takes only
// the slots no compile needs, and once nothing compiles every slot (and up
// to maxLayerThreads goroutines per layer) goes to the layers the release
// waits for. It changes no thread's priority: see docs/bench-2026-12-01.md
// for why nothing runs at a lowered one.
type slots struct {
	jobs    int
	mu      sync.Mutex
	changed *sync.Cond // signalled when a compile or an assembly ends
	running int        // assemblies holding a slot
	left    int        // binaries not yet compiled; 0 once compiling ended
}

// newSlots schedules jobs slots around compiles binaries still to build.
func newSlots(jobs, compiles int) *slots {
	s := &slots{jobs: jobs, left: compiles}
	s.changed = sync.NewCond(&s.mu)
	return s
}

// assemblySlots is how many of jobs slots assembly may use while left
// binaries are still to compile: the compiles hold min(left, jobs) of them,
// so layers are compressed while the last links run alone rather than
// slowing the links of a full wave.
func assemblySlots(jobs, left int) int {
	return jobs - min(left, jobs)
}

// compiled records that one binary was built.
func (s *slots) compiled() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.left--
	s.changed.Broadcast()
}

// acquire waits for a job slot no compile needs (see assemblySlots) and
// says whether compiles still run.
func (s *slots) acquire() (compiling bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.running >= assemblySlots(s.jobs, s.left) {
		s.changed.Wait()
	}
	s.running++
	return s.left > 0
}

// release gives back a slot acquire handed out.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	s.changed.Broadcast()
}

// compilesEnded frees every slot for assembly, however compiling ended.
func (s *slots) compilesEnded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.left = 0
	s.changed.Broadcast()
}

// maxLayerThreads caps the goroutines compressing one layer: one goroutine
// writing the tar and hashing (about 1 GB/s) keeps about eight level-1
// compressors (115 MB/s each) busy, and each adds 2 MiB of blocks in flight.
const maxLayerThreads = 8

// threads is how many goroutines may compress a layer now: one while
// anything still compiles (the links need the cores); once nothing does,
// one per job slot up to maxLayerThreads, so the last platforms' layers,
// which the whole release waits for, use all the cores. Memory then grows
// with the jobs (up to 18 MiB per layer being written), never with the
// size of a binary.
func (s *slots) threads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.left > 0 {
		return 1
	}
	return min(s.jobs, maxLayerThreads)
}
