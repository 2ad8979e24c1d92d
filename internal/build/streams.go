package build

import (
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"golang.org/x/sync/errgroup"

	"github.com/helperbuild/helperbuild/internal/layer"
)

// streams uploads the layers one unit writes anew while they are written
// (Options.OnLayer), for the units the release waits on once nothing
// compiles: their upload then runs beside the compression instead of after
// it. Each upload's stream ends only when end says the unit passed its
// checks; otherwise it fails, so nothing unchecked is committed.
type streams struct {
	upload func(v1.Layer) error

	mu  sync.Mutex
	all []*layer.Stream
	g   errgroup.Group
}

// follow is layer.Options.Follow: it starts s's upload.
func (s *streams) follow(st *layer.Stream) {
	s.mu.Lock()
	s.all = append(s.all, st)
	s.mu.Unlock()
	s.g.Go(func() error { return s.upload(st.Layer()) })
}

// end lets the uploads commit if the unit was built and checked (err is
// nil) or fails them with err, waits for them and releases the streams. It
// returns err, else the first upload's error.
func (s *streams) end(err error) error {
	s.mu.Lock()
	all := s.all
	s.mu.Unlock()
	for _, st := range all {
		if err == nil {
			st.Allow()
		} else {
			st.Fail(err)
		}
	}
	uerr := s.g.Wait()
	for _, st := range all {
		st.Close()
	}
	if err != nil {
		return err
	}
	return uerr
}
