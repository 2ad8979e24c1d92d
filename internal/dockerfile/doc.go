// Package dockerfile interprets the part of a Dockerfile that needs no
// container runtime, with BuildKit's own parser, and answers with what
// `docker buildx build` would have put in the image: the runtime config, one
// history step per instruction buildx records, and the files of each layer.
//
// Three calls, one per stage of knowledge:
//
//   - Parse reads and validates the text once. Anything that would execute
//     code or needs what helperbuild does not have is refused here with
//     "file:line: ..." and the way out: RUN, ONBUILD, a second FROM,
//     ADD of a URL or git repository, COPY --from=<stage>, heredocs,
//     COPY --parents and --exclude, HEALTHCHECK --start-interval.
//   - File.Resolve evaluates the global ARGs for one Target, with buildx's
//     automatic TARGETPLATFORM/TARGETOS/TARGETARCH/TARGETVARIANT and
//     BUILDPLATFORM/BUILDOS/BUILDARCH/BUILDVARIANT (TARGETPLATFORM is
//     "linux/arm/v7", TARGETVARIANT "v7"; linux/arm64 has no variant), and
//     expands FROM. An ARG used in FROM without a value is an error.
//   - Stage.Apply interprets the instructions on top of the base image's
//     config and reads the COPY/ADD sources from context directories.
//
// Fidelity to buildx (BuildKit v0.34 dockerfile2llb): history CreatedBy and
// Comment are byte for byte what buildx writes ("COPY --chmod=755 a /b # buildkit",
// `CMD ["sh"]`, "ENV A=b", "ARG TARGETARCH=arm64", "WORKDIR /x", "EXPOSE [80/tcp]");
// ENV and LABEL are expanded against the running environment (base Env, then
// ENV and in-stage ARGs, all values taken before the instruction), an ENV
// replaces an existing key in place; in-stage ARGs are visible to later
// instructions and never stored in Env; PATH is added to Env when the base
// lacks it, and scratch gets WorkingDir "/"; ENTRYPOINT clears an inherited
// CMD unless a CMD came earlier in this Dockerfile; CMD sets ArgsEscaped;
// shell forms become SHELL (default /bin/sh -c) plus the joined command line.
// ONBUILD triggers in the base image are refused, and the result never
// carries OnBuild.
//
// COPY and ADD: sources are paths inside their context (build context, or a
// named context with --from=NAME); a leading "/" and ".." are taken relative
// to the context root, as BuildKit does, so they never leave it. Wildcards use
// filepath.Match per path element; a source that matches nothing is an error.
// A symlink on the way to a source, or the source itself, is followed only if
// its target stays in the context; otherwise the step fails naming the source
// and the context. Inside a copied directory, symlinks are copied as links.
// A destination ending in "/", ".", or "..", given several sources or a
// wildcard with several matches, or naming a directory known to exist, is a
// directory; otherwise a single file is copied to that path. Owner 0:0 unless
// --chown=uid[:gid] (numeric, or "root"; names need the base's /etc/passwd,
// which is not read); modes come from the source unless --chmod=<octal>.
// --link is accepted: these layers are always independent of the base.
// ADD of a local file works like COPY, except that a file ADD would unpack (a
// tar, possibly compressed) is refused unless --unpack=false.
//
// Limits, as choices: the base image's file system is not read. So
// "directory known to exist" means created earlier in this Dockerfile, the
// base's WorkingDir, Contexts.BaseHasDir when set, or else (for a non-scratch
// base) a short list of standard directories (/usr/bin, /tmp, ...). WORKDIR
// other than "/" always records a layer, as buildx does; that layer holds the
// directory (0755, owned by USER) unless it is known to exist, in which case
// it is empty (buildx's empty layer for an existing directory). A directory
// that copying creates gets an explicit entry; its parents are left to the
// layer writer (0755, 0:0), where BuildKit would chown created parents too.
// .dockerignore is not read.
//
// HEALTHCHECK is config-only and is recorded in Config.Healthcheck; SHELL and
// MAINTAINER (Result.Author) are honoured. Nothing here touches the network,
// and Parse, Resolve and Apply are safe for concurrent use.
package dockerfile
