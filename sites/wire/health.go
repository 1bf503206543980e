package wire

// HealthPath is PocketBase's health endpoint (GET or HEAD). A sitedrop
// server answers it on its plain HTTP listener too, with TLS or without,
// on any host but a site's: load balancers, container health checks and
// `sitedrop health` probe it.
const HealthPath = "/api/health"
