package attest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSPDXLicense(t *testing.T) {
	for in, want := range map[string]string{
		"MIT":                                   "MIT",
		"GPL-2.0-or-later":                      "GPL-2.0-or-later",
		"MPL-2.0 AND MIT":                       "MPL-2.0 AND MIT",
		"(MIT OR Apache-2.0) AND BSD-3-Clause":  "(MIT OR Apache-2.0) AND BSD-3-Clause",
		"GPL-2.0+ WITH Classpath-exception-2.0": "GPL-2.0+ WITH Classpath-exception-2.0",
		"LicenseRef-custom":                     "LicenseRef-custom",
		"MIT BSD":                               noAssertion,
		"GPL2+ or LGPL":                         noAssertion,
		"(MIT":                                  noAssertion,
		"MIT AND":                               noAssertion,
		"Public Domain":                         noAssertion,
		"MIT WITH":                              noAssertion,
	} {
		got, comment := spdxLicense(in)
		assert.Equal(t, want, got, in)
		if want == noAssertion {
			assert.Contains(t, comment, in)
		}
	}
}
