package pgprovider

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// A rehydration moves a database's data (provider.Exporter): Steward
// begins the old database's export (it takes no more writes), creates the
// new one with the export as its source, and the new provider pulls it
// with pg_dump's custom format streamed over HTTP into pg_restore, in one
// transaction. The copy's state is kept on the new database's mark, so a
// Get, a replayed create or a restarted provider answer it: PROVISIONING
// while it runs, RUNNING once done, FAILED with why. A provider that
// restarts during a copy cannot resume it (the grant's token is kept
// nowhere): it fails the copy, and Steward gives the rehydration up.
//
// Writes stop with default_transaction_read_only on the database and its
// open sessions ended: every transaction that begins afterwards is read
// only. Two ways around it remain, and a write made through them after the
// copy began is lost: a session may SET default_transaction_read_only =
// off (a setting, not a permission), and a superuser's sessions are ended
// only when the provider's admin is a superuser too.

// The states of a copy kept on the new database's mark (desired.Copy).
const (
	copyRunning = "running"
	copyFailed  = "failed"
)

// copies are the copies running in this process.
type copies struct {
	ctx     context.Context // ends with the provider (Close)
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	running map[string]bool
}

func newCopies() *copies {
	ctx, cancel := context.WithCancel(context.Background())
	return &copies{ctx: ctx, cancel: cancel, running: map[string]bool{}}
}

// stop ends the copies and waits for them.
func (c *copies) stop() {
	c.cancel()
	c.wg.Wait()
}

func (c *copies) isRunning(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running[id]
}

// BeginExport makes the instance's database refuse writes from now on:
// default_transaction_read_only, and its sessions ended so that none
// goes on in a read-write transaction.
func (p *Provider) BeginExport(ctx context.Context, instanceID string) error {
	db, err := p.exportedDatabase(ctx, instanceID)
	if err != nil {
		return err
	}
	for _, q := range []string{
		"ALTER DATABASE " + ident(db.name) + " SET default_transaction_read_only = on",
		// A superuser's sessions are ended only by a superuser admin: any
		// other may not (and would fail the whole statement).
		`SELECT pg_terminate_backend(a.pid) FROM pg_stat_activity a JOIN pg_roles r ON r.oid = a.usesysid
		 WHERE a.datname = ` + literal(db.name) + ` AND a.pid <> pg_backend_pid()
		   AND (NOT r.rolsuper OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user))`,
	} {
		if _, err := p.admin.Exec(ctx, q); err != nil {
			return fmt.Errorf("make database %s read-only: %w", db.name, err)
		}
	}
	p.log.InfoContext(ctx, "export begun: database read-only", "instance_id", instanceID, "database", db.name)
	return nil
}

// EndExport lets the instance's database take writes again.
func (p *Provider) EndExport(ctx context.Context, instanceID string) error {
	db, err := p.exportedDatabase(ctx, instanceID)
	if err != nil {
		return err
	}
	if _, err := p.admin.Exec(ctx, "ALTER DATABASE "+ident(db.name)+" RESET default_transaction_read_only"); err != nil {
		return fmt.Errorf("make database %s writable: %w", db.name, err)
	}
	p.log.InfoContext(ctx, "export ended: database writable again", "instance_id", instanceID, "database", db.name)
	return nil
}

// Export writes the database as pg_dump's custom format, dumped as the
// admin role.
func (p *Provider) Export(ctx context.Context, instanceID string, w io.Writer) error {
	db, err := p.exportedDatabase(ctx, instanceID)
	if err != nil {
		return err
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, p.pgDump(), "--format=custom", "--no-password",
		"--host="+p.base.Host, "--port="+strconv.Itoa(int(p.base.Port)), "--username="+p.base.User, db.name)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+p.base.Password, "PGSSLMODE="+sslMode(p.base), "PGCONNECT_TIMEOUT=10")
	counted := &countingWriter{w: w}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = counted, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("export of %s: pg_dump: %w: %s", db.name, err, bytes.TrimSpace(stderr.Bytes()))
	}
	p.log.InfoContext(ctx, "export sent", "instance_id", instanceID, "database", db.name, "bytes", counted.n,
		"duration_ms", time.Since(start).Milliseconds())
	return nil
}

func (p *Provider) exportedDatabase(ctx context.Context, instanceID string) (database, error) {
	if !instanceIDPattern.MatchString(instanceID) {
		return database{}, provider.ErrNotFound
	}
	db, found, err := p.findDatabase(ctx, instanceID)
	if err != nil {
		return database{}, err
	}
	if !found {
		return database{}, provider.ErrNotFound
	}
	return db, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// startCopy starts filling the new database from src in the background
// and answers the instance as it is meanwhile.
func (p *Provider) startCopy(instanceID string, s spec, src provider.ExportSource) provider.Instance {
	msg := "copying the data of instance " + src.InstanceID
	p.copies.mu.Lock()
	defer p.copies.mu.Unlock()
	if p.copies.running[instanceID] {
		return provider.Instance{InstanceID: instanceID, Status: provider.StatusProvisioning, Message: msg}
	}
	p.copies.running[instanceID] = true
	p.copies.wg.Add(1)
	go func() {
		defer p.copies.wg.Done()
		p.runCopy(instanceID, s, src)
	}()
	return provider.Instance{InstanceID: instanceID, Status: provider.StatusProvisioning, Message: msg}
}

// runCopy copies, records how it ended on the database's mark and reports
// it to Steward.
func (p *Provider) runCopy(instanceID string, s spec, src provider.ExportSource) {
	ctx := p.copies.ctx
	start := time.Now()
	n, err := p.restore(ctx, instanceID, s, src)
	if ctx.Err() != nil {
		return // the provider stops: the next one finds the copy interrupted
	}
	unlock := p.locks.Lock(instanceID)
	defer unlock()
	defer func() {
		p.copies.mu.Lock()
		delete(p.copies.running, instanceID)
		p.copies.mu.Unlock()
	}()
	if err != nil {
		p.log.ErrorContext(ctx, "copy failed", "instance_id", instanceID, "source_instance_id", src.InstanceID, "error", err)
		p.endCopy(ctx, instanceID, s, err)
		return
	}
	p.log.InfoContext(ctx, "copy done", "instance_id", instanceID, "source_instance_id", src.InstanceID,
		"database", s.Database, "bytes", n, "duration_ms", time.Since(start).Milliseconds())
	p.endCopy(ctx, instanceID, s, nil)
}

// restore streams src's export into pg_restore, connected as the owner so
// that what it makes is the owner's. It runs without --single-transaction
// (which stops at the first error): a dump's COMMENT ON EXTENSION fails for
// an owner that does not own the extension (the provider's admin made it),
// and is the one error let through. A copy that fails otherwise leaves a
// partial database, which is deleted with the failed instance.
func (p *Provider) restore(ctx context.Context, instanceID string, s spec, src provider.ExportSource) (int64, error) {
	body, err := provider.OpenExport(ctx, p.exportClient, src)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	o, err := p.findOwner(ctx, instanceID)
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, p.pgRestore(), "--no-owner", "--no-privileges",
		"--no-password", "--host="+p.base.Host, "--port="+strconv.Itoa(int(p.base.Port)), "--username="+o.owner,
		"--dbname="+s.Database)
	// LC_ALL=C: restoreErrors reads pg_restore's own messages.
	cmd.Env = append(os.Environ(), "PGPASSWORD="+p.password(instanceID, o.rotation), "PGSSLMODE="+sslMode(p.base),
		"PGCONNECT_TIMEOUT=10", "LC_ALL=C")
	counted := &countingReader{r: body}
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = counted, &stderr
	if err := cmd.Run(); err != nil && !onlyExtensionComments(stderr.String()) {
		return counted.n, fmt.Errorf("restore into %s: pg_restore: %w: %s", s.Database, err, bytes.TrimSpace(stderr.Bytes()))
	}
	// pg_restore stops at the archive's end; a stream cut after it is
	// still an export that failed.
	if _, err := io.Copy(io.Discard, counted); err != nil {
		return counted.n, fmt.Errorf("restore into %s: the export broke off: %w", s.Database, err)
	}
	return counted.n, nil
}

// onlyExtensionComments reports whether pg_restore's stderr says it ended
// with errors, all of them refused COMMENT ON EXTENSION statements.
func onlyExtensionComments(stderr string) bool {
	var errs, comments int
	for line := range strings.Lines(stderr) {
		switch {
		case strings.HasPrefix(line, "pg_restore: error: could not execute query:"):
			errs++
		case strings.HasPrefix(line, "Command was: COMMENT ON EXTENSION "):
			comments++
		case strings.HasPrefix(line, "pg_restore: error:"), strings.HasPrefix(line, "pg_restore: fatal:"):
			return false // another failure: a broken stream, a lost connection
		}
	}
	return errs > 0 && errs == comments &&
		strings.Contains(stderr, "pg_restore: warning: errors ignored on restore: "+strconv.Itoa(errs)+"\n")
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// endCopy records the copy's end on the database's mark (cleared when it
// succeeded) and reports the instance's status.
func (p *Provider) endCopy(ctx context.Context, instanceID string, s spec, cause error) {
	d := desired{ConnectionLimit: s.ConnectionLimit, Extensions: s.Extensions, RetainOnDelete: s.RetainOnDelete}
	if cause != nil {
		d.Copy, d.CopyError = copyFailed, failureDetail(cause)
	}
	if _, err := p.admin.Exec(ctx, "COMMENT ON DATABASE "+ident(s.Database)+" IS "+literal(desiredMark(instanceID, d))); err != nil {
		p.log.ErrorContext(ctx, "record the end of a copy", "instance_id", instanceID, "error", err)
		return // Steward reads it back (resync) and finds the copy interrupted
	}
	inst, err := p.Get(ctx, instanceID)
	if err != nil {
		p.log.ErrorContext(ctx, "read an instance after its copy", "instance_id", instanceID, "error", err)
		return
	}
	p.report(ctx, inst)
}

// copyStatus answers an instance whose copy has not succeeded: running in
// this process, interrupted (by a restart; recorded failed now), or
// failed.
func (p *Provider) copyStatus(ctx context.Context, instanceID string, db database) (provider.Instance, error) {
	switch {
	case db.want.Copy == copyRunning && p.copies.isRunning(instanceID):
		return provider.Instance{InstanceID: instanceID, Status: provider.StatusProvisioning,
			Message: "copying the data", Outputs: p.outputs(ctx, db)}, nil
	case db.want.Copy == copyRunning:
		d := *db.want
		d.Copy, d.CopyError = copyFailed, "the copy was interrupted: the provider stopped during it"
		if _, err := p.admin.Exec(ctx, "COMMENT ON DATABASE "+ident(db.name)+" IS "+literal(desiredMark(instanceID, d))); err != nil {
			return provider.Instance{}, fmt.Errorf("record an interrupted copy into %s: %w", db.name, err)
		}
		db.want = &d
	}
	return provider.Instance{InstanceID: instanceID, Status: provider.StatusFailed, Message: db.want.CopyError,
		Outputs: p.outputs(ctx, db)}, nil
}

// report sends inst to Steward, when the provider has a reporter.
func (p *Provider) report(ctx context.Context, inst provider.Instance) {
	if p.cfg.Reporter == nil {
		return
	}
	err := p.cfg.Reporter.Report(ctx, provider.StatusReport{InstanceID: inst.InstanceID, Status: inst.Status,
		Message: inst.Message, Outputs: inst.Outputs, ObservedTime: time.Now().UTC()})
	if err != nil {
		// Steward reads the instance back when no report comes (resync).
		p.log.WarnContext(ctx, "report the end of a copy", "instance_id", inst.InstanceID, "error", err)
	}
}

// pgRestore is the pg_restore to run, found as pg_dump is.
func (p *Provider) pgRestore() string {
	if p.cfg.PGDump != "" {
		return filepath.Join(filepath.Dir(p.cfg.PGDump), "pg_restore")
	}
	return pgTool("pg_restore")
}
