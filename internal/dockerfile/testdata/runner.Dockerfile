# GitLab Runner image: a prepared base plus the cross-compiled runner.
ARG BASE_IMAGE

FROM $BASE_IMAGE

ARG TARGETOS
ARG TARGETARCH

COPY --from=binary_dir --chmod=755 gitlab-runner-${TARGETOS}-${TARGETARCH} /usr/bin/gitlab-runner
COPY --from=packaging_dir --chmod=755 clear-docker-cache /usr/share/gitlab-runner/
