package merge

import (
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/platform"
)

// agreeOnRelease refuses parts of different revisions, versions, epochs or
// recipes, and parts not built from recipe when it is given.
func agreeOnRelease(parts []*part.File, recipe *part.Recipe) error {
	recipeOf := func(f *part.File) string {
		if f.Recipe == nil {
			return "none (config-free)"
		}
		return f.Recipe.Path + " " + f.Recipe.Digest.String()
	}
	for _, c := range []struct {
		what  string
		value func(*part.File) string
	}{
		{"revisions", func(f *part.File) string { return f.Revision }},
		{"helperbuild versions", func(f *part.File) string { return f.Helperbuild }},
		{"versions", func(f *part.File) string { return f.Version }},
		{"epochs", func(f *part.File) string { return f.Created.UTC().Format(time.RFC3339Nano) }},
		{"recipes", func(f *part.File) string {
			if f.Recipe == nil {
				return recipeOf(f)
			}
			return f.Recipe.Digest.String()
		}},
	} {
		if err := agree(parts, c.what, c.value); err != nil {
			return err
		}
	}
	if recipe == nil {
		return nil
	}
	switch got := parts[0].Recipe; {
	case got == nil:
		return fmt.Errorf("--config %s: the parts were built config-free (%s has no recipe); drop --config", recipe.Path, parts[0].Name())
	case got.Digest != recipe.Digest:
		return fmt.Errorf("the parts were built from a different recipe than --config %s (%s): %s was built from %s", recipe.Path, recipe.Digest, parts[0].Name(), recipeOf(parts[0]))
	}
	return nil
}

// agree fails when value differs between parts, naming each value and the
// parts that have it.
func agree(parts []*part.File, what string, value func(*part.File) string) error {
	var values []string
	holders := map[string][]string{}
	for _, f := range parts {
		v := value(f)
		if _, ok := holders[v]; !ok {
			values = append(values, v)
		}
		holders[v] = append(holders[v], f.Name())
	}
	if len(values) < 2 {
		return nil
	}
	groups := make([]string, len(values))
	for i, v := range values {
		shown := v
		if shown == "" {
			shown = `""`
		}
		groups[i] = shown + " in " + strings.Join(holders[v], ", ")
	}
	return fmt.Errorf("parts were built from different %s: %s; merge the parts of one pipeline", what, strings.Join(groups, "; "))
}

// releasePlatforms is the release's platform list: flag's, or the one
// every part records; source names where it came from, for messages.
func releasePlatforms(parts []*part.File, flag []v1.Platform) ([]v1.Platform, string, error) {
	if flag != nil {
		// Parts that agree on a list name the release their provenance
		// describes: an index of other platforms would contradict it.
		recorded := agree(parts, "platform lists", func(f *part.File) string { return strings.Join(f.Platforms, ",") }) == nil
		if given, built := platform.FormatList(flag), strings.Join(parts[0].Platforms, ","); recorded && given != built {
			return nil, "", fmt.Errorf("--platforms %s is not the release the parts were built for (%s, in %s); to release only %s, build the parts with push --by-digest --release-platforms %s and merge them without --platforms; to release the parts' list, leave --platforms out",
				given, built, parts[0].Name(), given, given)
		}
		return flag, "--platforms", nil
	}
	if err := agree(parts, "platform lists", func(f *part.File) string { return strings.Join(f.Platforms, ",") }); err != nil {
		if parts[0].Recipe == nil {
			return nil, "", fmt.Errorf("%w (config-free parts list only the platforms their job built): give merge --platforms in the release's order, e.g. --platforms %s", err, strings.Join(allPlatforms(parts), ","))
		}
		return nil, "", err
	}
	list, err := parsePlatforms(parts[0].Platforms)
	if err != nil {
		return nil, "", fmt.Errorf("part file %s: %w", parts[0].Name(), err)
	}
	if parts[0].Recipe != nil {
		return list, "the recipe's platforms", nil
	}
	return list, "the platforms of the push", nil
}

// allPlatforms lists every platform of parts once, in order.
func allPlatforms(parts []*part.File) []string {
	var out []string
	for _, f := range parts {
		for _, p := range f.Platforms {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

func parsePlatforms(ss []string) ([]v1.Platform, error) {
	out := make([]v1.Platform, 0, len(ss))
	for _, s := range ss {
		p, err := platform.Parse(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
