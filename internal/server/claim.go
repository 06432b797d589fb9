package server

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// claim takes what a second server could be holding, before any other
// start-up work: the data directory's lock first (a second server on it
// fails here, naming the first one's pid), then the HTTP, metrics and pprof
// listeners, and a probe of the embedded NATS server's client port (NATS
// binds its own socket later, so that is an early check, not a hold). On
// error it gives back what it took.
func (s *Server) claim() (err error) {
	defer func() {
		if err != nil {
			_ = s.unclaim()
		}
	}()
	if s.usesDataDir() {
		if s.lock, err = lockDataDir(s.cfg.DataDir); err != nil {
			return err
		}
	}
	if s.listener, err = listen("listen on", s.cfg.Listen); err != nil {
		return err
	}
	if s.cfg.MetricsListen != "" {
		if s.metricsListener, err = listen("metrics listen on", s.cfg.MetricsListen); err != nil {
			return err
		}
	}
	if s.cfg.PprofListen != "" {
		if s.pprofListener, err = listen("pprof listen on", s.cfg.PprofListen); err != nil {
			return err
		}
	}
	if s.cfg.NATSURL == "" && s.cfg.NATSListen != "" {
		host, port, err := natsListenAddr(s.cfg.NATSListen, s.cfg.NATSToken != "")
		if err != nil {
			return fmt.Errorf("--nats-listen: %w", err)
		}
		if port != 0 {
			ln, err := listen("NATS listen on", net.JoinHostPort(host, strconv.Itoa(port)))
			if err != nil {
				return err
			}
			_ = ln.Close()
		}
	}
	return nil
}

// usesDataDir says whether this server keeps anything in Config.DataDir:
// the SQLite database, the embedded NATS store or the in-process
// provider's processes. One on PostgreSQL and an external NATS without that
// provider does not, so replicas on one host may share the default.
func (s *Server) usesDataDir() bool {
	return s.cfg.DatabaseURL == "" || s.cfg.NATSURL == "" || s.cfg.ProcessProvider
}

// unclaim closes the listeners nothing serves yet and releases the data
// directory's lock.
func (s *Server) unclaim() error {
	var errs []error
	if s.listener != nil && s.http == nil {
		errs = append(errs, s.listener.Close())
		s.listener = nil
	}
	if s.metricsListener != nil && s.metrics == nil {
		errs = append(errs, s.metricsListener.Close())
		s.metricsListener = nil
	}
	if s.pprofListener != nil && s.pprof == nil {
		errs = append(errs, s.pprofListener.Close())
		s.pprofListener = nil
	}
	errs = append(errs, s.lock.release())
	s.lock = nil
	return errors.Join(errs...)
}

// listen binds addr; an address in use says so in one line.
func listen(what, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s %s: address already in use (is another steward server running?)", what, addr)
	}
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Err != nil {
		err = op.Err // "bind: permission denied", not "listen tcp ADDR: bind: …" again
	}
	return nil, fmt.Errorf("%s %s: %w", what, addr, err)
}
