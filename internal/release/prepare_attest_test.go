package release

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helperbuild/helperbuild/internal/gitmeta"
)

// The attestations ask git only what neither the flags nor the job say:
// the root always, the ref's ingredients outside a job that names its tag
// or branch, the remote without --source (each git start costs the run's
// start milliseconds).
func TestAttestGitAsksOnlyWhatIsNotGiven(t *testing.T) {
	ref := gitmeta.Tags | gitmeta.Revision | gitmeta.Branch
	for _, tt := range []struct {
		name  string
		ci    CI
		given Given
		want  gitmeta.Field
	}{
		{"outside CI, nothing given", CI{}, Given{}, gitmeta.Toplevel | ref | gitmeta.Remote},
		{"outside CI, --source", CI{}, Given{Source: "https://gitlab.example.com/g/p"}, gitmeta.Toplevel | ref},
		{"a tag pipeline", CI{CommitTag: "v1.2.3"}, Given{}, gitmeta.Toplevel | gitmeta.Remote},
		{"a branch pipeline with --source", CI{CommitBranch: "main"}, Given{Source: "https://gitlab.example.com/g/p"}, gitmeta.Toplevel},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.ci.attestGit(tt.given))
		})
	}
}
