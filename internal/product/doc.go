// Package product is what a release's sources (build, merge, join) hand to
// its one finish: the images, their platform manifests and their
// attestations.
package product
