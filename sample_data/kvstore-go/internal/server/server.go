// Package server exposes a Store over a line-based TCP protocol.
package server

import (
	"bufio"
	"fmt"
	"log"
	"net"
	"strings"

	"example.com/kvstore/internal/store"
	"example.com/kvstore/internal/wal"
)

// Server applies protocol commands to a store and logs writes to a WAL.
type Server struct {
	Store *store.Store
	Log   *wal.Log // may be nil for a purely in-memory server
}

// Execute runs one command and returns the reply line (without newline).
func (s *Server) Execute(cmd Command) (string, error) {
	switch cmd.Name {
	case "GET":
		value, ok := s.Store.Get(cmd.Key)
		if !ok {
			return "NIL", nil
		}
		return "VALUE " + string(value), nil
	case "SET":
		if err := s.logWrite(wal.Record{Op: wal.OpSet, Key: cmd.Key, Value: []byte(cmd.Value)}); err != nil {
			return "", err
		}
		s.Store.Set(cmd.Key, []byte(cmd.Value), cmd.TTL)
		return "OK", nil
	case "DEL":
		if err := s.logWrite(wal.Record{Op: wal.OpDelete, Key: cmd.Key}); err != nil {
			return "", err
		}
		if s.Store.Delete(cmd.Key) {
			return "DELETED", nil
		}
		return "NIL", nil
	case "KEYS":
		return "KEYS " + strings.Join(s.Store.Keys(), " "), nil
	}
	return "", fmt.Errorf("unhandled command %q", cmd.Name)
}

func (s *Server) logWrite(r wal.Record) error {
	if s.Log == nil {
		return nil
	}
	return s.Log.Append(r)
}

// Serve accepts connections until the listener is closed.
func (s *Server) Serve(listener net.Listener) error {
	for {
		conn, err := listener.Accept()
		if err != nil {
			return err
		}
		go s.handle(conn)
	}
}

func (s *Server) handle(conn net.Conn) {
	defer conn.Close()
	scanner := bufio.NewScanner(conn)
	for scanner.Scan() {
		reply, err := s.reply(scanner.Text())
		if err != nil {
			reply = "ERR " + err.Error()
		}
		if _, err := fmt.Fprintln(conn, reply); err != nil {
			log.Printf("kvstore: write to %s: %v", conn.RemoteAddr(), err)
			return
		}
	}
}

func (s *Server) reply(line string) (string, error) {
	cmd, err := Parse(line)
	if err != nil {
		return "", err
	}
	return s.Execute(cmd)
}
