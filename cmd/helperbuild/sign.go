package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/helperbuild/helperbuild/internal/release"
)

// signFlags are push's and merge's signing flags.
type signFlags struct {
	sign   bool
	key    string // a file, or env://NAME
	format string
	tlog   string // a Rekor URL, or "none"
	fulcio string
}

const (
	defaultRekor  = "https://rekor.sigstore.dev"
	defaultFulcio = "https://fulcio.sigstore.dev"
)

func (f *signFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&f.sign, "sign", false, "sign every index and platform manifest (cosign-compatible) before any tag moves: with --sign-key, else keylessly with SIGSTORE_ID_TOKEN")
	fl.StringVar(&f.key, "sign-key", "", "with --sign: cosign.key (password from COSIGN_PASSWORD) or a PKCS#8 ECDSA P-256 PEM file, or env://NAME for a variable holding either")
	fl.StringVar(&f.format, "sign-format", "auto", "with --sign: bundle (Sigstore bundle as OCI referrer), legacy (cosign's sha256-<hex>.sig tag), legacy-referrer (cosign's legacy signature as an OCI 1.1 referrer, what cosign verify --experimental-oci11 and GitLab's registry UI read) or auto (bundle, legacy where the registry resolves sha256-<hex> to the image)")
	fl.StringVar(&f.tlog, "sign-tlog", defaultRekor, `with --sign: the Rekor transparency log to enter each signature in, or "none" (air-gapped, key-based)`)
	fl.StringVar(&f.fulcio, "sign-fulcio-url", defaultFulcio, "with --sign, keyless: the Fulcio certificate authority")
}

// request turns the flags and the environment (an env://NAME key,
// COSIGN_PASSWORD, SIGSTORE_ID_TOKEN) into release's SignRequest, which
// reads a key file; nil without --sign. An env://NAME key is read here,
// and refused here when its variable is empty: release never sees the
// form, only the PEM.
func (f *signFlags) request(env Env) (*release.SignRequest, error) {
	if !f.sign {
		if f.key != "" {
			return nil, usagef("--sign-key without --sign: add --sign to sign the release")
		}
		return nil, nil
	}
	req := &release.SignRequest{Format: f.format, FulcioURL: f.fulcio, KeyName: f.key, Password: []byte(env.Get("COSIGN_PASSWORD"))}
	_, set := env.Map()["COSIGN_PASSWORD"]
	req.PasswordUnset = !set
	if f.tlog != "none" {
		req.RekorURL = f.tlog
	}
	if f.key == "" {
		req.IDToken = env.Get("SIGSTORE_ID_TOKEN")
	} else if name, ok := strings.CutPrefix(f.key, "env://"); ok {
		// The one place that reads an env:// key: release gets the PEM.
		if req.KeyPEM = []byte(env.Get(name)); len(req.KeyPEM) == 0 {
			return nil, usagef("--sign-key env://%s: the variable is empty or not set", name)
		}
	}
	return req, nil
}
