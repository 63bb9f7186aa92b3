// Package paramdoc holds the documentation of every parameter a scenario
// may set: the doc comment of each YAML field of the machines', stacks'
// and workloads' parameter structs, extracted from their Go source
// (Extract) into docs_gen.go by go generate, so that the comments that
// cite each default's source stay the one place it is written. simrun
// params prints them. It imports only the standard library.
package paramdoc

//go:generate go run ./gen

import "reflect"

// Field is one YAML field of a parameter struct.
type Field struct {
	YAML string // the YAML name
	Go   string // the Go field name
	Doc  string // its doc comment, one paragraph
}

// Of returns the fields of struct type t (by package path and name) in
// source order, or nil when the type is not documented here.
func Of(t reflect.Type) []Field {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return table()[t.PkgPath()+"."+t.Name()]
}
