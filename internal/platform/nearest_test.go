package platform

import "testing"

func TestNearest(t *testing.T) {
	flags := []string{"platforms", "release-platforms", "progress", "tag", "image"}
	for word, want := range map[string]string{
		"platfroms": "platforms", // a swapped pair
		"platform":  "platforms",
		"tags":      "tag",
		"imge":      "image",
		"colour":    "", // nothing close: no guess
		"":          "",
	} {
		if got := Nearest(word, flags); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", word, got, want)
		}
	}
}
