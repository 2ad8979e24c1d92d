// Package outfile writes a file whole or not at all, and tells beforehand
// whether it can.
//
// Every file helperbuild writes for a reader (metadata, dotenv, part files,
// attestation files, a layout's index.json and blobs, cached layers) goes
// through Write: a temporary file beside the target, renamed into place only
// when writing it succeeded, so a reader sees the old file or the whole new
// one and a failed run leaves no half file. Missing parent directories are
// created when the file is written, never by Check. Files are created with mode 0644
// before the umask.
package outfile
