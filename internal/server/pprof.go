package server

import (
	"errors"
	"net/http"
	"net/http/pprof"
	"time"
)

// startPprof serves Go's profiling endpoints (/debug/pprof/) on their own
// listener (bound by claim), off the API's port and its authentication,
// when Config.PprofListen is set: for measuring a running server.
func (s *Server) startPprof() error {
	ln := s.pprofListener
	if ln == nil {
		return nil
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
