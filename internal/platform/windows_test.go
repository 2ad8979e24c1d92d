package platform

import (
	"debug/pe"
	"testing"

	"github.com/containerd/platforms"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	specs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustParse(t *testing.T, s string) v1.Platform {
	t.Helper()
	p, err := Parse(s)
	require.NoError(t, err)
	return p
}

func TestExeName(t *testing.T) {
	assert.Equal(t, "gitlab-runner-helper.exe", ExeName(mustParse(t, "windows/amd64:10.0.20348"), "gitlab-runner-helper"))
	assert.Equal(t, "helper.exe", ExeName(mustParse(t, "windows/arm64"), "helper.exe"), "no second .exe")
	assert.Equal(t, "gitlab-runner-helper", ExeName(mustParse(t, "linux/amd64"), "gitlab-runner-helper"))
}

func TestPEMachine(t *testing.T) {
	m, ok := PEMachineOf(mustParse(t, "windows/amd64:10.0.17763"))
	require.True(t, ok)
	assert.Equal(t, uint16(pe.IMAGE_FILE_MACHINE_AMD64), m)
	m, ok = PEMachineOf(mustParse(t, "windows/arm64"))
	require.True(t, ok)
	assert.Equal(t, uint16(pe.IMAGE_FILE_MACHINE_ARM64), m)
	_, ok = PEMachineOf(mustParse(t, "linux/amd64"))
	assert.False(t, ok, "a Linux platform has no PE machine")
	_, ok = ArchOfPE(pe.IMAGE_FILE_MACHINE_I386)
	assert.False(t, ok, "helperbuild builds no windows/386")
	_, ok = ELFOf(mustParse(t, "windows/amd64"))
	assert.False(t, ok, "a Windows platform has no ELF header")
}

func TestOSBuild(t *testing.T) {
	for in, want := range map[string]string{"10.0.20348.2340": "10.0.20348", "10.0.17763": "10.0.17763"} {
		got, ok := OSBuild(in)
		require.True(t, ok, in)
		assert.Equal(t, want, got)
	}
	for _, in := range []string{"", "10.0", "10.0.x", "1.2.3.4.5"} {
		_, ok := OSBuild(in)
		assert.False(t, ok, in)
	}
}

// Satisfies agrees with containerd's matcher (what a Windows node's
// containerd uses) and go-containerregistry's v1.Platform.Satisfies for the
// node kinds of a mixed cluster.
func TestSatisfiesAgreesWithContainerdAndGGCR(t *testing.T) {
	entries := []string{"linux/amd64", "linux/arm64", "windows/amd64:10.0.17763.5830", "windows/amd64:10.0.20348.2340"}
	nodes := []struct {
		node string // what the node asks for
		want string // the one entry it must get
	}{
		{"windows/amd64:10.0.17763", "windows/amd64:10.0.17763.5830"},
		{"windows/amd64:10.0.20348", "windows/amd64:10.0.20348.2340"},
		{"linux/arm64", "linux/arm64"},
		{"linux/amd64", "linux/amd64"},
	}
	for _, n := range nodes {
		asked := mustParse(t, n.node)
		matcher := platforms.NewMatcher(specs.Platform{OS: asked.OS, Architecture: asked.Architecture, OSVersion: asked.OSVersion})
		var ours, theirs, ggcr []string
		for _, e := range entries {
			have := mustParse(t, e)
			if Satisfies(have, asked) {
				ours = append(ours, e)
			}
			if matcher.Match(specs.Platform{OS: have.OS, Architecture: have.Architecture, OSVersion: have.OSVersion}) {
				theirs = append(theirs, e)
			}
			// go-containerregistry compares os.version exactly, so the node
			// names its full version as the entry records it.
			spec := asked
			if IsWindows(asked) {
				spec.OSVersion = have.OSVersion
				if b, _ := OSBuild(have.OSVersion); b != asked.OSVersion {
					spec.OSVersion = asked.OSVersion
				}
			}
			if have.Satisfies(spec) {
				ggcr = append(ggcr, e)
			}
		}
		assert.Equal(t, []string{n.want}, ours, "ours for %s", n.node)
		assert.Equal(t, []string{n.want}, theirs, "containerd for %s", n.node)
		assert.Equal(t, []string{n.want}, ggcr, "go-containerregistry for %s", n.node)
	}
	assert.True(t, Satisfies(mustParse(t, "windows/amd64:10.0.20348.2340"), mustParse(t, "windows/amd64")), "no version asked: any build")
	assert.False(t, Satisfies(mustParse(t, "windows/amd64:10.0.20348.2340"), mustParse(t, "windows/amd64:10.0.20348.1")), "a revision asked must match")
	assert.False(t, Satisfies(mustParse(t, "windows/amd64"), mustParse(t, "windows/amd64:10.0.20348")), "an entry without os.version serves no asked build")
}

func TestOrdered(t *testing.T) {
	var in []v1.Platform
	for _, s := range []string{"windows/amd64:10.0.20348", "linux/arm64", "windows/amd64:10.0.9200", "linux/amd64", "windows/arm64:10.0.26100", "windows/amd64:10.0.17763", "linux/s390x"} {
		in = append(in, mustParse(t, s))
	}
	assert.Equal(t, "linux/arm64,linux/amd64,linux/s390x,windows/amd64:10.0.9200,windows/amd64:10.0.17763,windows/amd64:10.0.20348,windows/arm64:10.0.26100",
		FormatList(Ordered(in)), "Linux as given, then Windows by arch and build, numerically")
	assert.Equal(t, "windows/amd64,windows/amd64:10.0.17763", FormatList(Ordered([]v1.Platform{mustParse(t, "windows/amd64:10.0.17763"), mustParse(t, "windows/amd64")})))
	assert.Equal(t, "linux/amd64", FormatList(in[3:4]), "the input is not reordered")
}

func TestEqualWithOSVersion(t *testing.T) {
	assert.False(t, Equal(mustParse(t, "windows/amd64:10.0.17763"), mustParse(t, "windows/amd64:10.0.20348")))
	assert.True(t, Equal(v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763"}, mustParse(t, "windows(10.0.17763)/amd64")))
	assert.True(t, Equal(v1.Platform{OS: "linux", Architecture: "amd64", OSVersion: "5.15"}, mustParse(t, "linux/amd64")), "Linux ignores os.version")
	list, err := ParseList("windows/amd64:10.0.17763,linux/amd64,windows/amd64:10.0.20348,windows(10.0.17763)/amd64")
	require.NoError(t, err)
	assert.Equal(t, "windows/amd64:10.0.17763,linux/amd64,windows/amd64:10.0.20348", FormatList(list), "duplicates by OS version dropped")
}
