# gpulint in a container: a static binary on distroless, as a non-root user.
#
#   docker build -t gpulint --build-arg VERSION=v0.2.0 \
#     --build-arg COMMIT=$(git rev-parse HEAD) --build-arg DATE=$(date -u +%FT%TZ) .
#   docker run --rm -v "$PWD:/work" gpulint lint .
#
# The build stage runs the same `go build` as .goreleaser.yaml;
# test/release builds with this file's flags and checks the binary is static.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG COMMIT=""
ARG DATE=""
ENV CGO_ENABLED=0 GOFLAGS=-trimpath
RUN go build -ldflags "-s -w -X github.com/gpulint/gpulint/internal/cli.Version=${VERSION} -X github.com/gpulint/gpulint/internal/cli.Commit=${COMMIT} -X github.com/gpulint/gpulint/internal/cli.Date=${DATE}" -o /out/gpulint ./cmd/gpulint

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gpulint /usr/local/bin/gpulint
USER nonroot:nonroot
WORKDIR /work
# Results cache inside the container's own home, not the mounted tree.
ENV GPULINT_CACHE_DIR=/tmp/gpulint-cache
ENTRYPOINT ["/usr/local/bin/gpulint"]
CMD ["lint", "."]
