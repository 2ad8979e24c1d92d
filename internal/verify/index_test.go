package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helperbuild/helperbuild/internal/fixture/tartest"
)

func TestIndexOddEntries(t *testing.T) {
	img := testImage(t, amd64, v1.Config{})
	child := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &amd64}})
	unknown := plat("unknown", "unknown", "")
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &amd64}},
		mutate.IndexAddendum{Add: child, Descriptor: v1.Descriptor{Platform: &arm64}},
		mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &unknown, Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest"}}},
		mutate.IndexAddendum{Add: testImage(t, armv7, v1.Config{})},
		// No attestation (no annotation), but no runtime selects it either.
		mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &unknown}},
	)
	idx = roundTrip(t, idx)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	r, err := Index(context.Background(), idx, Options{Platforms: []v1.Platform{amd64, arm64}})
	require.NoError(t, err)
	assert.Equal(t, []Finding{
		problem(CheckCoverage, "linux/arm64", "entry "+im.Manifests[1].Digest.String()+" is an image index (application/vnd.oci.image.index.v1+json), not an OCI or Docker image manifest"),
		problem(CheckCoverage, "", "entry "+im.Manifests[3].Digest.String()+" has no platform: clients cannot pick it"),
		problem(CheckCoverage, "linux/arm64", "missing from the index"),
	}, r.Problems)
	require.Len(t, r.Platforms, 1, "attestations, unknown/unknown and broken entries are not checked")
	assert.Equal(t, "linux/amd64", r.Platforms[0].Platform)
	assert.True(t, r.Platforms[0].OK())
}

func TestIndexEmpty(t *testing.T) {
	r, err := Index(context.Background(), roundTrip(t, empty.Index), Options{})
	require.NoError(t, err)
	assert.Equal(t, []Finding{problem(CheckCoverage, "", "index lists no image manifests")}, r.Problems)
	assert.False(t, r.OK())
}

func TestImageSingle(t *testing.T) {
	img := goodHelper(t, arm64, "arm64")
	tests := []struct {
		name     string
		expected []v1.Platform
		problems []string
		failures []string
	}{
		{name: "nothing expected: an index was", problems: []string{"single linux/arm64 image where a multi-arch index was expected; to check it as a single-platform image, expect exactly its platform (--platforms linux/arm64)"}},
		{name: "two expected", expected: []v1.Platform{amd64, arm64}, problems: []string{"single linux/arm64 image where a multi-arch index of linux/amd64,linux/arm64 was expected"}},
		{name: "the one expected", expected: []v1.Platform{arm64}},
		{name: "another one expected", expected: []v1.Platform{amd64}, failures: []string{"image is linux/arm64, expected linux/amd64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Image(context.Background(), img, Options{Platforms: tt.expected, Contract: ContractHelper})
			require.NoError(t, err)
			var problems []string
			for _, p := range r.Problems {
				assert.Equal(t, "linux/arm64", p.Platform)
				problems = append(problems, p.Reason)
			}
			assert.Equal(t, tt.problems, problems)
			var failures []string
			for _, c := range r.Platforms[0].Checks {
				if !c.OK {
					failures = append(failures, c.Reason)
				}
			}
			assert.Equal(t, tt.failures, failures)
			d, err := img.Digest()
			require.NoError(t, err)
			assert.Equal(t, d.String(), r.Digest)
			assert.Equal(t, tt.problems == nil && tt.failures == nil, r.OK())
			var b bytes.Buffer
			require.NoError(t, WriteTable(&b, "x86_64-v17.10.0", r))
			if r.OK() {
				assert.NotContains(t, b.String(), "index was expected")
				assert.Contains(t, b.String(), " PASS\n")
			}
		})
	}

	// A per-arch arm image whose config names no variant is what the
	// runtime takes for v7: it passes, with a warning.
	arm := testImage(t, plat("linux", "arm", ""), v1.Config{})
	r, err := Image(context.Background(), arm, Options{Platforms: []v1.Platform{armv7}})
	require.NoError(t, err)
	assert.True(t, r.OK(), failures(r))
	assert.Contains(t, warnings(r), "linux/arm coverage: the config says linux/arm without a variant; runtimes take it as linux/arm/v7")
	r, err = Image(context.Background(), arm, Options{Platforms: []v1.Platform{plat("linux", "arm", "v6")}})
	require.NoError(t, err)
	assert.False(t, r.OK(), "but not for v6")
}

func TestOwnLayers(t *testing.T) {
	// Without BuildKit history every layer is checked, and the report says so.
	img := testImage(t, arm64, v1.Config{}, base(tartest.File("usr/bin/busybox", 0o755, bins["amd64"])), base(tartest.File("usr/bin/x", 0o755, bins["arm64"])))
	r, err := Image(context.Background(), img, Options{Platforms: []v1.Platform{arm64}})
	require.NoError(t, err)
	assert.Equal(t, []string{"linux/arm64 arch: /usr/bin/busybox is ELF 64-bit LSB x86-64 (linux/amd64), not linux/arm64"}, failures(r))
	assert.Equal(t, []string{"linux/arm64 arch: the history does not say which layers are the image's own (no buildkit.dockerfile.v0 entries matching the layers); checked all of them"}, warnings(r))

	// With it, only own layers are: the amd64 base binary is not looked at.
	img = testImage(t, arm64, v1.Config{}, base(tartest.File("usr/bin/busybox", 0o755, bins["amd64"])), own(tartest.File("usr/bin/x", 0o755, bins["arm64"]), tartest.File("usr/bin/notes", 0o755, []byte("#!/bin/sh\n"))))
	r, err = Image(context.Background(), img, Options{Platforms: []v1.Platform{arm64}})
	require.NoError(t, err)
	assert.Empty(t, failures(r))
	assert.Contains(t, r.Platforms[0].Checks, Check{Name: CheckArch, OK: true, Reason: "1 ELF executable in the image's own layers (2 of 2) matches linux/arm64"})

	own, matched := ownLayers(&v1.ConfigFile{History: []v1.History{{Comment: ownComment}, {EmptyLayer: true}, {}}}, 2)
	assert.True(t, matched)
	assert.Equal(t, []bool{true, false}, own)
	own, matched = ownLayers(&v1.ConfigFile{History: []v1.History{{Comment: ownComment}}}, 2)
	assert.False(t, matched)
	assert.Equal(t, []bool{true, true}, own)
}

func TestOptionsValidation(t *testing.T) {
	idx := testIndex(t, listed{amd64, testImage(t, amd64, v1.Config{})})
	for _, o := range []struct {
		opts Options
		want string
	}{
		{Options{Contract: "gitlab"}, `contract "gitlab"`},
		{Options{Jobs: -1}, "jobs -1"},
		{Options{RunTimeout: -1}, "run timeout"},
	} {
		_, err := Index(context.Background(), idx, o.opts)
		assert.ErrorContains(t, err, o.want)
	}
}

func TestIndexJobsKeepOrder(t *testing.T) {
	idx := testIndex(t,
		listed{arm64, goodHelper(t, arm64, "arm64")},
		listed{amd64, goodHelper(t, amd64, "amd64")},
		listed{armv7, testImage(t, armv7, v1.Config{})},
	)
	r, err := Index(context.Background(), idx, Options{Jobs: 3, AllFiles: true, Contract: ContractNone})
	require.NoError(t, err)
	var order []string
	for _, p := range r.Platforms {
		order = append(order, p.Platform)
	}
	assert.Equal(t, []string{"linux/arm64", "linux/amd64", "linux/arm/v7"}, order)
	assert.True(t, r.OK(), failures(r))
}

func TestIndexCanceled(t *testing.T) {
	idx := testIndex(t, listed{amd64, goodHelper(t, amd64, "amd64")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Index(ctx, idx, Options{})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestWriteTableAndJSON(t *testing.T) {
	r := &Report{
		Digest:   "sha256:0123456789abcdef0123",
		Problems: []Finding{problem(CheckCoverage, "linux/s390x", "missing from the index")},
		Platforms: []PlatformReport{
			{Platform: "linux/amd64", Digest: "sha256:aaaaaaaaaaaaaaaa", Checks: []Check{
				{Name: CheckCoverage, OK: true, Reason: "as expected"},
				{Name: CheckArch, OK: true, Reason: "1 ELF executable"},
				{Name: CheckArch, OK: true, Warning: true, Path: "/x", Reason: "/x: Go binary built with CGO_ENABLED=1"},
			}},
			{Platform: "linux/arm64", Digest: "sha256:bbbbbbbbbbbbbbbb", Checks: []Check{
				{Name: CheckCoverage, OK: true},
				{Name: CheckArch, Path: "/usr/bin/gitlab-runner-helper", Reason: "/usr/bin/gitlab-runner-helper is ELF 64-bit LSB x86-64 (linux/amd64), not linux/arm64"},
				{Name: CheckContract, Path: "/usr/bin/pgrep", Reason: "/usr/bin/pgrep missing: the Helm chart's readiness probe runs /usr/bin/pgrep"},
			}},
		},
	}
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, "gitlab-runner", r))
	assert.Equal(t, `gitlab-runner 0123456789ab FAIL
PLATFORM     DIGEST        COVERAGE  ARCH  CONTRACT
linux/amd64  aaaaaaaaaaaa  ok        ok    -
linux/arm64  bbbbbbbbbbbb  ok        FAIL  FAIL
linux/s390x  -             FAIL      -     -

linux/amd64 arch: warning: /x: Go binary built with CGO_ENABLED=1
linux/arm64 arch: FAIL: /usr/bin/gitlab-runner-helper is ELF 64-bit LSB x86-64 (linux/amd64), not linux/arm64
linux/arm64 contract: FAIL: /usr/bin/pgrep missing: the Helm chart's readiness probe runs /usr/bin/pgrep
linux/s390x coverage: FAIL: missing from the index
`, b.String())

	b.Reset()
	require.NoError(t, WriteReportJSON(&b, "gitlab-runner", r))
	doc := decodeDocument(t, b.Bytes())
	require.Len(t, doc.Images, 1)
	got := doc.Images[0]
	assert.Equal(t, "gitlab-runner", got.Reference)
	assert.False(t, got.OK)
	assert.True(t, got.Platforms[0].OK)
	assert.False(t, got.Platforms[1].OK)
	assert.Equal(t, r.Platforms[1].Checks, got.Platforms[1].Checks)
	assert.Equal(t, []Finding{
		{Platform: "linux/amd64", Check: CheckArch, Path: "/x", Reason: "/x: Go binary built with CGO_ENABLED=1", Severity: SeverityWarning},
		{Platform: "linux/arm64", Check: CheckArch, Path: "/usr/bin/gitlab-runner-helper", Reason: "/usr/bin/gitlab-runner-helper is ELF 64-bit LSB x86-64 (linux/amd64), not linux/arm64", Severity: SeverityFail},
		{Platform: "linux/arm64", Check: CheckContract, Path: "/usr/bin/pgrep", Reason: "/usr/bin/pgrep missing: the Helm chart's readiness probe runs /usr/bin/pgrep", Severity: SeverityFail},
		{Platform: "linux/s390x", Check: CheckCoverage, Reason: "missing from the index", Severity: SeverityFail},
	}, got.Findings)
	assert.Contains(t, b.String(), `"path": "/usr/bin/pgrep"`)
	assert.Contains(t, b.String(), `"check": "contract"`)

	b.Reset()
	require.NoError(t, WriteReportJSON(&b, "empty", &Report{Digest: "sha256:00"}))
	assert.True(t, decodeDocument(t, b.Bytes()).Images[0].OK)
	assert.Contains(t, b.String(), `"findings": []`, "empty lists are [], not null")
	assert.Contains(t, b.String(), `"platforms": []`)
}

// decodeDocument reads verify's JSON strictly (a field Document does not
// know fails) and checks its schemaVersion.
func decodeDocument(t *testing.T, data []byte) Document {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc Document
	require.NoError(t, dec.Decode(&doc), string(data))
	assert.Equal(t, JSONSchemaVersion, doc.SchemaVersion)
	return doc
}

// Platform's checks, handed to Index through Checked, are what Index
// reports for that entry: it does not read the image again, and checks it
// has no result for are run as usual.
func TestPlatformThenIndex(t *testing.T) {
	good, bad := goodHelper(t, amd64, "amd64"), goodHelper(t, arm64, "amd64") // an amd64 binary in the arm64 image
	idx := roundTrip(t, mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: good, Descriptor: v1.Descriptor{Platform: &amd64}},
		mutate.IndexAddendum{Add: bad, Descriptor: v1.Descriptor{Platform: &arm64}},
	))
	goodChecks, err := Platform(context.Background(), good, amd64, Options{Contract: ContractHelper})
	require.NoError(t, err)
	require.NotEmpty(t, goodChecks)
	for _, c := range goodChecks {
		assert.True(t, c.OK, c.Reason)
	}
	badChecks, err := Platform(context.Background(), bad, arm64, Options{Contract: ContractHelper})
	require.NoError(t, err)
	assert.False(t, (&PlatformReport{Checks: badChecks}).OK())

	goodDigest, err := good.Digest()
	require.NoError(t, err)
	var asked []string
	sentinel := Check{Name: CheckArch, OK: true, Reason: "from the builder"}
	opts := Options{Platforms: []v1.Platform{amd64, arm64}, Contract: ContractHelper,
		Checked: func(d v1.Hash, p v1.Platform) ([]Check, bool) {
			asked = append(asked, p.Architecture)
			if d == goodDigest && p.Architecture == "amd64" {
				return []Check{sentinel}, true
			}
			return nil, false
		}}
	opts.Jobs = 1 // asked is not locked
	r, err := Index(context.Background(), idx, opts)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"amd64", "arm64"}, asked)
	require.Len(t, r.Platforms, 2)
	assert.Contains(t, r.Platforms[0].Checks, sentinel, "amd64 came from Checked")
	assert.False(t, r.Platforms[1].OK(), "arm64 was checked by Index itself")
	assert.Equal(t, len(badChecks), len(r.Platforms[1].Checks)-1, "the same checks plus coverage")
}
