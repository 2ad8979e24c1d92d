package main

import (
	"fmt"
	"strings"

	"github.com/helperbuild/helperbuild/internal/outfile"
	"github.com/helperbuild/helperbuild/internal/publish"
	"github.com/helperbuild/helperbuild/internal/recipe"
	"github.com/helperbuild/helperbuild/internal/release"
)

// GitLab's limits on an artifacts:reports:dotenv file (the defaults of
// GitLab's dotenv_variables and dotenv_size application limits): a file
// beyond them fails the job that uploads it.
const (
	dotenvMaxVariables = 20
	dotenvMaxBytes     = 5 * 1024
)

// dotenvImage is what the dotenv file says about one image: its name and
// whether it has a tag (then it gets a <NAME>_TAG too).
type dotenvImage struct {
	name   string
	tagged bool
}

// dotenvKeys are the variable names of images, checked against GitLab's
// rules: a key is [A-Za-z0-9_]+, two images may not give the same key,
// and there are at most dotenvMaxVariables. flag names the file in the
// error.
func dotenvKeys(flag string, images []dotenvImage) ([]string, error) {
	var keys []string
	from := map[string]string{}
	for _, img := range images {
		key := envName(img.name)
		if other, ok := from[key]; ok {
			return nil, usagef("%s: images %s and %s both give %s_IMAGE; rename one, or select one with --image", flag, other, img.name, key)
		}
		from[key] = img.name
		keys = append(keys, key+"_IMAGE")
		if img.tagged {
			keys = append(keys, key+"_TAG")
		}
	}
	if len(keys) > dotenvMaxVariables {
		return nil, usagef("%s: %d images need %d variables, more than the %d GitLab accepts in one dotenv report; select at most %d images with --image, or write one report per job",
			flag, len(images), len(keys), dotenvMaxVariables, dotenvMaxVariables/2)
	}
	return keys, nil
}

// envName is an image name as a variable name: upper case, every other
// character than A-Z, 0-9 and _ replaced by _ (gitlab-runner-helper gives
// GITLAB_RUNNER_HELPER).
func envName(image string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(image) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// checkDotenv fails before anything compiles when the --dotenv file of
// plan could not be written, or would hold more than GitLab accepts.
func checkDotenv(path string, plan *recipe.Plan) error {
	var images []dotenvImage
	for _, img := range plan.Images {
		images = append(images, dotenvImage{name: img.Name, tagged: len(img.Tags) > 0})
	}
	return checkDotenvFile(path, images)
}

// checkDotenvFile is checkDotenv for a release of images (merge knows
// them from its parts).
func checkDotenvFile(path string, images []dotenvImage) error {
	if err := checkOutputFile("--dotenv", path); err != nil {
		return err
	}
	_, err := dotenvKeys("--dotenv "+path, images)
	return err
}

// dotenv is res at d as GitLab's artifacts:reports:dotenv reads it, one
// KEY=VALUE line per variable: per image <NAME>_IMAGE, its reference
// pinned by the index digest, and <NAME>_TAG, its first tag that is not
// latest (latest when it is the only one), as a full reference.
func dotenv(res *release.Result, d publish.Destination, flag string) ([]byte, error) {
	var images []dotenvImage
	var values []string
	for _, img := range res.Images {
		pi := img.Publish()
		tag := dotenvTag(d.IndexTags(pi))
		images = append(images, dotenvImage{name: img.Name, tagged: tag != ""})
		values = append(values, d.Pinned(pi, img.Digest))
		if tag != "" {
			values = append(values, tag)
		}
	}
	keys, err := dotenvKeys(flag, images)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for i, k := range keys {
		if strings.ContainsAny(values[i], "\n\r\"' #") {
			return nil, fmt.Errorf("%s: the value of %s, %q, is not one a dotenv report can carry", flag, k, values[i])
		}
		fmt.Fprintf(&b, "%s=%s\n", k, values[i])
	}
	if b.Len() > dotenvMaxBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d GitLab accepts in one dotenv report; select fewer images with --image", flag, b.Len(), dotenvMaxBytes)
	}
	return []byte(b.String()), nil
}

// dotenvTag is the tag a later job most likely wants: the first that is
// not latest, else latest; "" when there is none.
func dotenvTag(tags []string) string {
	for _, t := range tags {
		if !strings.HasSuffix(t, ":latest") && t != "latest" {
			return t
		}
	}
	if len(tags) > 0 {
		return tags[0]
	}
	return ""
}

// writeDotenv writes the --dotenv file of res at d to path, atomically;
// nothing is written when GitLab would reject it. Push, build and merge
// all write it through here.
func writeDotenv(path string, res *release.Result, d publish.Destination) error {
	data, err := dotenv(res, d, "--dotenv "+path)
	if err != nil {
		return err
	}
	return outfile.WriteBytes(path, data)
}
