ARG BASE_IMAGE
FROM $BASE_IMAGE
ARG TARGETOS
ARG TARGETARCH
COPY --from=binary_dir --chmod=755 gitlab-runner-helper.${TARGETOS}-${TARGETARCH} /usr/bin/gitlab-runner-helper
