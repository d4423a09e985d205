package store

import (
	"reflect"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestSetGetDelete(t *testing.T) {
	s := New(nil)
	s.Set("a", []byte("1"), 0)
	if got, ok := s.Get("a"); !ok || string(got) != "1" {
		t.Fatalf("Get(a) = %q, %v", got, ok)
	}
	if !s.Delete("a") {
		t.Fatal("Delete(a) reported missing key")
	}
	if _, ok := s.Get("a"); ok {
		t.Fatal("key still present after Delete")
	}
}

func TestExpiry(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	s := New(clock.now)
	s.Set("short", []byte("x"), time.Second)
	s.Set("forever", []byte("y"), 0)

	clock.t = clock.t.Add(2 * time.Second)
	if _, ok := s.Get("short"); ok {
		t.Fatal("expired key is still visible")
	}
	if keys := s.Keys(); !reflect.DeepEqual(keys, []string{"forever"}) {
		t.Fatalf("Keys() = %v", keys)
	}
	if n := s.Sweep(); n != 1 {
		t.Fatalf("Sweep() removed %d entries, want 1", n)
	}
}

func TestSetCopiesValue(t *testing.T) {
	s := New(nil)
	buf := []byte("abc")
	s.Set("k", buf, 0)
	buf[0] = 'z'
	if got, _ := s.Get("k"); string(got) != "abc" {
		t.Fatalf("stored value changed with caller's buffer: %q", got)
	}
}
