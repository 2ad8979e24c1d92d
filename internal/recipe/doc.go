// Package recipe reads helperbuild.yaml and turns it, together with the
// release's version variables, into a Plan: every template rendered, every
// name, tag, path and platform checked, before anything is compiled.
//
// Reading is strict. Unknown keys, values of the wrong shape, duplicate keys,
// YAML aliases and a second document are errors; every error is one line that
// starts with file:line ("helperbuild.yaml:7: unknown key "ldflag" in build
// (known: flags, ldflags, env)").
//
// Templates are Go text/template with missingkey=error. Every template sees
// .Version, .Revision, .Branch, .Date (RFC 3339, UTC) and .Env.NAME; the
// per-platform ones (binaries' output, images' platform_tags and base) also see
// .OS, .Arch, .Variant and .GitLabArch (x86_64, arm64, arm, ...). Templated
// fields: build.flags, build.ldflags, build.env, binaries[].output,
// images[].args, images[].tags, images[].platform_tags, images[].base,
// images[].windows.bases. Names,
// mains, dockerfiles, contexts and platforms are taken literally.
//
// Platforms: the top-level list applies to every image without its own
// `platforms:`; an image's own list must be a subset of the top-level one.
// Selection.Platforms, when given, replaces the top-level list, and an image
// with its own list keeps only the platforms in both lists (in the selection's
// order). An image left with no platform is an error, as is a selected
// platform that no selected image builds. Binaries are built for the union of
// the selected images' platforms.
//
// A Plan holds one record per platform: Plan.Platforms the platforms binaries
// are compiled for (each parsed and normalised once, with every binary's
// output name), Image.Platforms those of each image (with its base override
// and platform tags). Stages take the records; a platform is formatted only
// for messages and file names.
//
// Windows: an image's Windows platforms (windows/amd64:10.0.20348) take their
// base from its windows section, one per Windows build (windows.bases,
// keyed "10.0.20348"), and hold one binary (windows.binary, a
// binaries[].main; optional with one binary): Image.Windows and
// ImagePlatform.Base. The Dockerfile is not applied to them; a base: entry
// for a Windows platform is an error. A Windows platform's outputs get
// -OSVERSION, and are "" for binaries none of its Windows entries holds.
//
// Config-free mode (PackagePlan) needs no config: one binary on a base, with
// a generated Dockerfile. Without platforms the base decides them, and the
// plan for those is made by ForBasePlatforms once the base is read.
//
// Paths: mains, dockerfiles and contexts are relative to the directory of the
// config file (Plan.Dir). A dockerfile must stay inside that directory; a
// context may be anywhere but must be an existing directory; the context value
// "binaries:" stands for the directory of cross-compiled outputs. An image
// named gitlab-runner-helper or gitlab-runner without a dockerfile uses the
// built-in recipe of package dockerfiles.
package recipe
