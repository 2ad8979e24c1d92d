// Package rootfs models the filesystem a container runtime presents after
// applying an image's layers in order, as metadata only: nothing is
// unpacked and no file contents are held.
//
// Flatten streams each layer's tar once (a caller that also wants contents in
// the same pass builds the FS with New and Add, streaming with EachEntry).
// Layers apply with overlayfs semantics: ".wh.NAME" deletes NAME from lower
// layers, ".wh..wh..opq" hides a directory's lower contents, a non-directory
// replaces a directory and everything below it, a directory replaces a
// non-directory on its path, a directory over a directory merges, and a
// hardlink shares its target's metadata and contents. Entry names are cleaned
// into absolute paths; ".." never leaves the root. Entries a runtime would
// refuse (a hardlink to nothing) are not added; Issues lists them.
//
// Lookup reads the tree as stored; Resolve follows symlinks, relative and
// absolute, the way the kernel does inside a chroot at the image's root (at
// most 40 links, ".." stops at the root), and also says where creating a
// missing path would land. Walk visits every entry in lexical order, parents
// first. A regular file's Info names its Source (layer and header number),
// so ReadSources can stream back just the contents a caller needs.
//
// Entry is one item to put into an image's filesystem (a file from the host,
// a directory or a symlink, with its mode and owner): what a Dockerfile's
// COPY yields and what package layer writes. Place puts a new layer's
// entries where BuildKit would on the FS they go on (parents resolved through
// its symlinks, its parent directories' mode and owner kept), and HasDir is
// the directory test a Dockerfile's COPY and WORKDIR make on it.
//
// FileMode and UnixMode are helperbuild's one mapping between Unix mode bits
// (tar headers, an octal --chmod: 04000 setuid, 02000 setgid, 01000 sticky)
// and fs.FileMode; ModeBits are the bits either carries besides the type.
//
// An FS is safe for concurrent reads once built; Add must not run
// concurrently with anything else.
package rootfs
