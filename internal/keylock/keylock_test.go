package keylock

import (
	"sync"
	"sync/atomic"
	"testing"
)

// Holders of one key never overlap; the map forgets a key once released.
func TestLocks_OneHolderPerKey(t *testing.T) {
	t.Parallel()
	var l Locks
	var inside, overlaps atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			unlock := l.Lock("a")
			if inside.Add(1) > 1 {
				overlaps.Add(1)
			}
			inside.Add(-1)
			unlock()
		})
	}
	wg.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d holders of key a overlapped", n)
	}
	if l.Held("a") {
		t.Error("key a is still held after every holder released it")
	}
	unlockA := l.Lock("a")
	unlockB := l.Lock("b") // another key does not wait for a
	if !l.Held("a") || !l.Held("b") {
		t.Error("Held is false for a held key")
	}
	unlockB()
	unlockA()
}
