package server

import (
	"testing"

	"example.com/kvstore/internal/store"
)

func TestProtocolSession(t *testing.T) {
	s := &Server{Store: store.New(nil)}
	steps := []struct{ line, want string }{
		{"SET color blue", "OK"},
		{"get color", "VALUE blue"},
		{"SET size 3 60", "OK"},
		{"KEYS", "KEYS color size"},
		{"DEL color", "DELETED"},
		{"DEL color", "NIL"},
		{"GET color", "NIL"},
	}
	for _, step := range steps {
		got, err := s.reply(step.line)
		if err != nil || got != step.want {
			t.Fatalf("%q -> %q, %v; want %q", step.line, got, err, step.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, line := range []string{"", "GET", "SET k", "SET k v -1", "KEYS x", "FLY away"} {
		if _, err := Parse(line); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", line)
		}
	}
}
