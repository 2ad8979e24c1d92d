// Package layer turns a list of rootfs.Entry values into one deterministic
// OCI layer (application/vnd.oci.image.layer.v1.tar+gzip) stored as a file on
// disk.
//
// Write streams in a single pass: tar writer -> sha256 (DiffID) -> gzip ->
// sha256 and byte count (digest, size) -> file. The gzip stream is deflate
// in 1 MiB blocks that Options.Threads goroutines may compress at once;
// the bytes do not depend on how many did. File contents are copied
// through one fixed buffer, so memory does not grow with file or layer size;
// no layer is ever held in memory. The result is a file-backed v1.Layer that
// can be read any number of times; Open rebuilds one from a cached file.
// Uncompressed on a layer Write returned does not decompress the blob: it
// writes the tar stream again from the same entries (tar and sha256 run
// several times faster than inflate) and fails at the end of the stream,
// before its last bytes, unless the stream hashes to the DiffID, the hash
// of the bytes that were compressed. Readers such as verification thus see
// exactly the layer's contents; that the blob decompresses to them is
// gzip's promise (and a registry checks the blob's digest on upload).
//
// With Options.Follow, Write hands out a Stream before the first byte: its
// readers follow the blob file as it grows (an upload runs beside the
// compression) and see its end only when the owner allows it, so what an
// upload commits is what the owner checked.
//
// Same entries (in any order) and same epoch give a byte-identical blob:
// entries are sorted by path with parents first, tar headers are written by
// hand (no user or group names, mtime = epoch, no access or change time,
// uid/gid and mode exactly as given, PAX format used only where USTAR cannot
// hold a value), and the gzip header carries no name, no time and OS 255.
// The DiffID depends only on the entries, their file contents and the epoch
// (and Go's archive/tar encoding); the compressed digest also depends on the
// gzip level and the compressor version pinned in go.mod (see DefaultLevel).
//
// With Options.Windows the same entries are written in the layer format
// Windows' containerd and Docker import: under Files/, with an empty Hives/
// and the MSWINDOWS.rawsd and MSWINDOWS.fileattr PAX records on every
// header (windows.go); equally deterministic, and cached apart.
package layer
