// Package gitmeta asks git about the checkout being built: the version
// (`git describe --tags --always`), the revision, the branch, the HEAD commit
// time and the origin URL. It never relies on Go's embedded VCS stamping,
// which is off where GOFLAGS=-buildvcs=false.
package gitmeta
