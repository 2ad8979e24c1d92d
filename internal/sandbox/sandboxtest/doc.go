// Package sandboxtest holds what tests of sandboxed runs share: the
// adversary program (../testdata/adversary) cross-compiled, a tracker that
// finds processes a sandbox left behind, and a way to run a test where the
// kernel refuses new user namespaces. Only tests import it.
package sandboxtest
