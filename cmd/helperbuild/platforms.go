package main

import (
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/helperbuild/helperbuild/internal/platform"
)

// parsePlatforms reads a --platforms-style flag (flag is its name without
// dashes); nil means "not given" or "all". What each spelling that is not
// the platform's own name became (linux/x86_64, linux/arm) is said on
// stderr, one line for the list, unless the progress is JSON.
func parsePlatforms(cmd *cobra.Command, flag, s string) ([]v1.Platform, bool, error) {
	switch strings.TrimSpace(s) {
	case "":
		return nil, false, nil
	case "all":
		return nil, true, nil
	}
	ps, changes, err := platform.ParseListAsGiven(s)
	if err != nil {
		return nil, false, usagef("--%s: %w", flag, err)
	}
	if p := cmd.Flags().Lookup("progress"); len(changes) > 0 && (p == nil || p.Value.String() != "json") {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", flag, strings.Join(changes, ", "))
	}
	return ps, false, nil
}
