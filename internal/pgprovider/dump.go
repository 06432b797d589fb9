package pgprovider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// DumpPath is where the final dump of an instance's database is kept.
func DumpPath(dir, database, instanceID string) string {
	return filepath.Join(dir, database+"."+instanceID+".dump")
}

// finalDump keeps the database's data before it is dropped: its owner may
// no longer log in and its sessions are ended, so nothing is written after
// the dump; then pg_dump -Fc, as the admin role, to a temporary file made
// durable and renamed into place. A delete that dies here leaves the
// database whole, and the next one dumps it again.
func (p *Provider) finalDump(ctx context.Context, instanceID string, db database) error {
	for _, q := range []string{
		"ALTER ROLE " + ident(db.owner) + " NOLOGIN",
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = " + literal(db.name) + " AND pid <> pg_backend_pid()",
	} {
		if _, err := p.admin.Exec(ctx, q); err != nil {
			return fmt.Errorf("close database %s before its final dump: %w", db.name, err)
		}
	}
	if err := os.MkdirAll(p.cfg.DumpDir, 0o700); err != nil {
		return fmt.Errorf("final dump of %s: %w", db.name, err)
	}
	final := DumpPath(p.cfg.DumpDir, db.name, instanceID)
	partial := final + ".partial"
	start := time.Now()
	cmd := exec.CommandContext(ctx, p.pgDump(), "--format=custom", "--no-password", "--file="+partial,
		"--host="+p.base.Host, "--port="+strconv.Itoa(int(p.base.Port)), "--username="+p.base.User, db.name)
	// The password goes by the environment, never the command line (ps).
	cmd.Env = append(os.Environ(), "PGPASSWORD="+p.base.Password, "PGSSLMODE="+sslMode(p.base), "PGCONNECT_TIMEOUT=10")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		_ = os.Remove(partial)
		return fmt.Errorf("final dump of %s: pg_dump: %w: %s", db.name, err, bytes.TrimSpace(stderr.Bytes()))
	}
	// A dump holds the data: readable by the provider's user alone.
	if err := errors.Join(os.Chmod(partial, 0o600), syncFile(partial)); err != nil {
		return fmt.Errorf("final dump of %s: %w", db.name, err)
	}
	if err := os.Rename(partial, final); err != nil {
		return fmt.Errorf("final dump of %s: %w", db.name, err)
	}
	if err := syncFile(p.cfg.DumpDir); err != nil {
		return fmt.Errorf("final dump of %s: %w", db.name, err)
	}
	info, _ := os.Stat(final)
	var size int64
	if info != nil {
		size = info.Size()
	}
	p.log.InfoContext(ctx, "final dump kept", "instance_id", instanceID, "database", db.name, "path", final,
		"bytes", size, "duration_ms", time.Since(start).Milliseconds())
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// pgDump is the pg_dump to run: the configured one, else the newest of
// Debian's, else pg_dump on PATH.
func (p *Provider) pgDump() string {
	if p.cfg.PGDump != "" {
		return p.cfg.PGDump
	}
	return pgTool("pg_dump")
}

// pgTool finds a PostgreSQL client program: the newest major version under
// /usr/lib/postgresql, else the name (found on PATH).
func pgTool(name string) string {
	entries, err := os.ReadDir("/usr/lib/postgresql")
	if err != nil {
		return name
	}
	var majors []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			majors = append(majors, n)
		}
	}
	slices.Sort(majors)
	for _, v := range slices.Backward(majors) {
		path := filepath.Join("/usr/lib/postgresql", strconv.Itoa(v), "bin", name)
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			return path
		}
	}
	return name
}
