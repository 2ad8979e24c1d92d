package layer

import "os"

// SelfID is the running executable's Go build ID (the go command's, which
// changes whenever the executable's content does), or "" when it has none
// of the go command's shape or cannot be read. A cache of what this
// executable computed from content-addressed inputs keys its records with
// it, so that a changed helperbuild never reads a record an older one
// wrote. It reads the executable's ELF notes: call it once per run.
func SelfID() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	id, ok := readGoBuildID(f)
	if !ok {
		return ""
	}
	return id.id
}
