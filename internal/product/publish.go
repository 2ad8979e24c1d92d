package product

import "github.com/helperbuild/helperbuild/internal/publish"

// Publish is im as publish takes it: its index, its tags, each platform's
// tags and attestation referrers. The destination says where it goes.
func (im Image) Publish() publish.Image {
	p := publish.Image{Name: im.Name, Index: im.Index, Tags: im.Tags}
	for _, pl := range im.Platforms {
		for _, t := range pl.Tags {
			p.PlatformTags = append(p.PlatformTags, publish.PlatformTag{Manifest: pl.Digest, Tag: t})
		}
		p.Referrers = append(p.Referrers, pl.Referrers...)
		p.CosignTags = append(p.CosignTags, pl.CosignTags...)
		if pl.Attestation != nil {
			for _, r := range pl.Attestation.Referrers {
				p.Referrers = append(p.Referrers, publish.Referrer{Subject: pl.Digest, Manifest: r, Entry: r.IndexEntry()})
			}
		}
	}
	return p
}
