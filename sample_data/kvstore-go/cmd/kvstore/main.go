// Command kvstore runs the key-value server.
//
//	kvstore -addr 127.0.0.1:7070 -wal data/kv.wal
package main

import (
	"flag"
	"log"
	"net"
	"time"

	"example.com/kvstore/internal/server"
	"example.com/kvstore/internal/store"
	"example.com/kvstore/internal/wal"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7070", "address to listen on")
	walPath := flag.String("wal", "kv.wal", "write-ahead log file")
	sweep := flag.Duration("sweep", time.Minute, "how often to drop expired keys")
	flag.Parse()

	st := store.New(nil)
	n, err := wal.Replay(*walPath, func(r wal.Record) {
		switch r.Op {
		case wal.OpSet:
			st.Set(r.Key, r.Value, 0)
		case wal.OpDelete:
			st.Delete(r.Key)
		}
	})
	if err != nil {
		log.Fatalf("kvstore: replay: %v", err)
	}
	log.Printf("kvstore: replayed %d records from %s", n, *walPath)

	wl, err := wal.Open(*walPath)
	if err != nil {
		log.Fatal(err)
	}
	defer wl.Close()

	go func() {
		for range time.Tick(*sweep) {
			if removed := st.Sweep(); removed > 0 {
				log.Printf("kvstore: swept %d expired keys", removed)
			}
		}
	}()

	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("kvstore: listening on %s", listener.Addr())
	srv := &server.Server{Store: st, Log: wl}
	log.Fatal(srv.Serve(listener))
}
