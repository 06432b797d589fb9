package events

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// EmbeddedConfig configures an [EmbeddedServer].
type EmbeddedConfig struct {
	// StoreDir holds JetStream's files; Steward uses <data-dir>/nats.
	// Required. It must not be shared by two running servers.
	StoreDir string
	// Logger receives the server's messages. Warnings and errors are logged
	// as such; notices and debug lines go to Debug, so the server is quiet
	// unless Debug is set. Defaults to discarding them.
	Logger *slog.Logger
	// Debug turns on the server's debug messages and logs its notices at Info.
	Debug bool
	// Listen makes the server also accept TCP clients on 127.0.0.1, for
	// operator tools such as the nats CLI (see [EmbeddedServer.ClientURL]).
	// By default it listens on no socket at all: Steward itself connects in
	// process, and a socket without credentials would let any local user
	// publish control-plane events.
	Listen bool
	// Port is the TCP port used when Listen is set. Defaults to a free port.
	Port int
	// Host is the address the server listens on when Listen is set.
	// Defaults to 127.0.0.1; any other needs a Token.
	Host string
	// Token, when set, is required of every client (nats://TOKEN@host:port),
	// Steward's own in-process connection included.
	Token string
	// SyncInterval is how often JetStream fsyncs its files. Defaults to 0,
	// which syncs every write before acking it: the relay deletes an outbox
	// row once the publish is acked, so an acked event still in the page
	// cache would be lost with the host. Set it to trade that for throughput.
	SyncInterval time.Duration
	// ReadyTimeout bounds how long Start waits for the server to accept
	// connections. Defaults to 10s.
	ReadyTimeout time.Duration
}

// serverName is fixed so that JetStream finds its own state again after a
// restart; the default would be a new random id each time.
const serverName = "steward"

// EmbeddedServer is a NATS server with JetStream running inside the Steward
// process. It is safe for concurrent use. It runs once: after Stop, start a
// new EmbeddedServer on the same StoreDir, which finds the streams, messages
// and durable consumers of the previous one.
type EmbeddedServer struct {
	cfg    EmbeddedConfig
	logger *slog.Logger

	mu   sync.Mutex
	srv  *server.Server
	done chan struct{} // closed once a shutdown started by Stop completes
}

// NewEmbeddedServer returns a server that is not started yet. It panics when
// cfg.StoreDir is empty, a programmer's mistake.
func NewEmbeddedServer(cfg EmbeddedConfig) *EmbeddedServer {
	if cfg.StoreDir == "" {
		panic("events: EmbeddedConfig.StoreDir is required")
	}
	cfg.ReadyTimeout = cmp.Or(cfg.ReadyTimeout, 10*time.Second)
	logger := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).With("component", "events.nats")
	return &EmbeddedServer{cfg: cfg, logger: logger}
}

// Start runs the server and returns once it accepts connections and
// JetStream is enabled (with its stored streams restored). It waits at most
// ReadyTimeout, or until ctx ends. It returns [ErrAlreadyStarted] when the
// server was started before.
func (s *EmbeddedServer) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return ErrAlreadyStarted
	}
	host := cmp.Or(s.cfg.Host, "127.0.0.1")
	if s.cfg.Listen && s.cfg.Token == "" && !isLoopback(host) {
		return fmt.Errorf("events: nats server on %s without a token: anyone who reaches it could publish control-plane events", host)
	}
	opts := &server.Options{
		ServerName:             serverName,
		Host:                   host,
		Authorization:          s.cfg.Token,
		Port:                   server.RANDOM_PORT,
		DontListen:             !s.cfg.Listen,
		NoSigs:                 true, // signals belong to Steward's main
		JetStream:              true,
		StoreDir:               s.cfg.StoreDir,
		SyncAlways:             s.cfg.SyncInterval == 0,
		SyncInterval:           s.cfg.SyncInterval,
		DisableJetStreamBanner: true,
	}
	if s.cfg.Listen && s.cfg.Port != 0 {
		opts.Port = s.cfg.Port
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return fmt.Errorf("events: configure nats server: %w", err)
	}
	srv.SetLoggerV2(natsLogger{s.logger, s.cfg.Debug}, s.cfg.Debug, false, false)
	srv.Start()

	wait := s.cfg.ReadyTimeout
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl))
	}
	if !srv.ReadyForConnections(wait) || !srv.JetStreamEnabled() {
		srv.Shutdown()
		srv.WaitForShutdown()
		return fmt.Errorf("events: nats server in %s not ready within %s", s.cfg.StoreDir, wait)
	}
	s.srv = srv
	s.logger.InfoContext(ctx, "nats server started", "store_dir", s.cfg.StoreDir, "client_url", s.clientURL())
	return nil
}

// Stop shuts the server down and waits until it has, or until ctx ends (the
// shutdown then goes on, and a later Stop waits for it again). It is
// idempotent and safe before Start. Clients see their connection close.
func (s *EmbeddedServer) Stop(ctx context.Context) error {
	s.mu.Lock()
	if s.srv == nil {
		s.mu.Unlock()
		return nil
	}
	if s.done == nil {
		srv, done := s.srv, make(chan struct{})
		s.done = done
		go func() {
			defer close(done)
			srv.Shutdown()
			srv.WaitForShutdown()
		}()
	}
	done := s.done
	s.mu.Unlock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("events: stop nats server: %w", ctx.Err())
	}
}

// ClientURL returns the nats:// URL on 127.0.0.1 that tools outside the
// process can connect to, or "" when the server does not listen (see
// [EmbeddedConfig.Listen]) or is not running.
func (s *EmbeddedServer) ClientURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientURL()
}

func (s *EmbeddedServer) clientURL() string {
	if s.srv == nil || s.done != nil || !s.cfg.Listen {
		return ""
	}
	addr, ok := s.srv.Addr().(*net.TCPAddr)
	if !ok {
		return ""
	}
	return "nats://" + addr.String()
}

// InProcessConn connects to the server through an in-memory pipe, with no
// socket involved. The caller closes the connection. It returns
// [ErrNotStarted] when the server is not running.
func (s *EmbeddedServer) InProcessConn(opts ...nats.Option) (*nats.Conn, error) {
	s.mu.Lock()
	srv := s.srv
	stopping := s.done != nil
	s.mu.Unlock()
	if srv == nil || stopping {
		return nil, ErrNotStarted
	}
	if s.cfg.Token != "" {
		opts = append(opts, nats.Token(s.cfg.Token))
	}
	nc, err := nats.Connect("", append(opts, nats.InProcessServer(srv))...)
	if err != nil {
		return nil, fmt.Errorf("events: connect in process: %w", err)
	}
	return nc, nil
}

// isLoopback reports whether host names this machine only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// natsLogger adapts slog to the server's logger interface. The server has no
// context to pass, so records carry none.
type natsLogger struct {
	l     *slog.Logger
	debug bool
}

func (n natsLogger) Noticef(format string, v ...any) {
	level := slog.LevelDebug
	if n.debug {
		level = slog.LevelInfo
	}
	n.log(level, format, v)
}
func (n natsLogger) Warnf(format string, v ...any)  { n.log(slog.LevelWarn, format, v) }
func (n natsLogger) Fatalf(format string, v ...any) { n.log(slog.LevelError, format, v) }
func (n natsLogger) Errorf(format string, v ...any) { n.log(slog.LevelError, format, v) }
func (n natsLogger) Debugf(format string, v ...any) { n.log(slog.LevelDebug, format, v) }
func (n natsLogger) Tracef(format string, v ...any) { n.log(slog.LevelDebug, format, v) }

func (n natsLogger) log(level slog.Level, format string, v []any) {
	ctx := context.Background()
	if n.l.Enabled(ctx, level) {
		n.l.Log(ctx, level, fmt.Sprintf(format, v...))
	}
}

var _ server.Logger = natsLogger{}
