package main

import (
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// parsePlatforms reads a --platforms-style flag (flag is its name without
// dashes); nil means "not given" or "all". A spelling that is not the
// platform's own name (linux/x86_64, linux/arm) is said on stderr, one
// line for the list, unless the progress is JSON.
func parsePlatforms(cmd *cobra.Command, flag, s string) ([]v1.Platform, bool, error) {
	switch strings.TrimSpace(s) {
	case "":
		return nil, false, nil
	case "all":
		return nil, true, nil
	}
	ps, note, err := parsePlatformList(flag, s)
	if err != nil {
		return nil, false, usageError{err}
	}
	if p := cmd.Flags().Lookup("progress"); note != "" && (p == nil || p.Value.String() != "json") {
		fmt.Fprintln(cmd.ErrOrStderr(), note)
	}
	return ps, false, nil
}

// parsePlatformList parses a comma-separated list item by item, in order.
// note says what each item not written as its platform's name became, and
// which empty items were dropped ("" when every item is a name); two items
// that name one platform are an error naming both.
func parsePlatformList(flag, s string) (ps []v1.Platform, note string, err error) {
	var changes, given []string
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			after := "at the start"
			if i > 0 {
				after = fmt.Sprintf("after %q", strings.TrimSpace(strings.Split(s, ",")[i-1]))
			}
			changes = append(changes, "an empty item "+after+" dropped")
			continue
		}
		p, err := platform.Parse(item)
		if err != nil {
			return nil, "", fmt.Errorf("--%s: %w", flag, err)
		}
		name := platform.Format(p)
		if j := platform.Index(ps, p); j >= 0 {
			if given[j] == item {
				return nil, "", fmt.Errorf("--%s: %s is given twice; give it once", flag, item)
			}
			return nil, "", fmt.Errorf("--%s: %s and %s are both %s; give it once", flag, given[j], item, name)
		}
		if item != name {
			changes = append(changes, item+" -> "+name)
		}
		ps, given = append(ps, p), append(given, item)
	}
	if len(ps) == 0 {
		return nil, "", fmt.Errorf("--%s %q names no platform; give e.g. linux/amd64,linux/arm64", flag, s)
	}
	if len(changes) > 0 {
		note = flag + ": " + strings.Join(changes, ", ")
	}
	return ps, note, nil
}
