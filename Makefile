# helperbuild: `make demo` runs the main job on the bundled example (no
# registry, no network); `make test` runs everything, installing and starting
# what the end-to-end suite needs (Debian packages, registries, containerd).

GO        ?= go
BIN       := bin/helperbuild
VERSION   := $(shell git describe --tags --always 2>/dev/null || echo dev)
REVISION  := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X main.version=$(VERSION) -X main.revision=$(REVISION)
DEMO_OUT  := out/demo

.PHONY: all build demo test unit cross-os e2e ci-e2e e2e-consumers docs-check fuzz bench clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/helperbuild

# Builds the example's helper and runner images for five platforms into an
# OCI layout at out/demo, then verifies what it wrote.
demo: build
	rm -rf $(DEMO_OUT)
	$(BIN) build --config examples/gitlab-runner/helperbuild.yaml --output oci:$(DEMO_OUT)
	$(BIN) verify --platforms linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le,linux/s390x oci:$(DEMO_OUT):gitlab-runner-helper:$$(cd examples/gitlab-runner && git describe --tags --always)

test: unit e2e docs-check ci-e2e

# The unit tests run qemu-user-static, gcc and git on the host; the script installs them (root)
# when missing, and a test fails, naming the package, rather than skip without them. They run
# with a TMPDIR of their own that must be empty when they end (scripts/tmpdir-clean.sh).
unit: cross-os
	scripts/install-test-deps.sh unit
	$(GO) vet ./...
	scripts/tmpdir-clean.sh $(GO) test -race -count=1 -timeout 30m ./...

# Every package builds for macOS and Windows too (a contributor's go build ./... there; the
# command's verify --run says there that it needs
# Linux), and for 32-bit Linux (arm/v7, which this project's own pipeline publishes: its
# syscall types are narrower); part of make unit, so make test checks it.
cross-os:
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build ./...
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) build ./...
	GOOS=linux GOARCH=arm GOARM=7 CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/helperbuild

e2e:
	scripts/install-test-deps.sh
	$(GO) test -tags e2e -count=1 -timeout 40m -v ./test/e2e/

# Runs every command of docs/operators.md against the bundled example, pushed to a
# docker-registry on 127.0.0.1 (see scripts/docs-check.sh).
docs-check: build
	command -v docker-registry >/dev/null && command -v curl >/dev/null && command -v ss >/dev/null || scripts/install-test-deps.sh
	scripts/docs-check.sh

# The GitLab CI template (ci/gitlab/release.gitlab-ci.yml) run by gitlab-ci-local with the
# shell executor against the e2e registry: matrix, needs, artifacts, dotenv, failures.
# Root, like e2e; also installs Node.js/npm, rsync and gitlab-ci-local.
ci-e2e:
	scripts/install-test-deps.sh gitlab-ci-local
	$(GO) test -tags 'e2e gitlabci' -count=1 -timeout 40m -v -run 'TestGitLabCITemplate|TestProjectPipeline' ./test/e2e/

# What other tools read of helperbuild's attestations, with those tools: trivy v0.74.0's
# --sbom-sources oci on a referrers-mode release (test/e2e/consumers_test.go, build tags
# e2e consumers). Not part of make test: trivy is built from source here, which takes long
# cold (see README's development section); the test fails, never skips, without trivy.
e2e-consumers:
	scripts/install-test-deps.sh trivy
	$(GO) test -tags 'e2e consumers' -count=1 -timeout 40m -v -run 'TestTrivy' ./test/e2e/

# Short fuzzing of every parser.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 20s ./internal/platform
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 20s ./internal/dockerfile
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 20s ./internal/recipe
	$(GO) test -run '^$$' -fuzz FuzzAdd -fuzztime 20s ./internal/rootfs
	$(GO) test -run '^$$' -fuzz FuzzCheck -fuzztime 20s ./internal/elfcheck
	$(GO) test -run '^$$' -fuzz FuzzPlan -fuzztime 20s ./internal/layer
	$(GO) test -run '^$$' -fuzz FuzzParseNodes -fuzztime 20s ./internal/verify

# helperbuild vs the bare go builds (the floor) and ko, medians of 5 runs on
# this machine, idle and beside one busy loop per CPU (each in a session of
# its own), with where the time and the CPU go per phase, platform and
# process; QUICK=1 for 3 runs. See docs/bench-2026-12-06.md and docs/bench-2026-12-07.md.
bench:
	scripts/install-test-deps.sh
	scripts/bench.sh

clean:
	rm -rf bin out
