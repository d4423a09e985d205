package server

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Command is one parsed line of the text protocol:
//
//	GET key
//	SET key value [ttl-seconds]
//	DEL key
//	KEYS
type Command struct {
	Name  string
	Key   string
	Value string
	TTL   time.Duration
}

var errEmpty = errors.New("empty command")

// Parse turns one protocol line into a Command.
func Parse(line string) (Command, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return Command{}, errEmpty
	}
	cmd := Command{Name: strings.ToUpper(fields[0])}
	args := fields[1:]
	switch cmd.Name {
	case "GET", "DEL":
		if len(args) != 1 {
			return Command{}, fmt.Errorf("%s takes exactly one key", cmd.Name)
		}
		cmd.Key = args[0]
	case "SET":
		if len(args) != 2 && len(args) != 3 {
			return Command{}, errors.New("usage: SET key value [ttl-seconds]")
		}
		cmd.Key, cmd.Value = args[0], args[1]
		if len(args) == 3 {
			seconds, err := strconv.Atoi(args[2])
			if err != nil || seconds < 0 {
				return Command{}, fmt.Errorf("bad ttl %q", args[2])
			}
			cmd.TTL = time.Duration(seconds) * time.Second
		}
	case "KEYS":
		if len(args) != 0 {
			return Command{}, errors.New("KEYS takes no arguments")
		}
	default:
		return Command{}, fmt.Errorf("unknown command %q", fields[0])
	}
	return cmd, nil
}
