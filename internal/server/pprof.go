package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// startPprof serves Go's profiling endpoints (/debug/pprof/) on their own
// listener, off the API's port and its authentication, when
// Config.PprofListen is set: for measuring a running server.
func (s *Server) startPprof() error {
	if s.cfg.PprofListen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.PprofListen)
	if err != nil {
		return fmt.Errorf("server: pprof listen on %s: %w", s.cfg.PprofListen, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	s.pprof = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.pprof.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Warn("pprof server stopped", "error", err)
		}
	}()
	s.logger.Warn("profiling endpoints served without authentication", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return nil
}
