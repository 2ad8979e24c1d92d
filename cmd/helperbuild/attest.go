package main

import (
	"github.com/spf13/pflag"

	"github.com/helperbuild/helperbuild/internal/release"
)

// attestFlags are --attest, --provenance and --attest-dir.
type attestFlags struct {
	mode       string
	provenance string
	dir        string
}

func (f *attestFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.mode, "attest", string(release.AttestIndex), "where each platform image's SPDX SBOM and SLSA provenance go: index (in the image index, as docker buildx does; every registry, layouts included), referrers (OCI 1.1 referrers: the registry's referrers API, else the sha256-<digest> fallback tag) or none")
	fl.StringVar(&f.provenance, "provenance", release.DefaultProvenance, "provenance detail: min (nothing run-specific: the index digest stays reproducible) or max (adds the CI job, runner and start/finish times: the index digest then changes on every run)")
	fl.StringVar(&f.dir, "attest-dir", "", "also write each platform's statements as files under this directory (IMAGE/OS-ARCH[-VARIANT]/{sbom.spdx.json,sbom.intoto.json,provenance.intoto.json})")
}
