// Command jsonschema is the JSON Schema peer of bench/small.sh: it validates
// each FILE against its SCHEMA (mcpc's own export, `mcpc schema KIND
// --format jsonschema`) with santhosh-tekuri/jsonschema, draft 2020-12, as a
// Go program that checks a deployment's files would: compile the schemas,
// read and decode each file, validate it.
//
// usage: jsonschema SCHEMA FILE [SCHEMA FILE ...]
//
// It exits 1 when a file does not validate (the error on stderr), 2 on bad
// usage or an unreadable file.
package main

import (
	"fmt"
	"os"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 || len(args)%2 != 0 {
		fmt.Fprintln(os.Stderr, "usage: jsonschema SCHEMA FILE [SCHEMA FILE ...]")
		os.Exit(2)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	compiled := map[string]*jsonschema.Schema{}
	failed := false
	for i := 0; i < len(args); i += 2 {
		path, file := args[i], args[i+1]
		s, ok := compiled[path]
		if !ok {
			var err error
			if s, err = c.Compile(path); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			compiled[path] = s
		}
		f, err := os.Open(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", file, err)
			os.Exit(2)
		}
		if err := s.Validate(doc); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", file, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}
