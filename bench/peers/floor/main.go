// Command floor is the floor of bench/small.sh: the least a validator of a
// deployment's files does, reading each FILE and decoding it with
// encoding/json into an any. It exits 1 when a file is not JSON.
//
// usage: floor FILE...
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	failed := false
	for _, file := range os.Args[1:] {
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", file, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}
