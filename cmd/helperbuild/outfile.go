package main

import "github.com/helperbuild/helperbuild/internal/outfile"

// checkOutputFile fails early, before anything is built or published,
// when the file flag (--metadata-file, --dotenv) names could not be
// written.
func checkOutputFile(flag, path string) error {
	if err := outfile.Check(flag+" "+path, path); err != nil {
		return usageError{err}
	}
	return nil
}
