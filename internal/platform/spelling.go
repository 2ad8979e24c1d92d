package platform

import (
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// ParseListAsGiven parses a comma-separated list item by item, in order,
// for a person who typed it: changes says what each item not written as
// its platform's name became ("linux/x86_64 -> linux/amd64") and which
// empty items were dropped; two items naming one platform are an error
// naming both. ParseList, for lists a program wrote, drops them quietly.
func ParseListAsGiven(s string) (ps []v1.Platform, changes []string, err error) {
	items := strings.Split(s, ",")
	var given []string
	for i, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			after := "at the start"
			if i > 0 {
				after = fmt.Sprintf("after %q", strings.TrimSpace(items[i-1]))
			}
			changes = append(changes, "an empty item "+after+" dropped")
			continue
		}
		p, err := Parse(item)
		if err != nil {
			return nil, nil, err
		}
		name := Format(p)
		if j := Index(ps, p); j >= 0 {
			if given[j] == item {
				return nil, nil, fmt.Errorf("%s is given twice; give it once", item)
			}
			return nil, nil, fmt.Errorf("%s and %s are both %s; give it once", given[j], item, name)
		}
		if item != name {
			changes = append(changes, item+" -> "+name)
		}
		ps, given = append(ps, p), append(given, item)
	}
	if len(ps) == 0 {
		return nil, nil, fmt.Errorf("%q names no platform; give e.g. linux/amd64,linux/arm64", s)
	}
	return ps, changes, nil
}
