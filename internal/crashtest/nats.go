package crashtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// natsNode is one nats-server process of the cluster, restarted on the same
// ports and store.
type natsNode struct {
	name                       string
	port, clusterPort, monPort int
	storeDir, logPath          string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// natsCluster is a JetStream cluster of nats-server processes on
// 127.0.0.1, each with a store of its own under dir.
type natsCluster struct {
	bin   string
	nodes []*natsNode
	hc    *http.Client
}

// startNATSCluster starts n nodes and waits until each says it is healthy
// (JetStream current).
func startNATSCluster(ctx context.Context, bin, dir string, n int, within time.Duration) (*natsCluster, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c := &natsCluster{bin: bin, hc: &http.Client{Timeout: time.Second, Transport: newTransport()}}
	for i := range n {
		var ports [3]int
		for j := range ports {
			p, err := FreePort()
			if err != nil {
				return nil, err
			}
			ports[j] = p
		}
		name := fmt.Sprintf("nats-%d", i+1)
		c.nodes = append(c.nodes, &natsNode{name: name, port: ports[0], clusterPort: ports[1], monPort: ports[2],
			storeDir: filepath.Join(dir, name), logPath: filepath.Join(dir, name+".log")})
	}
	for i := range c.nodes {
		if err := c.start(i); err != nil {
			c.stop()
			return nil, err
		}
	}
	for i := range c.nodes {
		if err := c.waitHealthy(ctx, i, within); err != nil {
			c.stop()
			return nil, err
		}
	}
	return c, nil
}

// url is the client URL list of every node, as nats.Connect takes it.
func (c *natsCluster) url() string {
	var urls []string
	for _, n := range c.nodes {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", n.port))
	}
	return strings.Join(urls, ",")
}

// start starts node i; it must not be running.
func (c *natsCluster) start(i int) error {
	n := c.nodes[i]
	var routes []string
	for _, o := range c.nodes {
		if o != n {
			routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", o.clusterPort))
		}
	}
	cmd := exec.Command(c.bin, "--addr", "127.0.0.1", "--port", fmt.Sprint(n.port), "--server_name", n.name,
		"--jetstream", "--store_dir", n.storeDir, "--http_port", fmt.Sprint(n.monPort),
		"--cluster_name", "steward-crashtest", "--cluster", fmt.Sprintf("nats://127.0.0.1:%d", n.clusterPort),
		"--routes", strings.Join(routes, ","), "--log", n.logPath)
	cmd.SysProcAttr = sysProcAttr()
	// What it says before its log is open (a bad flag) goes to its log too.
	out, err := os.OpenFile(n.logPath+".out", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", n.name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	n.mu.Lock()
	n.cmd, n.exited = cmd, exited
	n.mu.Unlock()
	return nil
}

// kill sends SIGKILL to node i and waits until it is reaped.
func (c *natsCluster) kill(i int) {
	n := c.nodes[i]
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// waitHealthy polls node i's /healthz until JetStream there is current.
func (c *natsCluster) waitHealthy(ctx context.Context, i int, within time.Duration) error {
	n := c.nodes[i]
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/healthz", n.monPort), nil)
		resp, err := c.hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/healthz answered %d", resp.StatusCode)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy within %v: %w (see %s)", n.name, within, errors.Join(last, ctx.Err()), n.logPath)
		case <-tick.C:
		}
	}
}

// stop ends every node that runs, gracefully within a second each.
func (c *natsCluster) stop() {
	defer c.hc.CloseIdleConnections()
	for _, n := range c.nodes {
		n.mu.Lock()
		cmd, exited := n.cmd, n.exited
		n.mu.Unlock()
		if cmd == nil {
			continue
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(time.Second):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-exited
		}
	}
}

// logs names every node's log, for a report.
func (c *natsCluster) logs() []string {
	var out []string
	for _, n := range c.nodes {
		out = append(out, n.logPath)
	}
	return out
}
