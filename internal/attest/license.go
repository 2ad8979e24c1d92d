package attest

import "strings"

// spdxLicense returns a package's declared license for SPDX: the field as
// written when it parses as an SPDX license expression (identifiers,
// optionally with "+", combined with AND, OR, WITH and parentheses), else
// NOASSERTION with the field kept in a comment. Whether each identifier is
// on the SPDX license list is not checked: helperbuild carries no copy of
// the list.
func spdxLicense(field string) (declared, comment string) {
	f := strings.TrimSpace(field)
	if f == "" {
		return noAssertion, ""
	}
	if validLicenseExpr(f) {
		return f, ""
	}
	return noAssertion, "license as written by the package database: " + f
}

// validLicenseExpr parses s by the SPDX 2.3 license expression grammar
// (annex D), without the license list.
func validLicenseExpr(s string) bool {
	toks := licenseTokens(s)
	p := licenseParser{toks: toks}
	return p.expr() && p.i == len(toks)
}

func licenseTokens(s string) []string {
	s = strings.NewReplacer("(", " ( ", ")", " ) ").Replace(s)
	return strings.Fields(s)
}

type licenseParser struct {
	toks []string
	i    int
}

func (p *licenseParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

// expr = term { ("AND" | "OR") term }
func (p *licenseParser) expr() bool {
	if !p.term() {
		return false
	}
	for t := p.peek(); t == "AND" || t == "OR"; t = p.peek() {
		p.i++
		if !p.term() {
			return false
		}
	}
	return true
}

// term = "(" expr ")" | id [ "WITH" id ]
func (p *licenseParser) term() bool {
	if p.peek() == "(" {
		p.i++
		if !p.expr() || p.peek() != ")" {
			return false
		}
		p.i++
		return true
	}
	if !licenseID(p.peek(), true) {
		return false
	}
	p.i++
	if p.peek() == "WITH" {
		p.i++
		if !licenseID(p.peek(), false) {
			return false
		}
		p.i++
	}
	return true
}

// licenseID reports whether t is an idstring ([A-Za-z0-9.-]+), with an
// optional trailing "+" where plus is allowed, and not an operator; a "-"
// at either end is refused too.
func licenseID(t string, plus bool) bool {
	if plus {
		t = strings.TrimSuffix(t, "+")
	}
	if t == "" || t == "AND" || t == "OR" || t == "WITH" {
		return false
	}
	return spdxIDChars(t) == t // also refuses a "-" at either end
}
