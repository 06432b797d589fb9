// Package keylock serialises work by key within a process: a provider's
// calls on one instance run one at a time, calls on different instances
// run at once.
package keylock

import "sync"

// Locks is a mutex per key, kept only while someone holds or waits for
// it. The zero value is ready to use.
type Locks struct {
	mu    sync.Mutex
	locks map[string]*lock
}

type lock struct {
	sync.Mutex
	users int
}

// Lock waits for key's mutex and returns the function that releases it.
func (l *Locks) Lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = make(map[string]*lock)
	}
	m := l.locks[key]
	if m == nil {
		m = &lock{}
		l.locks[key] = m
	}
	m.users++
	l.mu.Unlock()
	m.Lock()
	return func() {
		m.Unlock()
		l.mu.Lock()
		if m.users--; m.users == 0 {
			delete(l.locks, key)
		}
		l.mu.Unlock()
	}
}

// Held reports whether someone holds or waits for key's mutex.
func (l *Locks) Held(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.locks[key] != nil
}
