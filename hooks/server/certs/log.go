package certs

import (
	"context"
	"io"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newZapLogger gives certmagic (which logs through zap) a logger that
// writes to the app's slog logger, so certificate events show in the
// dashboard's logs beside everything else, and to stderr, where whoever
// runs the server sees a certificate that cannot be obtained. Debug
// messages are dropped.
func newZapLogger(l *slog.Logger, stderr io.Writer) *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.RFC3339TimeEncoder
	console := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(stderr), zapcore.InfoLevel)
	return zap.New(lazyCore{zapcore.NewTee(&slogCore{logger: l}, console)})
}

// lazyCore defers the fields of With until an entry is written. certmagic
// derives a logger with the client's address (and, for an on-demand
// certificate, its names) during every TLS handshake, and logs nothing
// at Info or above for a handshake that goes well: zap's console core
// would clone its encoder and encode those fields each time, a few
// percent of a new connection's server CPU and a third of certmagic's
// allocations per handshake (see BenchmarkHandshake).
type lazyCore struct{ zapcore.Core }

// With returns a core that adds fields once an entry is logged through
// it. zap's lazy core builds its inner core at its own With: wrapped
// again, a second With (certmagic's on-demand path adds the names to the
// logger that has the address) stays lazy too.
func (c lazyCore) With(fields []zapcore.Field) zapcore.Core {
	return lazyCore{zapcore.NewLazyWith(c.Core, fields)}
}

// slogCore is a zapcore.Core that hands entries to an slog.Logger.
type slogCore struct {
	logger *slog.Logger
	fields []zapcore.Field
}

// Enabled passes Info and above.
func (c *slogCore) Enabled(level zapcore.Level) bool { return level >= zapcore.InfoLevel }

// With returns a core that adds fields to every entry.
func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	return &slogCore{logger: c.logger, fields: append(c.fields[:len(c.fields):len(c.fields)], fields...)}
}

// Check adds this core to entries it is enabled for.
func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

// Write logs an entry and its fields as slog attributes.
func (c *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fields {
		f.AddTo(enc)
	}
	attrs := make([]slog.Attr, 0, len(enc.Fields)+1)
	if e.LoggerName != "" {
		attrs = append(attrs, slog.String("logger", e.LoggerName))
	}
	for k, v := range enc.Fields {
		attrs = append(attrs, slog.Any(k, v))
	}
	c.logger.LogAttrs(context.Background(), slogLevel(e.Level), e.Message, attrs...)
	return nil
}

// Sync does nothing: slog handlers do not buffer.
func (c *slogCore) Sync() error { return nil }

// slogLevel maps a zap level to slog's.
func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l >= zapcore.ErrorLevel:
		return slog.LevelError
	case l >= zapcore.WarnLevel:
		return slog.LevelWarn
	case l >= zapcore.InfoLevel:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}
