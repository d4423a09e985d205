// Package store is an in-memory key-value map with optional expiry.
package store

import (
	"sort"
	"sync"
	"time"
)

// Entry is one stored value and the moment it stops being visible.
type Entry struct {
	Value     []byte
	ExpiresAt time.Time // zero means "never"
}

func (e Entry) expired(now time.Time) bool {
	return !e.ExpiresAt.IsZero() && !now.Before(e.ExpiresAt)
}

// Store is safe for concurrent use.
type Store struct {
	mu      sync.RWMutex
	entries map[string]Entry
	now     func() time.Time
}

// New returns an empty store. clock may be nil to use the wall clock.
func New(clock func() time.Time) *Store {
	if clock == nil {
		clock = time.Now
	}
	return &Store{entries: make(map[string]Entry), now: clock}
}

// Get returns the value of key and whether it was present and unexpired.
func (s *Store) Get(key string) ([]byte, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	entry, ok := s.entries[key]
	if !ok || entry.expired(s.now()) {
		return nil, false
	}
	return entry.Value, true
}

// Set stores value under key. A ttl of zero keeps it forever.
func (s *Store) Set(key string, value []byte, ttl time.Duration) {
	entry := Entry{Value: append([]byte(nil), value...)}
	if ttl > 0 {
		entry.ExpiresAt = s.now().Add(ttl)
	}
	s.mu.Lock()
	s.entries[key] = entry
	s.mu.Unlock()
}

// Delete removes key and reports whether it existed.
func (s *Store) Delete(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.entries[key]
	delete(s.entries, key)
	return ok
}

// Keys lists the live keys in sorted order.
func (s *Store) Keys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := s.now()
	keys := make([]string, 0, len(s.entries))
	for key, entry := range s.entries {
		if !entry.expired(now) {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return keys
}

// Sweep drops expired entries and returns how many it removed.
func (s *Store) Sweep() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	removed := 0
	for key, entry := range s.entries {
		if entry.expired(now) {
			delete(s.entries, key)
			removed++
		}
	}
	return removed
}
