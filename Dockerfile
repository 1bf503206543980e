# sitedrop container image.
#
#   docker build -t sitedrop .
#   docker run -d --name sitedrop -p 8090:8090 -v sitedrop-data:/data sitedrop
#
# Build: a static binary (CGO_ENABLED=0; PocketBase's SQLite driver is pure Go).
FROM golang:1.26-bookworm AS build
WORKDIR /src
ENV GOTOOLCHAIN=local CGO_ENABLED=0
# Dependencies first, so they are cached while only the code changes.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -trimpath -ldflags='-s -w' -o /out/sitedrop . \
	&& mkdir -p /out/data

# Run: distroless, no shell, as the unprivileged "nonroot" user (65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sitedrop /sitedrop
# An empty /data owned by nonroot, so a new named volume is writable.
COPY --from=build --chown=65532:65532 /out/data /data
VOLUME ["/data"]
EXPOSE 8090
USER 65532:65532
ENTRYPOINT ["/sitedrop"]
CMD ["serve", "--http", "0.0.0.0:8090", "--dir", "/data"]
