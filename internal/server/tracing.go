package server

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// tracing holds the OpenTelemetry provider when tracing is on.
type tracing struct {
	provider *sdktrace.TracerProvider
}

// newTracing sets up the exporter named by the configuration; "" leaves
// tracing off, at no cost per request.
func newTracing(exporter string) (*tracing, error) {
	if exporter == "" {
		return &tracing{}, nil
	}
	exp, err := stdouttrace.New(stdouttrace.WithWriter(os.Stderr))
	if err != nil {
		return nil, fmt.Errorf("server: trace exporter: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	otel.SetTextMapPropagator(propagation.TraceContext{})
	return &tracing{provider: tp}, nil
}

func (t *tracing) tracer() trace.Tracer {
	if t.provider == nil {
		return nil
	}
	return t.provider.Tracer("github.com/stewardhq/steward")
}

func (t *tracing) shutdown(ctx context.Context) error {
	if t.provider == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}
