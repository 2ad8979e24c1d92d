package release

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/helperbuild/helperbuild/internal/attest"
	"github.com/helperbuild/helperbuild/internal/attestspec"
	"github.com/helperbuild/helperbuild/internal/join"
	"github.com/helperbuild/helperbuild/internal/publish"
)

// maxCarriedStatement bounds one in-toto statement a joined index carries
// over from a source (verify --attestations reads no larger one).
const maxCarriedStatement = 64 << 20

// carried is what a joined platform image brings from its source.
type carried struct {
	// statements are the in-toto statements of the source's attestation
	// manifests and in-toto referrers, for the one attestation manifest
	// of the platform (--attest index): the source's index's first, then
	// the referrers' SBOMs, provenances and others, each once.
	statements []attest.Statement
	// kept are the source index's attestation manifests listed in the
	// joined index as they are: every one without --attest index, else
	// those holding something other than in-toto statements.
	kept []join.Attached
	// referrers are the source's referrers, copied as they are;
	// cosignTags its cosign tags (.sig, .att).
	referrers  []publish.Referrer
	cosignTags []publish.CosignTag
}

// carryOver sorts what e brings: with merge (--attest index) the
// statements of its source's attestation manifests and in-toto referrers
// go into the platform's one attestation manifest, so that a reader that
// shows one provenance per platform (buildx imagetools) finds the build's
// first; every referrer is copied as it is either way.
func carryOver(e join.Entry, merge bool) (carried, error) {
	var c carried
	for _, r := range e.Referrers {
		c.referrers = append(c.referrers, publish.Referrer{Subject: e.Descriptor.Digest, Manifest: r.Manifest, Entry: r.Descriptor})
	}
	for _, tg := range e.Tagged {
		c.cosignTags = append(c.cosignTags, publish.CosignTag{Tag: tg.Tag, Image: tg.Image})
	}
	if !merge {
		c.kept = e.Attestations
		return c, nil
	}
	seen := map[string]bool{}
	add := func(sts []attest.Statement) {
		for _, s := range sts {
			if d := s.Digest().String(); !seen[d] {
				seen[d] = true
				c.statements = append(c.statements, s)
			}
		}
	}
	for _, a := range e.Attestations {
		sts, ok, err := inTotoStatements(a)
		if err != nil {
			return c, fmt.Errorf("%s: attestation manifest %s: %w", e.Source, a.Descriptor.Digest, err)
		}
		if !ok {
			c.kept = append(c.kept, a)
			continue
		}
		add(sts)
	}
	var fromReferrers []attest.Statement
	for _, r := range e.Referrers {
		sts, ok, err := inTotoStatements(r)
		if err != nil {
			return c, fmt.Errorf("%s: referrer %s: %w", e.Source, r.Descriptor.Digest, err)
		}
		if ok {
			fromReferrers = append(fromReferrers, sts...)
		}
	}
	slices.SortStableFunc(fromReferrers, func(a, b attest.Statement) int { return cmp.Compare(predicateRank(a), predicateRank(b)) })
	add(fromReferrers)
	return c, nil
}

// predicateRank orders carried statements: SBOMs, then provenances, then
// the rest.
func predicateRank(s attest.Statement) int {
	switch s.PredicateType {
	case attestspec.PredicateSPDX:
		return 0
	case attestspec.PredicateSLSA:
		return 1
	}
	return 2
}

// inTotoStatements reads the statements of a, an attestation manifest or
// an in-toto referrer; ok is false when a holds a layer that is no in-toto
// statement (a DSSE envelope, say), which is then kept whole.
func inTotoStatements(a join.Attached) (sts []attest.Statement, ok bool, err error) {
	m, err := a.Manifest.Manifest()
	if err != nil {
		return nil, false, err
	}
	if len(m.Layers) == 0 {
		return nil, false, nil
	}
	for _, l := range m.Layers {
		if string(l.MediaType) != attestspec.MediaTypeInToto || l.Size > maxCarriedStatement {
			return nil, false, nil
		}
		layer, err := a.Manifest.LayerByDigest(l.Digest)
		if err != nil {
			return nil, false, err
		}
		rc, err := layer.Compressed()
		if err != nil {
			return nil, false, err
		}
		data, err := io.ReadAll(io.LimitReader(rc, maxCarriedStatement+1))
		rc.Close()
		if err != nil {
			return nil, false, fmt.Errorf("statement %s: %w", l.Digest, err)
		}
		var st struct {
			PredicateType string `json:"predicateType"`
		}
		if json.Unmarshal(data, &st) != nil || st.PredicateType == "" || len(data) > maxCarriedStatement {
			return nil, false, nil
		}
		sts = append(sts, attest.Statement{PredicateType: st.PredicateType, JSON: data})
	}
	return sts, true, nil
}
