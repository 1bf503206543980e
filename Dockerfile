# sitedrop container image.
#
#   docker build -t sitedrop .
#   docker run -d --name sitedrop -p 8090:8090 -v sitedrop-data:/data sitedrop
#
# Production, with automatic HTTPS (see README, "Production set-up"):
#
#   docker run -d --name sitedrop --restart unless-stopped --stop-timeout 40 \
#     -p 80:80 -p 443:443 -v sitedrop-data:/data sitedrop \
#     serve --https 0.0.0.0:443 --domain example.com --acme-email you@example.com
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

# Run: distroless (CA certificates and tzdata, no shell), as the
# unprivileged "nonroot" user (65532). Docker lets containers bind ports
# below 1024 without root (net.ipv4.ip_unprivileged_port_start=0).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sitedrop /sitedrop
# An empty /data owned by nonroot, so a new named volume is writable.
COPY --from=build --chown=65532:65532 /out/data /data
# The data dir of every command (serve, user, key, superuser) unless --dir
# says otherwise. Certificates are kept there too.
ENV SITEDROP_DIR=/data
VOLUME ["/data"]
# 8090: plain HTTP (the default). 80 and 443: with --https.
EXPOSE 8090 80 443
USER 65532:65532
# SIGTERM drains in-flight requests for up to --shutdown-timeout (30s):
# give `docker stop` more than that (--stop-timeout 40).
STOPSIGNAL SIGTERM
# No curl in the image: the binary probes /api/health itself, on :8090
# and then on :80 (which answers it under --https).
HEALTHCHECK --interval=30s --timeout=12s --start-period=30s --retries=3 \
	CMD ["/sitedrop", "health"]
ENTRYPOINT ["/sitedrop"]
CMD ["serve", "--http", "0.0.0.0:8090"]
