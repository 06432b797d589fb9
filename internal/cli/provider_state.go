package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// providerState is where a provider keeps what must outlive it (the
// PostgreSQL provider's secret key, the process provider's work directory)
// when its command line names no place: a directory of the user's state
// directory, never the current one, where `git add -A` would commit it.
type providerState struct {
	// provider names the directory: $XDG_STATE_HOME/steward/<provider>.
	provider string
	// legacy is what earlier versions kept in the current directory, and
	// what says what it is, for the message that refuses to start beside it.
	legacy, what string
	// flag is the flag that names the state's path instead, for that
	// message.
	flag string
}

// defaultDir is $XDG_STATE_HOME/steward/<provider>, or, without an
// absolute XDG_STATE_HOME, ~/.local/state/steward/<provider>.
func (s providerState) defaultDir() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "steward", s.provider), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("the provider's state directory: %w; give --data-dir", err)
	}
	return filepath.Join(home, ".local", "state", "steward", s.provider), nil
}

// path is where the state is kept when its flag (flag) names no path: file
// in dir (the directory itself when file is ""), dir being the default
// one when "". It refuses to start beside what an earlier version left in
// the current directory, and creates dir, 0700, if it is missing.
func (s providerState) path(dir, file string) (string, error) {
	if dir == "" {
		var err error
		if dir, err = s.defaultDir(); err != nil {
			return "", err
		}
	}
	path := dir
	if file != "" {
		path = filepath.Join(dir, file)
	}
	if err := s.checkLegacy(path); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("the provider's data directory: %w", err)
	}
	return path, nil
}

// checkLegacy refuses to start on path while what an earlier version kept
// in the current directory is there: starting without it would lose what
// it holds (a new key derives other passwords; a new work directory knows
// none of the instances), and moving it could take it from under another
// process. The message says where it now belongs.
func (s providerState) checkLegacy(path string) error {
	old, err := os.Stat(s.legacy)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s in the current directory: %w", s.legacy, err)
	}
	cur, err := os.Stat(path)
	switch {
	case err == nil && os.SameFile(old, cur):
		return nil
	case err == nil:
		return fmt.Errorf("%s in the current directory is %s, kept there by an earlier version, and %s exists too: "+
			"keep the one in use, at %s, and remove the other, or name the one to use with %s",
			s.legacy, s.what, path, path, s.flag)
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", path, err)
	}
	return fmt.Errorf("%s in the current directory is %s, kept there by an earlier version; it now belongs in %s: "+
		"move it there (mkdir -p -m 0700 %s && mv %s %s), or name it with %s %s",
		s.legacy, s.what, path, filepath.Dir(path), s.legacy, path, s.flag, s.legacy)
}

// stateDirHint is the default directory, as a help text says it.
func stateDirHint(s providerState) string {
	return "$XDG_STATE_HOME/steward/" + s.provider + ", else ~/.local/state/steward/" + s.provider
}
