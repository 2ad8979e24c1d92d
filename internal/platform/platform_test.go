package platform

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		goenv   string
		wantErr string
	}{
		{in: "linux/amd64", want: "linux/amd64", goenv: "GOOS=linux GOARCH=amd64 GOAMD64=v1"},
		{in: "linux/amd64/v3", want: "linux/amd64/v3", goenv: "GOOS=linux GOARCH=amd64 GOAMD64=v3"},
		{in: "linux/amd64/v1", want: "linux/amd64", goenv: "GOOS=linux GOARCH=amd64 GOAMD64=v1"},
		{in: "linux/arm64", want: "linux/arm64", goenv: "GOOS=linux GOARCH=arm64"},
		{in: "linux/arm64/v8", want: "linux/arm64", goenv: "GOOS=linux GOARCH=arm64"},
		{in: "linux/aarch64", want: "linux/arm64", goenv: "GOOS=linux GOARCH=arm64"},
		{in: "linux/arm", want: "linux/arm/v7", goenv: "GOOS=linux GOARCH=arm GOARM=7"},
		{in: "linux/arm/v7", want: "linux/arm/v7", goenv: "GOOS=linux GOARCH=arm GOARM=7"},
		{in: "linux/arm/v6", want: "linux/arm/v6", goenv: "GOOS=linux GOARCH=arm GOARM=6"},
		{in: "linux/ppc64le", want: "linux/ppc64le", goenv: "GOOS=linux GOARCH=ppc64le"},
		{in: "linux/s390x", want: "linux/s390x", goenv: "GOOS=linux GOARCH=s390x"},
		{in: "linux/riscv64", want: "linux/riscv64", goenv: "GOOS=linux GOARCH=riscv64"},
		{in: "linux/386", want: "linux/386", goenv: "GOOS=linux GOARCH=386"},
		{in: " linux/x86_64 ", want: "linux/amd64", goenv: "GOOS=linux GOARCH=amd64 GOAMD64=v1"},
		{in: "linux", wantErr: `platform "linux": want os/arch[/variant]`},
		{in: "arm64", wantErr: `platform "arm64": want os/arch[/variant]`},
		{in: "linux//v7", wantErr: `empty part`},
		{in: "linux/arm/v7/x", wantErr: `want os/arch[/variant]`},
		{in: "windows/amd64", want: "windows/amd64", goenv: "GOOS=windows GOARCH=amd64 GOAMD64=v1"},
		{in: "windows/amd64:10.0.20348", want: "windows/amd64:10.0.20348", goenv: "GOOS=windows GOARCH=amd64 GOAMD64=v1"},
		{in: "Windows/x86_64:10.0.17763.5830", want: "windows/amd64:10.0.17763.5830", goenv: "GOOS=windows GOARCH=amd64 GOAMD64=v1"},
		{in: "windows(10.0.17763)/amd64", want: "windows/amd64:10.0.17763", goenv: "GOOS=windows GOARCH=amd64 GOAMD64=v1"},
		{in: "windows/arm64:10.0.26100", want: "windows/arm64:10.0.26100", goenv: "GOOS=windows GOARCH=arm64"},
		{in: "windows/amd64:", wantErr: "empty OS version"},
		{in: "windows/amd64:ltsc2022", wantErr: `want major.minor.build[.revision]`},
		{in: "windows/amd64:10.0.x", wantErr: `"x" is not a number`},
		{in: "windows/amd64:10.0.20348:1", wantErr: `"10.0.20348:1"`},
		{in: "windows(10.0.17763)/amd64:10.0.17763", wantErr: "given twice"},
		{in: "windows(10.0.17763+win32k)/amd64", wantErr: "OS features (win32k) are not supported"},
		{in: "linux/amd64:10.0.20348", wantErr: "only meaningful for windows"},
		{in: "windows/386", wantErr: "builds no container image for windows/386"},
		{in: "windows/arm/v7", wantErr: "builds no container image for windows/arm/v7"},
		{in: "linux/sparc", wantErr: "builds no container image for linux/sparc"},
		{in: "linux/arm/v9", wantErr: `unknown arm variant "v9"`},
		{in: "linux/amd64/v7", wantErr: `unknown amd64 variant`},
		{in: "linux/s390x/v2", wantErr: `no variant "v2"`},
		{in: "Linux/AMD64", want: "linux/amd64", goenv: "GOOS=linux GOARCH=amd64 GOAMD64=v1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := Parse(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, Format(p))
			env, err := GoEnv(p)
			require.NoError(t, err)
			assert.Equal(t, tt.goenv, strings.Join(env, " "))
			// Round trip: formatting and parsing again gives the same platform.
			again, err := Parse(Format(p))
			require.NoError(t, err)
			assert.Equal(t, p, again)
		})
	}
}

func TestParseList(t *testing.T) {
	got, err := ParseList("linux/arm64, linux/amd64,linux/arm64/v8,linux/arm,linux/arm/v7,,linux/s390x")
	require.NoError(t, err)
	assert.Equal(t, "linux/arm64,linux/amd64,linux/arm/v7,linux/s390x", FormatList(got))

	_, err = ParseList(" , ")
	assert.ErrorContains(t, err, "empty")
	_, err = ParseList("linux/amd64,arm64")
	assert.ErrorContains(t, err, `platform "arm64"`)
}

func TestEqualAndGitLabArch(t *testing.T) {
	assert.True(t, Equal(v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}, v1.Platform{OS: "linux", Architecture: "arm64"}))
	assert.True(t, Equal(v1.Platform{OS: "linux", Architecture: "arm"}, v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}))
	assert.False(t, Equal(v1.Platform{OS: "linux", Architecture: "arm", Variant: "v6"}, v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}))
	for in, want := range map[string]string{"linux/amd64": "x86_64", "linux/arm/v6": "arm", "linux/arm/v7": "arm", "linux/arm64": "arm64", "linux/ppc64le": "ppc64le", "linux/s390x": "s390x", "linux/riscv64": "riscv64"} {
		p, err := Parse(in)
		require.NoError(t, err)
		assert.Equal(t, want, GitLabArch(p), in)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"linux/amd64", "linux/arm/v7", "linux", "a/b/c/d", "linux/arm64/v8", "//", "linux/amd64/v3", "windows/amd64:10.0.20348", "windows(10.0.17763)/amd64", "windows/amd64:1.2.3.4.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		// Whatever parses must round-trip and be buildable.
		again, err := Parse(Format(p))
		if err != nil {
			t.Fatalf("Parse(%q) = %v, but Parse(Format) failed: %v", s, p, err)
		}
		if Format(again) != Format(p) {
			t.Fatalf("round trip of %q: %v != %v", s, again, p)
		}
		if _, err := GoEnv(p); err != nil {
			t.Fatalf("parsed %q but GoEnv fails: %v", s, err)
		}
		if p.OSVersion != "" && (p.OS != "windows" || checkOSVersion(p.OSVersion) != nil) {
			t.Fatalf("parsed %q with OS version %q on %s", s, p.OSVersion, p.OS)
		}
		// go-containerregistry reads what Format writes as the same platform.
		g, err := v1.ParsePlatform(Format(p))
		if err != nil || !Equal(*g, p) {
			t.Fatalf("v1.ParsePlatform(%q) = %v, %v; want %v", Format(p), g, err, p)
		}
	})
}

func TestKnown(t *testing.T) {
	known := Known()
	for _, p := range known {
		_, err := GoEnv(p)
		require.NoError(t, err, Format(p))
		again, err := Parse(Format(p))
		require.NoError(t, err)
		assert.Equal(t, Format(p), Format(again), "Known is normalised")
	}
	for _, s := range []string{"linux/amd64", "linux/amd64/v3", "linux/arm/v6", "linux/arm/v7", "linux/arm64", "linux/ppc64le", "linux/s390x", "linux/riscv64", "linux/386"} {
		p, err := Parse(s)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, Index(known, p), 0, s)
	}
}

// A typo gets the nearest platform Go builds; nonsense gets none.
func TestParseSuggests(t *testing.T) {
	tests := []struct{ in, want string }{
		{"linux/amd46", "(did you mean linux/amd64?)"},
		{"linux/arm65", "(did you mean linux/arm64?)"},
		{"linux/s309x", "(did you mean linux/s390x?)"},
		{"linux/ppc64el", "(did you mean linux/ppc64le? ppc64el is Debian's name)"},
		{"linux/ppc46le", "(did you mean linux/ppc64le?)"},
		{"linux/arm/v8", "(did you mean linux/arm/v7?)"},
		{"linx/amd64", "(did you mean linux/amd64?)"},
		{"windows/amd46", "(did you mean windows/amd64?)"},
		{"windows/s390x", ""},
		{"linux/sparc", ""},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		require.Error(t, err, tt.in)
		if tt.want == "" {
			assert.NotContains(t, err.Error(), "did you mean", tt.in)
			continue
		}
		assert.True(t, strings.HasSuffix(err.Error(), tt.want), "%s: got %q", tt.in, err)
	}
}
