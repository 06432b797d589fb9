package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/bench"
	"github.com/stewardhq/steward/internal/server"
)

// floorServerCmd is the hidden command that serves the floor in a process
// of its own, as `steward server` serves the API: client and server then
// share the machine the way they do in every other run.
const floorServerCmd = "floor-server"

func newBenchFloorCmd(stdout io.Writer) *cobra.Command {
	var (
		cfg      bench.Config
		bodySize int
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "floor",
		Short: "Measure the floor: the same HTTP server, listener and client, with a handler that only answers",
		Long: `Measure the floor: a process serving a fixed JSON body with the HTTP server
settings of steward server, driven by the same closed-loop clients as every
steward bench run. It is what this machine's HTTP stack does when the server
does no work. Every steward bench run measures it first (--floor-duration)
and prints its own figures as fractions of it, so runs from two days or two
machines compare.`,
		Example: `  steward bench floor -c 16 -d 10s
  steward bench floor -c 64 --body-size 1200 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := runFloor(cmd.Context(), cfg, bodySize)
			if err != nil {
				return err
			}
			return writeBenchResult(stdout, res, asJSON)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&cfg.Concurrency, "clients", "c", 16, "concurrent clients")
	f.DurationVarP(&cfg.Duration, "duration", "d", 10*time.Second, "how long to run")
	f.DurationVar(&cfg.Warmup, "warmup", time.Second, "unmeasured warm-up before the run")
	f.IntVar(&bodySize, "body-size", bench.DefaultFloorBodySize, "bytes in the fixed JSON answer")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.AddCommand(newFloorServerCmd(stdout))
	return cmd
}

// runFloor starts the floor server in a child process, drives it as cfg
// says (closed loop, GET), and stops the child.
func runFloor(ctx context.Context, cfg bench.Config, bodySize int) (bench.Result, error) {
	if bodySize < bench.MinFloorBodySize || bodySize > 1<<20 {
		return bench.Result{}, fmt.Errorf("body size %d: want %d to %d bytes", bodySize, bench.MinFloorBodySize, 1<<20)
	}
	url, stop, err := startFloorServer(ctx, bodySize)
	if err != nil {
		return bench.Result{}, err
	}
	defer stop()
	cfg.TargetURL, cfg.Method, cfg.Path = url, "GET", "/floor"
	cfg.Body, cfg.Headers, cfg.RequestFunc, cfg.Rate, cfg.Requests = nil, nil, nil, 0, 0
	return bench.Run(ctx, cfg)
}

// startFloorServer runs `steward bench floor floor-server` and returns its
// URL and a function that stops it and waits for it. The child also exits
// when its stdin closes, so it never outlives this process.
func startFloorServer(ctx context.Context, bodySize int) (string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("floor: find this binary: %w", err)
	}
	child := exec.Command(exe, "bench", "floor", floorServerCmd, "--body-size", strconv.Itoa(bodySize))
	child.Stderr = os.Stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	out, err := child.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := child.Start(); err != nil {
		return "", nil, fmt.Errorf("floor: start the floor server: %w", err)
	}
	stop := func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = child.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = child.Process.Kill()
			<-done
		}
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- strings.TrimSpace(line)
	}()
	select {
	case url := <-lines:
		if !strings.HasPrefix(url, "http://") {
			stop()
			return "", nil, fmt.Errorf("floor: the floor server did not start (it said %q)", url)
		}
		return url, stop, nil
	case <-time.After(10 * time.Second):
		stop()
		return "", nil, errors.New("floor: the floor server did not start within 10s")
	case <-ctx.Done():
		stop()
		return "", nil, ctx.Err()
	}
}

func newFloorServerCmd(stdout io.Writer) *cobra.Command {
	var (
		listen   string
		bodySize int
	)
	cmd := &cobra.Command{
		Use:    floorServerCmd,
		Short:  "Serve the floor's fixed answer until stdin closes (used by steward bench)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			setGCPercent() // as steward server does
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			srv := server.NewHTTPServer(bench.FloorHandler(bodySize), slog.New(slog.NewTextHandler(os.Stderr, nil)))
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln) }()
			if _, err := fmt.Fprintf(stdout, "http://%s\n", ln.Addr()); err != nil {
				return err
			}
			ctx, cancel := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer cancel()
			go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }()
			select {
			case <-ctx.Done():
			case err := <-served:
				return err
			}
			shutdown, cancelShutdown := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancelShutdown()
			return srv.Shutdown(shutdown)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "address to serve on")
	cmd.Flags().IntVar(&bodySize, "body-size", bench.DefaultFloorBodySize, "bytes in the fixed JSON answer")
	return cmd
}

// writeBenchResult prints res for people, or as indented JSON.
func writeBenchResult(w io.Writer, res bench.Result, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return res.Write(w)
}
