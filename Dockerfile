# mcpc in a container: docker build -t mcpc . && docker run --rm -v "$PWD:/work" mcpc lint ./...
# The image holds mcpc alone (a static binary, no shell, no node): it validates, lints, plans and
# diffs deployments; running their servers (mcpc run, mcpc tools) needs their launchers, in an
# image of your own FROM this one's binary.
FROM golang:1.26-alpine AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/mcpc-dev/mcpc/cmd/mcpc/cli.Version=${VERSION}" -o /out/mcpc ./cmd/mcpc

FROM scratch
COPY --from=build /out/mcpc /mcpc
USER 65532:65532
WORKDIR /work
ENTRYPOINT ["/mcpc"]
