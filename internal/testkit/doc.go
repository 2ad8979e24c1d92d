// Package testkit holds the fixtures several packages' tests share: random
// images whose config names a platform, OCI indexes of them (also with a
// layer every platform shares), an in-process registry (with optional basic
// authentication, and a counter of blob downloads), a log sink safe for
// concurrent writers, the host tools the unit tests need (missing, a test
// fails), and the SPDX 2.3 JSON schema check of SBOMs. Only tests import it
// (internal/depcheck checks it).
package testkit
