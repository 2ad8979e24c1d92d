package dockerfiles

import "embed"

//go:embed runner-helper/Dockerfile runner/Dockerfile
var files embed.FS

// Default returns the built-in Dockerfile for the image named imageName:
// its path inside this package (for messages, e.g. "runner-helper/Dockerfile")
// and its bytes. ok is false for any name but "gitlab-runner-helper" and
// "gitlab-runner".
func Default(imageName string) (path string, data []byte, ok bool) {
	switch imageName {
	case "gitlab-runner-helper":
		path = "runner-helper/Dockerfile"
	case "gitlab-runner":
		path = "runner/Dockerfile"
	default:
		return "", nil, false
	}
	data, err := files.ReadFile(path)
	if err != nil {
		// The path is one of the embedded files: a failure is a build defect.
		panic("dockerfiles: embedded " + path + ": " + err.Error())
	}
	return path, data, true
}

// RequiredContexts returns the named build contexts the built-in Dockerfile
// of imageName copies from, or nil when there is no built-in Dockerfile for it.
func RequiredContexts(imageName string) []string {
	switch imageName {
	case "gitlab-runner-helper":
		return []string{"binary_dir"}
	case "gitlab-runner":
		return []string{"binary_dir", "packaging_dir"}
	default:
		return nil
	}
}
